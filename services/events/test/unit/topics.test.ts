// The events migration's topic settings: how long Kafka keeps a published Event (an erased
// Contact's included) on herald.events.recorded, from KAFKA_EVENTS_RECORDED_RETENTION_MS,
// checked at start.
import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '@herald/config';
import { TOPICS } from '@herald/messages';
import { loadMigrationConfig } from '../../src/config.js';
import { eventsTopics } from '../../src/topics.js';

const settings = (env: Record<string, string> = {}) => {
  const specs = eventsTopics(loadMigrationConfig(env));
  expect(specs.map((t) => t.topic)).toEqual([TOPICS.eventsRecorded]);
  return Object.fromEntries((specs[0]!.configEntries ?? []).map((e) => [e.name, e.value]));
};

describe('KAFKA_EVENTS_RECORDED_RETENTION_MS', () => {
  it('when unset, then herald.events.recorded keeps Events 7 days, in segments of a day', () => {
    expect(loadMigrationConfig({}).KAFKA_EVENTS_RECORDED_RETENTION_MS).toBe(604_800_000);
    expect(settings()).toEqual({
      'cleanup.policy': 'delete',
      'retention.ms': '604800000',
      'segment.ms': '86400000',
    });
  });

  it('when an operator shortens it, then the topic settings follow', () => {
    expect(settings({ KAFKA_EVENTS_RECORDED_RETENTION_MS: '86400000' })).toEqual({
      'cleanup.policy': 'delete',
      'retention.ms': '86400000',
      'segment.ms': '12342858',
    });
  });

  it.each([
    ['3600000', 3_600_000],
    ['2592000000', 2_592_000_000],
  ])('when it is %s (a bound), then it is accepted', (value, expected) => {
    expect(
      loadMigrationConfig({ KAFKA_EVENTS_RECORDED_RETENTION_MS: value })
        .KAFKA_EVENTS_RECORDED_RETENTION_MS,
    ).toBe(expected);
  });

  it.each([
    ['3599999', 'must be at least 3600000 (1 hour)'],
    ['2592000001', 'must be at most 2592000000 (30 days)'],
    ['-1', 'must be at least 3600000 (1 hour)'],
  ])('when it is %s, then the migration refuses to start naming it', (value, message) => {
    let error: unknown;
    try {
      loadMigrationConfig({ KAFKA_EVENTS_RECORDED_RETENTION_MS: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      `KAFKA_EVENTS_RECORDED_RETENTION_MS: ${message} (got a value that does not fit)`,
    ]);
  });
});
