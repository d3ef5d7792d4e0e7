// A list's paging, the same on every operator list: `limit` with a default and a ceiling, and
// `cursor`, the opaque `nextCursor` of the previous page (null on the last page). A cursor is
// base64url text of the list's own making, so that its form can change without callers noticing.
import { errors } from '@herald/errors';
import { z } from 'zod';

/** The `limit` and `cursor` query parameters of a list of `noun`. */
export function pageQuery(noun: string, page: { default: number; max: number }) {
  return {
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(page.max)
      .default(page.default)
      .describe(`how many ${noun} per page, 1 to ${page.max} (default ${page.default})`),
    cursor: z
      .string()
      // a cursor of an id of 255 characters of up to 4 bytes each, in base64url: 1,360
      .max(2048)
      .optional()
      .describe("the previous page's `nextCursor`, for the page after it"),
  };
}

/** The `nextCursor` of a page's answer. */
export const nextCursor = z
  .string()
  .nullable()
  .describe('pass as `cursor` for the next page; `null`: this is the last page');

/** The query parameters of an operation, as its manifest documents them: each optional. */
export function optionalQueryParameters(shape: Record<string, z.ZodType>) {
  return Object.fromEntries(
    Object.entries(shape).map(([name, schema]) => [
      name,
      { description: schema.description ?? name, schema, required: false },
    ]),
  );
}

export const encodeCursor = (text: string): string => Buffer.from(text).toString('base64url');

/**
 * The text of a cursor, when `pattern` matches it and `valid` accepts the match; otherwise a 400
 * naming query.cursor, as for any cursor the list did not give.
 */
export function decodeCursor(
  cursor: string,
  pattern: RegExp,
  valid: (match: RegExpExecArray) => boolean = () => true,
): RegExpExecArray {
  const match = pattern.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || !valid(match)) {
    throw errors.validation('query.cursor: not a cursor of this list (pass nextCursor as given)');
  }
  return match;
}
