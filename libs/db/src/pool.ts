import type { ConnectionOptions } from 'node:tls';
import {
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type Link,
  type Span,
  type SpanOptions,
} from '@opentelemetry/api';
import pg from 'pg';
import { observePool } from './pool-metrics.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

export interface PoolOptions {
  connectionString: string;
  /**
   * TLS: false for plain, or the options of the TLS connection (databaseConnection makes both
   * from a process's variables). Unset, node-postgres reads the URL's own parameters.
   */
  ssl?: false | ConnectionOptions;
  /** Shown in pg_stat_activity, so an operator sees which service holds a connection. */
  applicationName: string;
  max?: number;
  /** A request waiting longer than this for a connection fails fast (503) instead of hanging. */
  connectionTimeoutMillis?: number;
  statementTimeoutMillis?: number;
  /**
   * Plan each prepared statement once per connection, for any values (PostgreSQL's
   * `plan_cache_mode = force_generic_plan`), statements inside PL/pgSQL functions included.
   * Left to itself PostgreSQL plans a named statement again for every call's values whenever
   * those plans look cheaper than the one for any values, which a statement given arrays to
   * `unnest` does for ever: it then spends longer planning than running. Only for a pool whose
   * statements find rows by keys, where the values cannot change the best plan.
   */
  planOnce?: boolean;
}

/**
 * A pool whose connections are reported in the db.client.connection.* metrics, named by its
 * application name (docs/metrics.md).
 */
export function createPool(options: PoolOptions): Pool {
  const max = options.max ?? 10;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    ...(options.ssl === undefined ? {} : { ssl: options.ssl }),
    application_name: options.applicationName,
    max,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5_000,
    statement_timeout: options.statementTimeoutMillis ?? 10_000,
    ...(options.planOnce ? { options: '-c plan_cache_mode=force_generic_plan' } : {}),
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (database restart) must not crash the process;
  // the pool drops it and the next query reconnects.
  pool.on('error', () => {});
  // Nor may a checked-out one (a transaction between two queries, e.g. a relay waiting for
  // Kafka): the pool listens only to idle clients, and an 'error' nobody listens to ends the
  // process. Its queries fail anyway, and withTransaction then releases it as broken.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  // A connection handed back without an error: PostgreSQL answered it (pingDatabase).
  pool.on('release', (err) => {
    if (!err) lastAnswered.set(pool, performance.now());
  });
  observePool(options.applicationName, pool, max);
  return pool;
}

const lastAnswered = new WeakMap<Pool, number>();
/** Within this long of the pool's last answer, the database counts as reachable unasked. */
const RECENT_ANSWER_MS = 2_000;

/**
 * For /readyz: resolves when PostgreSQL answered this pool lately, and otherwise asks it. A
 * busy pool is not an unready one: under load a `select 1` waits for a free connection behind
 * the requests and would miss the probe's deadline, taking a healthy pod out of its Service.
 */
export async function pingDatabase(pool: Pool): Promise<void> {
  const answeredAt = lastAnswered.get(pool);
  if (answeredAt !== undefined && performance.now() - answeredAt < RECENT_ANSWER_MS) return;
  await pool.query('select 1');
}

/** Anything that runs a query: a transaction's client or the pool. */
export type Queryable = Pool | PoolClient;

/**
 * SQLSTATEs after which a whole transaction can simply run again: a deadlock or a serialization
 * failure (PostgreSQL aborted it, nothing of it stays), and a unique violation where a
 * concurrent insert won a race the retry then sees.
 */
export const RETRYABLE = {
  deadlock: '40P01',
  serializationFailure: '40001',
  uniqueViolation: '23505',
} as const;

export type RetryableFailure = keyof typeof RETRYABLE;

export interface RetryOptions {
  /** The failures after which the whole work runs again; none unless named. */
  retryOn?: readonly RetryableFailure[];
  /** How many times it runs at most, the first included. Default 3. */
  attempts?: number;
  /**
   * The sampled spans whose work the transaction does, when it does that of several (a batch
   * written for concurrent requests): its `db.transaction` span links to each. Inside a sampled
   * trace the span is a child of the active span, as always; outside one, given links, it is a
   * root span of its own, which a parent-based sampler keeps when a link is sampled
   * (@herald/telemetry). Unset or empty: no span outside a sampled trace.
   */
  links?: Link[] | undefined;
}

/**
 * Runs `work` again when it failed with one of the `retryOn` failures, at most `attempts` times;
 * the last failure is thrown. The work must be one transaction (a single statement is one), so
 * that nothing of a failed attempt stays.
 */
export async function withRetries<T>(
  work: () => Promise<T>,
  options: Omit<RetryOptions, 'links'> = {},
): Promise<T> {
  const retryable = new Set<string>((options.retryOn ?? []).map((name) => RETRYABLE[name]));
  const attempts = options.attempts ?? 3;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      if (attempt >= attempts || typeof code !== 'string' || !retryable.has(code)) throw err;
    }
  }
}

/**
 * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. With
 * `retryOn`, a transaction that failed with one of those failures runs again from the start
 * (on a new connection), at most `attempts` times; the last failure is thrown.
 */
export function withTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  return withRetries(() => traced((span) => runOnce(pool, fn, span), options.links), options);
}

/**
 * Runs `fn`, whose one statement is its own transaction (a call of a function that writes), as
 * withTransaction runs a transaction but without `begin` and `commit`: one round trip, the same
 * span, the same retries.
 */
export function withStatement<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  return withRetries(() => traced((span) => runAlone(pool, fn, span), options.links), options);
}

const tracer = trace.getTracer('@herald/db');

/**
 * A transaction inside a sampled trace is a span of it (`db.transaction`, from the wait for a
 * connection to the commit), so a request's trace shows its write even with the pg
 * instrumentation off; statements and values are never recorded. Outside one, nothing is
 * created (background loops begin no trace of their own), unless it works for sampled spans
 * elsewhere (`links`): then it is a root span linked to them.
 */
function traced<T>(run: (span?: Span) => Promise<T>, links?: Link[]): Promise<T> {
  const inTrace = trace.getSpan(context.active())?.isRecording() === true;
  if (!inTrace && !links?.length) return run();
  const options: SpanOptions = {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system.name': 'postgresql' },
  };
  if (links?.length) {
    options.links = links;
    // Not under whatever unsampled span is active: its decision is not the linked spans'.
    if (!inTrace) options.root = true;
  }
  return tracer.startActiveSpan('db.transaction', options, async (span) => {
    try {
      return await run(span);
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (typeof code === 'string') span.setAttribute('db.response.status_code', code);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A connection from the pool, its database named on the span. */
async function connect(pool: Pool, span?: Span): Promise<PoolClient> {
  const client = await pool.connect();
  const database = (client as { database?: unknown }).database;
  if (span && typeof database === 'string') span.setAttribute('db.namespace', database);
  return client;
}

async function runOnce<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  span?: Span,
): Promise<T> {
  const client = await connect(pool, span);
  // A connection whose rollback failed is destroyed rather than handed to the next caller.
  let broken: Error | undefined;
  try {
    await client.query('begin');
    const result = await fn(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

// A failed statement leaves the connection usable; the pool drops one that is not.
async function runAlone<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  span?: Span,
): Promise<T> {
  const client = await connect(pool, span);
  try {
    return await fn(client);
  } finally {
    client.release();
  }
}

/** A unique constraint was violated (SQLSTATE 23505), optionally a named one. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string } | null;
  return (
    e?.code === RETRYABLE.uniqueViolation &&
    (constraint === undefined || e.constraint === constraint)
  );
}
