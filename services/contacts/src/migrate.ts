// Prepares what this service owns before it starts (a Job in Kubernetes): its database schema
// and its Kafka topics (from @herald/messages, the one list of topics), created with their
// settings, which are enforced again on topics that exist already (src/topics.ts).
import { fileURLToPath } from 'node:url';
import { databaseConnection, migrateDatabase } from '@herald/db';
import { createLogger } from '@herald/http';
import { createKafka, ensureTopics, kafkaConnection } from '@herald/kafka';
import { loadMigrationConfig } from './config.js';
import { contactsTopics } from './topics.js';

const config = loadMigrationConfig();
const logger = createLogger({ service: 'contacts-migrate' });
await migrateDatabase({
  ...databaseConnection(config),
  directory: fileURLToPath(new URL('../migrations', import.meta.url)),
  applicationName: 'herald-contacts-migrate',
  logger,
});
const kafka = createKafka({
  ...kafkaConnection(config),
  clientId: 'herald-contacts-migrate',
  logger,
});
const { created, reconciled } = await ensureTopics(kafka, contactsTopics(config));
for (const change of reconciled) logger.info(change, 'kafka topic setting changed');
logger.info({ created }, 'kafka topics up to date');
