// The scopes a key can have, as @herald/auth defines them (a test checks they agree); the type
// comes from the operator API's own description of a new key.
import type { CreateKeyBody } from './types.js';

export type Scope = NonNullable<CreateKeyBody['scopes']>[number];

export const SCOPES: readonly Scope[] = [
  'contacts:read',
  'contacts:write',
  'contacts:export',
  'contacts:erase',
  'events:write',
];

/** A publishable key runs in browsers: it may only record Events. */
export const PUBLISHABLE_SCOPES: readonly Scope[] = ['events:write'];
