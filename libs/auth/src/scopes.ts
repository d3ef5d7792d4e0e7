/** The complete list of Scopes (docs/api-reference.md#scopes). */
export const SCOPES = [
  'contacts:read',
  'contacts:write',
  'contacts:export',
  'contacts:erase',
  'events:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export const DEFAULT_SECRET_KEY_SCOPES: readonly Scope[] = ['events:write', 'contacts:write'];
export const PUBLISHABLE_KEY_SCOPES: readonly Scope[] = ['events:write'];
