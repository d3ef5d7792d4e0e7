/** PostgreSQL cannot store U+0000 in text: a value holding it is a 400, never a 5xx. */
export const storable = (s: string): boolean => !s.includes('\u0000');

/** The message of a value that fails `storable`. */
export const NOT_STORABLE = 'must not contain U+0000';
