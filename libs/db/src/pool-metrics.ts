import { metrics, type BatchObservableResult, type Observable } from '@opentelemetry/api';
import type pg from 'pg';

/**
 * The connection pools of this process, as the OpenTelemetry semantic conventions name them
 * (`db.client.connection.*`, attribute `db.client.connection.pool.name`: the pool's application
 * name, such as `herald-events`):
 *   db.client.connection.count             {connection}  db.client.connection.state = used | idle
 *   db.client.connection.max               {connection}
 *   db.client.connection.pending_requests  {request}     callers waiting for a connection
 * Observed when metrics are collected; a pool that has ended reports 0 once, then is forgotten.
 */
interface ObservedPool {
  name: string;
  pool: pg.Pool;
  max: number;
}

interface PoolInstruments {
  count: Observable;
  max: Observable;
  pending: Observable;
}

const pools = new Set<ObservedPool>();
let registered = false;

function observe(result: BatchObservableResult, instruments: PoolInstruments): void {
  for (const observed of pools) {
    const { name, pool } = observed;
    // An ended pool is reported once more with nothing in it (the SDK keeps a series' last
    // value), then forgotten.
    const ended = pool.ended;
    if (ended) pools.delete(observed);
    const pool_ = { 'db.client.connection.pool.name': name };
    const idle = ended ? 0 : pool.idleCount;
    const used = ended ? 0 : Math.max(pool.totalCount - idle, 0);
    const max = ended ? 0 : observed.max;
    result.observe(instruments.count, used, { ...pool_, 'db.client.connection.state': 'used' });
    result.observe(instruments.count, idle, { ...pool_, 'db.client.connection.state': 'idle' });
    result.observe(instruments.max, max, pool_);
    result.observe(instruments.pending, ended ? 0 : pool.waitingCount, pool_);
  }
}

function register(): void {
  // The meter provider is registered by @herald/telemetry/register before any pool exists;
  // without one these are the API's no-ops.
  const meter = metrics.getMeter('@herald/db');
  const instruments: PoolInstruments = {
    count: meter.createObservableUpDownCounter('db.client.connection.count', {
      unit: '{connection}',
      description: 'Connections of the pool, by state: used (checked out) or idle',
    }),
    max: meter.createObservableUpDownCounter('db.client.connection.max', {
      unit: '{connection}',
      description: 'The most connections the pool may open',
    }),
    pending: meter.createObservableUpDownCounter('db.client.connection.pending_requests', {
      unit: '{request}',
      description: 'Callers waiting for a connection of the pool',
    }),
  };
  meter.addBatchObservableCallback(
    (result) => observe(result, instruments),
    [instruments.count, instruments.max, instruments.pending],
  );
  registered = true;
}

/** Reports the pool in the metrics above until it ends. */
export function observePool(name: string, pool: pg.Pool, max: number): void {
  if (!registered) register();
  pools.add({ name, pool, max });
}
