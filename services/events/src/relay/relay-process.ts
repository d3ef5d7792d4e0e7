import { createPool, databaseConnection, pingDatabase, type Pool } from '@herald/db';
import { createHttpApp, createLogger, startServer, type Logger } from '@herald/http';
import { createKafka, createProducer, kafkaConnection, type Producer } from '@herald/kafka';
import { TOPICS } from '@herald/messages';
import { createOutboxRelay, type OutboxRelay } from '@herald/outbox';
import { every } from '../background-job.js';
import type { RelayConfig } from '../config.js';
import { dedupClaimsUpkeep } from '../recording/dedup-claims-upkeep.js';
import {
  startContactIdentitiesConsumer,
  type ContactIdentitiesConsumer,
} from '../identity-projection/contact-identities-consumer.js';

/** The name every replica's relay uses: it derives the locks that let one publish a shard. */
export const OUTBOX_NAME = 'events';

export interface RelayProcessOptions {
  logger?: Logger;
  /** Exit on SIGTERM/SIGINT after a graceful shutdown (the real process). */
  handleSignals?: boolean;
  /** Run last at shutdown, after the pool is closed (the process passes shutdownTelemetry). */
  onShutdown?: Array<() => Promise<unknown>>;
  /**
   * How often expired dedup claims are deleted (and the table vacuumed after enough were).
   * Default 10 s: the table holds the 60 s window plus at most this long of expired claims.
   */
  pruneIntervalMs?: number;
  /** How often the outbox's lag is logged while it is above zero. Default 60 s. */
  lagLogIntervalMs?: number;
  /** Passed to the outbox relay (tests poll faster). */
  pollIntervalMs?: number;
  /** The contact identity consumer's group; default this database's own. */
  contactIdentitiesGroupId?: string;
}

export interface RelayProcess {
  url: string;
  pool: Pool;
  producer: Producer;
  relay: OutboxRelay;
  /** Feeds the contact identity projection from the contacts service's topics. */
  contactIdentities: ContactIdentitiesConsumer;
  /** Stops the HTTP server, the background jobs, the relay, the producer and the pool. */
  close(): Promise<void>;
}

/**
 * The events outbox relay as its own process: publishes what recording committed to the outbox
 * to Kafka (`herald.events.recorded`), prunes expired dedup claims (vacuuming both tables as
 * their dead rows pile up: docs/capacity.md), keeps the contact identity projection fed from the
 * contacts service's topics, and answers `/healthz` and `/readyz` (database reachable) on PORT.
 * Kafka being down at start (or later) is not fatal: the relay connects the producer before each
 * send and retries with backoff while the messages wait in the outbox. Every replica runs it and
 * publishes its share of the outbox's shards (OUTBOX_SHARDS), one key always in one shard.
 */
export async function startRelayProcess(
  config: RelayConfig,
  options: RelayProcessOptions = {},
): Promise<RelayProcess> {
  const logger =
    options.logger ?? createLogger({ service: 'events-relay', level: config.LOG_LEVEL });
  const pool = createPool({
    ...databaseConnection(config),
    applicationName: 'herald-events-relay',
    // One for the batch in flight, one for the metrics or the lag log, one for pruning, /readyz,
    // one for the contact identity consumer, one for the outbox's vacuum, one for the heartbeat.
    max: 7,
  });
  // Not connected here: it connects on its first send, and again after a failure.
  const kafka = createKafka({
    ...kafkaConnection(config),
    clientId: 'herald-events-relay',
    logger,
  });
  const producer = createProducer(kafka);
  const relay = createOutboxRelay({
    pool,
    producer,
    logger,
    name: OUTBOX_NAME,
    topics: [TOPICS.eventsRecorded],
    shards: config.OUTBOX_SHARDS,
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
  });

  const pruning = every(options.pruneIntervalMs ?? 10_000, dedupClaimsUpkeep(pool, logger));
  // outbox.lag is the metric; the log line is for whoever reads the logs without a dashboard.
  const lagLog = every(options.lagLogIntervalMs ?? 60_000, async () => {
    try {
      const { pending, lagSeconds } = await relay.stats();
      if (lagSeconds > 0) {
        logger.info({ outbox: OUTBOX_NAME, pending, lagSeconds }, 'outbox lag');
      }
    } catch (err) {
      logger.warn({ err }, 'could not read the outbox lag');
    }
  });

  relay.start();
  const contactIdentities = startContactIdentitiesConsumer({
    pool,
    kafka,
    logger,
    ...(options.contactIdentitiesGroupId === undefined
      ? {}
      : { groupId: options.contactIdentitiesGroupId }),
  });
  // Like the outbox lag: for whoever reads the logs; only while it is behind.
  const consumerLagLog = every(options.lagLogIntervalMs ?? 60_000, async () => {
    if (contactIdentities.groupId() === undefined) return;
    try {
      const behind = await contactIdentities.lag();
      if (behind > 0) {
        logger.info({ consumer: 'contact-identities', behind }, 'consumer lag');
      }
    } catch (err) {
      logger.warn({ err }, 'could not read the contact identity consumer lag');
    }
  });

  const app = createHttpApp({
    logger,
    readiness: { database: () => pingDatabase(pool) },
    routes: () => {},
  });
  const server = await startServer(app, {
    host: config.HOST,
    port: config.PORT,
    logger,
    shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    handleSignals: options.handleSignals ?? false,
    // The relay finishes (or rolls back) its batch before the producer and the pool go.
    onShutdown: [
      () => Promise.all([pruning.stop(), lagLog.stop(), consumerLagLog.stop()]),
      () => Promise.all([relay.stop(), contactIdentities.stop()]),
      () => producer.close(),
      () => pool.end(),
      ...(options.onShutdown ?? []),
    ],
  }).catch(async (err: unknown) => {
    // The port is taken (or similar): let go of everything before failing.
    await Promise.all([pruning.stop(), lagLog.stop(), consumerLagLog.stop()]);
    await Promise.all([relay.stop(), contactIdentities.stop()]);
    await producer.close().catch(() => {});
    await pool.end();
    throw err;
  });

  return {
    url: server.url,
    pool,
    producer,
    relay,
    contactIdentities,
    close: () => server.close(),
  };
}
