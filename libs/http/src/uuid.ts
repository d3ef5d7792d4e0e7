import { errors } from '@herald/errors';
import { z } from 'zod';

// Any 8-4-4-4-12 hex string, whatever its version or variant bits: an id that cannot exist is
// then simply not found.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A uuid path parameter as the OpenAPI document states it: exactly what `uuidParam` takes (zod's
 * `uuid()` would refuse the version and variant bits this lets through).
 */
export const uuidParameter = z.guid();

/** Whether the value has the shape of a uuid (either case). */
export const isUuid = (value: string): boolean => UUID.test(value);

/**
 * A uuid path parameter, lower-cased. Anything else names nothing: a 404 with the given message
 * (e.g. `no such tenant`), never a 400 or a 500 from the database.
 */
export function uuidParam(raw: string | undefined, notFoundMessage: string): string {
  if (raw === undefined || !isUuid(raw)) throw errors.notFound(notFoundMessage);
  return raw.toLowerCase();
}
