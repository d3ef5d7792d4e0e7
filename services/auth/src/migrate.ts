// Prepares what this service owns before it starts (a Job in Kubernetes): its database schema
// and its Kafka topic (from @herald/messages, the one list of topics).
import { fileURLToPath } from 'node:url';
import { databaseConnection, migrateDatabase } from '@herald/db';
import { createLogger } from '@herald/http';
import { createKafka, ensureTopics, kafkaConnection } from '@herald/kafka';
import { topicSpecs, TOPICS } from '@herald/messages';
import { loadMigrationConfig } from './config.js';

const config = loadMigrationConfig();
const logger = createLogger({ service: 'auth-migrate' });
await migrateDatabase({
  ...databaseConnection(config),
  directory: fileURLToPath(new URL('../migrations', import.meta.url)),
  applicationName: 'herald-auth-migrate',
  logger,
});
const kafka = createKafka({ ...kafkaConnection(config), clientId: 'herald-auth-migrate', logger });
const { created, reconciled } = await ensureTopics(kafka, topicSpecs([TOPICS.tenantsDeleted]));
for (const change of reconciled) logger.info(change, 'kafka topic setting changed');
logger.info({ created }, 'kafka topics up to date');
