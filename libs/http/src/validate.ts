import type { z } from 'zod';
import { errors } from '@herald/errors';

/** Renders a zod issue path as the caller wrote it: `scopes[1]`, `events[3].occurredAt`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) =>
      typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`,
    )
    .join('');
}

/**
 * Parses input at the edge. A mismatch is a 400 validation_error whose message names the
 * first offending field, so the caller can fix the request.
 */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  what = 'body',
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const where = issue.path.length > 0 ? `${what}.${formatPath(issue.path)}` : what;
  throw errors.validation(`${where}: ${issue.message}`, result.error);
}
