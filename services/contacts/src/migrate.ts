// Prepares what this service owns before it starts (a Job in Kubernetes): its database schema
// and its Kafka topics (from @herald/messages, the one list of topics).
import { fileURLToPath } from 'node:url';
import { createPool, runMigrations } from '@herald/db';
import { createLogger } from '@herald/http';
import { createKafka, ensureTopics } from '@herald/kafka';
import { TOPIC_SETTINGS, TOPICS } from '@herald/messages';
import { loadMigrationConfig } from './config.js';

const config = loadMigrationConfig();
const logger = createLogger({ service: 'contacts-migrate' });
const pool = createPool({
  connectionString: config.DATABASE_URL,
  applicationName: 'herald-contacts-migrate',
});
try {
  const applied = await runMigrations(
    pool,
    fileURLToPath(new URL('../migrations', import.meta.url)),
    logger,
  );
  logger.info({ applied: applied.length }, 'migrations up to date');
} finally {
  await pool.end();
}

const kafka = createKafka({
  brokers: config.KAFKA_BROKERS,
  clientId: 'herald-contacts-migrate',
  logger,
});
const topics = [TOPICS.contactsChanged, TOPICS.contactsErased].map((topic) => ({
  topic,
  numPartitions: TOPIC_SETTINGS[topic].partitions,
  configEntries: Object.entries(TOPIC_SETTINGS[topic].config).map(([name, value]) => ({
    name,
    value,
  })),
}));
const created = await ensureTopics(kafka, topics);
logger.info({ created }, 'kafka topics up to date');
