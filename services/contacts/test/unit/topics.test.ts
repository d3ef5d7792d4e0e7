// The contacts migration's topic settings: how long Kafka may keep an erased Contact's snapshots
// on herald.contacts.changed, from KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS, checked at start.
import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '@herald/config';
import { TOPICS } from '@herald/messages';
import { loadMigrationConfig } from '../../src/config.js';
import { contactsTopics } from '../../src/topics.js';

const settings = (topic: string, env: Record<string, string> = {}) => {
  const spec = contactsTopics(loadMigrationConfig(env)).find((t) => t.topic === topic);
  return Object.fromEntries((spec?.configEntries ?? []).map((e) => [e.name, e.value]));
};

describe('KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS', () => {
  it('when unset, then herald.contacts.changed is compacted within 24 h, its segments close every 12 h, and tombstones stay 24 h', () => {
    expect(loadMigrationConfig({}).KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS).toBe(86_400_000);
    expect(settings(TOPICS.contactsChanged)).toEqual({
      'cleanup.policy': 'compact',
      'max.compaction.lag.ms': '86400000',
      'segment.ms': '43200000',
      'min.cleanable.dirty.ratio': '0.1',
      'delete.retention.ms': '86400000',
    });
  });

  it('when an operator shortens it, then the topic settings follow', () => {
    expect(
      settings(TOPICS.contactsChanged, { KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS: '3600000' }),
    ).toMatchObject({
      'max.compaction.lag.ms': '3600000',
      'segment.ms': '1800000',
      'delete.retention.ms': '3600000',
    });
  });

  it('herald.contacts.erased (ids only) keeps its declared settings alone', () => {
    expect(settings(TOPICS.contactsErased)).toEqual({ 'cleanup.policy': 'delete' });
  });

  it.each([
    ['60000', 60_000],
    ['2592000000', 2_592_000_000],
  ])('when it is %s (a bound), then it is accepted', (value, expected) => {
    expect(
      loadMigrationConfig({ KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS: value })
        .KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS,
    ).toBe(expected);
  });

  it.each([
    ['59999', 'must be at least 60000 (1 minute)'],
    ['2592000001', 'must be at most 2592000000 (30 days)'],
    ['0', 'must be at least 60000 (1 minute)'],
    ['90000.5', 'Invalid input: expected int, received number'],
  ])('when it is %s, then the migration refuses to start naming it', (value, message) => {
    let error: unknown;
    try {
      loadMigrationConfig({ KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      `KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS: ${message} (got a value that does not fit)`,
    ]);
  });

  it('when it is not a number, then the migration refuses to start', () => {
    expect(() =>
      loadMigrationConfig({ KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS: '24h' }),
    ).toThrow(/KAFKA_CONTACTS_CHANGED_MAX_COMPACTION_LAG_MS: /);
  });
});
