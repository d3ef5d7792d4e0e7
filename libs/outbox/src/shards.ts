import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Pool } from '@herald/db';

/**
 * The outbox's rows fall into shards by their key (`shardOf` in SQL: every row of one key is in
 * one shard, so one key keeps its order), and the relays that are alive share the shards between
 * them. Sharing is for throughput only: what keeps two relays from publishing the same rows is
 * the per-shard advisory lock each batch holds until it has deleted what it sent (publish.ts), so
 * a relay that sees the others late, or not at all, costs a wasted poll, never a duplicate.
 */

/** Most shards an outbox can have: one per relay replica at most, beyond it replicas wait. */
export const MAX_OUTBOX_SHARDS = 1024;

/**
 * The shard of a row with `key` among `$n` shards, in SQL. `hashtext` is PostgreSQL's own text
 * hash: it only has to be the same for every relay of one database, never stored.
 */
export function shardOfSql(key: string, shardCount: string): string {
  return `((hashtext(${key}) & 2147483647) % ${shardCount})`;
}

/** A relay that announced itself: its id and the shard count it was configured with. */
export interface RelayMember {
  relayId: string;
  shardCount: number;
}

/**
 * The shards `me` publishes: the live relays in id order take shard s when s mod their number is
 * their place, which parts the shards evenly (within one) and is the same answer in every relay
 * that sees the same members. None while a live relay counts the shards differently: the rows
 * would fall into other shards in each, and two relays could publish one key at once.
 */
export function assignShards(
  members: readonly RelayMember[],
  me: RelayMember,
): { shards: number[]; disagreeing: string[] } {
  const disagreeing = members
    .filter((m) => m.relayId !== me.relayId && m.shardCount !== me.shardCount)
    .map((m) => m.relayId);
  if (disagreeing.length > 0) return { shards: [], disagreeing };
  const ids = [...new Set([me.relayId, ...members.map((m) => m.relayId)])].sort();
  const place = ids.indexOf(me.relayId);
  const shards: number[] = [];
  for (let shard = place; shard < me.shardCount; shard += ids.length) shards.push(shard);
  return { shards, disagreeing };
}

/** An id that tells the relays apart: the host (a pod's name) and the process, made unique. */
export function newRelayId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export interface ShardMembershipOptions {
  pool: Pool;
  logger: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
  /** The outbox's name: relays share the shards with the relays of the same name. */
  name: string;
  relayId: string;
  shardCount: number;
  /** How often the relay says it is alive and looks at the others. */
  heartbeatMs: number;
  /** A relay not heard from for this long is taken for dead, and its shards shared out. */
  leaseMs: number;
}

export interface ShardMembership {
  /** The shards this relay publishes now (none before the first heartbeat got through). */
  shards(): readonly number[];
  /** Whether a heartbeat got through since the start (or the last stop): the share is known. */
  known(): boolean;
  /** One heartbeat: says this relay is alive, then shares the shards among the live ones. */
  beat(): Promise<void>;
  /** Beats every `heartbeatMs` until `stop`; failures are logged and tried at the next. */
  start(): void;
  /** Stops beating and removes this relay, so that the others take its shards at their next. */
  stop(): Promise<void>;
}

/**
 * The relays' heartbeats in the `outbox_relays` table (OUTBOX_RELAYS_TABLE_SQL). Each beat
 * writes this relay's row with PostgreSQL's clock (so no relay's clock matters), deletes the
 * rows of relays not heard from within the lease, and reads the live ones.
 */
export function createShardMembership(options: ShardMembershipOptions): ShardMembership {
  const { pool, logger, name, relayId, shardCount, heartbeatMs, leaseMs } = options;
  let shards: number[] = [];
  let known = false;
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let lastWarning = '';
  let failingSince: number | undefined;
  let lastFailureLog = 0;

  async function beatOnce(): Promise<void> {
    // Statements of one CTE see one snapshot: the select does not see this relay's own write, nor
    // the deletion, so it filters on the lease itself and this relay is added below.
    const { rows } = await pool.query<{ relay_id: string; shard_count: number }>(
      `with upsert as (
         insert into outbox_relays (outbox, relay_id, shard_count, shards, seen_at)
         values ($5, $1, $2, $3::int[], clock_timestamp())
         on conflict (outbox, relay_id) do update
           set shard_count = excluded.shard_count, shards = excluded.shards,
               seen_at = excluded.seen_at
       ), expired as (
         delete from outbox_relays
         where outbox = $5 and relay_id <> $1
           and seen_at < clock_timestamp() - $4 * interval '1 millisecond'
       )
       select relay_id, shard_count from outbox_relays
       where outbox = $5 and relay_id <> $1
         and seen_at >= clock_timestamp() - $4 * interval '1 millisecond'`,
      [relayId, shardCount, shards, leaseMs, name],
    );
    const members = rows.map((r) => ({ relayId: r.relay_id, shardCount: r.shard_count }));
    const assigned = assignShards(members, { relayId, shardCount });
    if (assigned.disagreeing.length > 0) {
      const warning = assigned.disagreeing.join(',');
      if (warning !== lastWarning) {
        logger.warn(
          { outbox: name, shardCount, disagreeing: assigned.disagreeing },
          'outbox relays count the shards differently; this relay publishes nothing until they agree',
        );
      }
      lastWarning = warning;
    } else {
      lastWarning = '';
    }
    const changed = assigned.shards.join() !== shards.join();
    shards = assigned.shards;
    known = true;
    // The row shows the share this relay works on from now, not from its next heartbeat.
    if (changed) {
      await pool.query(
        'update outbox_relays set shards = $3::int[] where outbox = $1 and relay_id = $2',
        [name, relayId, shards],
      );
    }
  }

  function beat(): Promise<void> {
    beating ??= beatOnce().finally(() => {
      beating = undefined;
    });
    return beating;
  }

  function schedule(delayMs: number): void {
    timer = setTimeout(() => {
      beat()
        .then(() => {
          if (failingSince === undefined) return;
          logger.info(
            { outbox: name, downForMs: Date.now() - failingSince },
            'outbox relay heartbeat recovered',
          );
          failingSince = undefined;
        })
        .catch((err: unknown) => {
          // The first failure, then once a minute: a database away for long would else log
          // every second. The relay goes on publishing the shards it had meanwhile.
          const now = Date.now();
          failingSince ??= now;
          if (now - lastFailureLog < 60_000) return;
          lastFailureLog = now;
          logger.warn(
            { outbox: name, err, failingForMs: now - failingSince },
            'outbox relay heartbeat failed; trying again',
          );
        })
        .finally(() => {
          if (timer) schedule(heartbeatMs);
        });
    }, delayMs);
    timer.unref();
  }

  return {
    shards: () => shards,
    known: () => known,
    beat,
    start() {
      if (timer) return;
      schedule(0);
    },
    async stop() {
      clearTimeout(timer);
      timer = undefined;
      await beating?.catch(() => undefined);
      shards = [];
      known = false;
      await pool
        .query('delete from outbox_relays where outbox = $1 and relay_id = $2', [name, relayId])
        .catch((err: unknown) => {
          logger.warn({ outbox: name, err }, 'could not remove the relay from outbox_relays');
        });
    },
  };
}
