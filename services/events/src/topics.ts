// The Kafka topic the events service owns, as its migration (src/migrate.ts) creates it and
// enforces its settings on every run: partitions and cleanup policy from @herald/messages, and
// the retention that bounds how long a published Event (personal data about a Contact) stays in
// Kafka, erased Contacts' included (docs/contacts.md#kafka).
import { retainedTopicConfig, withTopicConfig, type ITopicConfig } from '@herald/kafka';
import { topicSpecs, TOPICS } from '@herald/messages';
import type { MigrationConfig } from './config.js';

export function eventsTopics(
  config: Pick<MigrationConfig, 'KAFKA_EVENTS_RECORDED_RETENTION_MS'>,
): ITopicConfig[] {
  return topicSpecs([TOPICS.eventsRecorded]).map((spec) =>
    withTopicConfig(
      spec,
      retainedTopicConfig({ retentionMs: config.KAFKA_EVENTS_RECORDED_RETENTION_MS }),
    ),
  );
}
