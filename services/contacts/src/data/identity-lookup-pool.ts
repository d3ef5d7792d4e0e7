import { createPool, type DatabaseConnection, type Pool } from '@herald/db';

/**
 * The identity lookups' own connections, for the events service's resolve calls. Their
 * statements (contactIdsBy… and existingOrganizations) are named and take arrays: on this pool
 * (`planOnce`) each is planned once per connection, where left to choose PostgreSQL plans it
 * again for every array it is given. And the lookups never wait behind upserts for a connection.
 */
export function createIdentityLookupPool(connection: DatabaseConnection, max: number): Pool {
  return createPool({
    ...connection,
    applicationName: 'herald-contacts-identities',
    max,
    planOnce: true,
  });
}
