/** PostgreSQL cannot store U+0000 in text: a value holding it is a 400, never a 5xx. */
export const storable = (s: string): boolean => !s.includes('\u0000');

/** The message of a value that fails `storable`. */
export const NOT_STORABLE = 'must not contain U+0000';

// The same rules as JSON Schema patterns, for the OpenAPI document (the refines enforce them):
// a client generated from the document, or a fuzzer, then never sends a value we refuse.

/** A string without U+0000: `storable`. */
export const STORABLE_PATTERN = '^[^\\u0000]*$';

/** A string without control characters (C0, DEL, C1). */
export const NO_CONTROL_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';

/** Where the document defines any JSON value whose strings and keys are `storable`. */
export const STORABLE_JSON_VALUE_REF = '#/components/schemas/StorableJsonValue';
