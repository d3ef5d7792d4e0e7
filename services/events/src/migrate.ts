// Prepares what this service owns before it starts (a Job in Kubernetes): its database schema
// and its Kafka topic (from @herald/messages, the one list of topics), created with its
// settings, which are enforced again when it exists already (src/topics.ts).
import { fileURLToPath } from 'node:url';
import { databaseConnection, migrateDatabase } from '@herald/db';
import { createLogger } from '@herald/http';
import { createKafka, ensureTopics, kafkaConnection } from '@herald/kafka';
import { loadMigrationConfig } from './config.js';
import { eventsTopics } from './topics.js';

const config = loadMigrationConfig();
const logger = createLogger({ service: 'events-migrate' });
await migrateDatabase({
  ...databaseConnection(config),
  directory: fileURLToPath(new URL('../migrations', import.meta.url)),
  applicationName: 'herald-events-migrate',
  logger,
});
const kafka = createKafka({
  ...kafkaConnection(config),
  clientId: 'herald-events-migrate',
  logger,
});
const { created, reconciled } = await ensureTopics(kafka, eventsTopics(config));
for (const change of reconciled) logger.info(change, 'kafka topic setting changed');
logger.info({ created }, 'kafka topics up to date');
