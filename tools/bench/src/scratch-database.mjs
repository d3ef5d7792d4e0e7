// A database of a benchmark's own on the local stack's PostgreSQL: created empty, handed to
// `use` with `connections` clients connected to it, and dropped afterwards whatever happened.
import { databaseUrl } from '@herald/stack/index.mjs';

/**
 * @template T
 * @param {string} name
 * @param {number} connections
 * @param {(db: { pg: typeof import('pg').default, clients: import('pg').Client[],
 *   url: string }) => Promise<T>} use
 * @returns {Promise<T>}
 */
export async function withScratchDatabase(name, connections, use) {
  const { default: pg } = await import('pg');
  const admin = new pg.Client({ connectionString: databaseUrl('postgres') });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  // One client per connection, not a pool: Client#end resolves once its connection is closed,
  // so the database can be dropped after them without terminating a connection still closing.
  const clients = Array.from(
    { length: connections },
    () => new pg.Client({ connectionString: databaseUrl(name) }),
  );
  try {
    await Promise.all(clients.map((c) => c.connect()));
    return await use({ pg, clients, url: databaseUrl(name) });
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
