// The Kafka topics the contacts service owns, as its migration (src/migrate.ts) creates them and
// enforces their settings on every run: partitions and cleanup policy from @herald/messages, and
// on the topic holding personal data, the settings that bound how long an erased Contact's
// snapshots stay in Kafka (docs/contacts.md#kafka).
import { compactedTopicConfig, withTopicConfig, type ITopicConfig } from '@herald/kafka';
import { topicSpecs, TOPICS } from '@herald/messages';
import type { MigrationConfig } from './config.js';

export function contactsTopics(
  config: Pick<MigrationConfig, 'KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS'>,
): ITopicConfig[] {
  return topicSpecs([TOPICS.contactsChanged, TOPICS.contactsErased]).map((spec) =>
    spec.topic === TOPICS.contactsChanged
      ? // Contact snapshots (email, name, phone): an erasure's tombstone replaces them.
        withTopicConfig(
          spec,
          compactedTopicConfig({
            maxCompactionLagMs: config.KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS,
          }),
        )
      : // herald.contacts.erased holds ids only: the broker's retention applies.
        spec,
  );
}
