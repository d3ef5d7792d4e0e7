// Text that is not well-formed Unicode: a string holding a surrogate (U+D800 to U+DFFF) that is
// not one half of a pair. JSON can write one (`"\ud800"`), JavaScript holds it, but UTF-8 cannot
// encode it: stored as text it becomes U+FFFD, so distinct values would be stored as one, and
// inside stored JSON text it stays an escape that PostgreSQL's json type refuses.

// ES2024's String#isWellFormed (Node 20 and later); the ES2023 lib the packages compile against
// does not declare it.
type WellFormedCheck = string & { isWellFormed(): boolean };

/** Whether the string holds no unpaired surrogate. */
export const isWellFormed = (s: string): boolean => (s as WellFormedCheck).isWellFormed();

/** The message of a string that is not well-formed. */
export const NOT_WELL_FORMED = 'must be well-formed Unicode, without an unpaired surrogate';

/** The message of an object with a key that is not well-formed. */
export const KEY_NOT_WELL_FORMED =
  'has a key that is not well-formed Unicode: it holds an unpaired surrogate';

/** The message of a place deep inside which a string or key is not well-formed. */
export const HOLDS_NOT_WELL_FORMED =
  'holds a string or key that is not well-formed Unicode: an unpaired surrogate';

/** Where a value holds text that is not well-formed, and whether it is a key of that place. */
export interface IllFormedText {
  /** From the value's root: object keys and array indexes. */
  path: PropertyKey[];
  /** The object at `path` has the key; otherwise the string at `path` is the text. */
  key: boolean;
}

const isObject = (value: unknown): value is object => value !== null && typeof value === 'object';

/**
 * The first string or object key, in document order, of a parsed JSON value that is not
 * well-formed; undefined when there is none. Iterative: a body may nest as deep as its bytes
 * allow, deeper than the call stack.
 */
export function illFormedText(value: unknown): IllFormedText | undefined {
  if (typeof value === 'string') return isWellFormed(value) ? undefined : { path: [], key: false };
  if (!isObject(value)) return undefined;
  // One frame per open array or object: its keys (undefined for an array) and the next index.
  const frames: { node: object; keys: string[] | undefined; next: number }[] = [];
  const open = (node: object) =>
    frames.push({ node, keys: Array.isArray(node) ? undefined : Object.keys(node), next: 0 });
  const pathTo = (depth: number): PropertyKey[] =>
    frames.slice(0, depth).map((f) => (f.keys ? f.keys[f.next - 1]! : f.next - 1));
  open(value);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]!;
    const { node, keys } = frame;
    const size = keys ? keys.length : (node as unknown[]).length;
    if (frame.next === size) {
      frames.pop();
      continue;
    }
    const index = frame.next;
    frame.next += 1;
    let child: unknown;
    if (keys) {
      const key = keys[index]!;
      if (!isWellFormed(key)) return { path: pathTo(frames.length - 1), key: true };
      child = (node as Record<string, unknown>)[key];
    } else {
      child = (node as unknown[])[index];
    }
    if (typeof child === 'string') {
      if (!isWellFormed(child)) return { path: pathTo(frames.length), key: false };
    } else if (isObject(child)) {
      open(child);
    }
  }
  return undefined;
}

const BACKSLASH_U = Buffer.from('\\u');

/** Whether the byte is a hex digit 8 to F, either case: the second of a surrogate's four. */
function isSurrogateNibble(byte: number | undefined): boolean {
  if (byte === undefined) return false;
  const lower = byte | 0x20;
  return byte === 0x38 || byte === 0x39 || (lower >= 0x61 && lower <= 0x66);
}

/**
 * Whether UTF-8 JSON text may write a surrogate: it holds a `\uD800` to `\uDFFF` escape (or text
 * that reads like one, such as an escaped backslash before `ud800`). Valid UTF-8 encodes no
 * surrogate, so without one no parsed string or key holds one, and nothing needs walking: the
 * search runs over the raw bytes, far faster than a walk over the parsed value.
 */
export function mayEscapeSurrogate(json: Buffer): boolean {
  for (let at = json.indexOf(BACKSLASH_U); at !== -1; at = json.indexOf(BACKSLASH_U, at + 2)) {
    const d = json[at + 2];
    if ((d === 0x64 || d === 0x44) && isSurrogateNibble(json[at + 3])) return true;
  }
  return false;
}
