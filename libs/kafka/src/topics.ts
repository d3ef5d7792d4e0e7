// Topics: created with their settings, and those settings enforced again on every run, so that
// a topic made by an older release (or by hand) ends up with what the code declares.
import {
  ConfigResourceTypes,
  ConfigSources,
  findErrorBy,
  IncrementalAlterConfigOperationTypes,
  type Admin,
} from '@platformatic/kafka';
import type { Kafka } from './index.js';

/** A topic as Herald declares it: its name, partitions, replicas and topic-level settings. */
export interface ITopicConfig {
  topic: string;
  /** Default: the broker's `num.partitions`. */
  numPartitions?: number;
  /** Default: the broker's `default.replication.factor`. */
  replicationFactor?: number;
  configEntries?: { name: string; value: string }[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * How often Kafka's log cleaner compacts a topic, in the share of its bytes that are dirty. Low,
 * so that a handful of erasures in a large, quiet partition are compacted without waiting for
 * the max compaction lag; not lower, since each cleaning rewrites the partition's clean segments.
 */
export const MIN_CLEANABLE_DIRTY_RATIO = '0.1';

/**
 * Settings of a compacted topic keyed by a person, whose personal data must leave Kafka within
 * `maxCompactionLagMs` of the tombstone that replaces it (an erasure):
 * - `max.compaction.lag.ms`: a segment is compacted at the latest this long after its first
 *   record, however little of the partition is dirty;
 * - `segment.ms`: half of it, so the segment holding the tombstone is closed well before (Kafka
 *   never compacts the active segment; it closes it on the first write after `segment.ms`);
 * - `min.cleanable.dirty.ratio`: low ({@link MIN_CLEANABLE_DIRTY_RATIO}), so the cleaner rarely
 *   waits that long;
 * - `delete.retention.ms`: as long again, how long the tombstone itself (the key, no personal
 *   data) stays after its first compaction, for consumers to see it.
 */
export function compactedTopicConfig(options: { maxCompactionLagMs: number }): TopicConfig {
  const lag = positiveMs(options.maxCompactionLagMs, 'maxCompactionLagMs');
  return {
    'cleanup.policy': 'compact',
    'max.compaction.lag.ms': String(lag),
    'segment.ms': String(Math.max(1, Math.floor(lag / 2))),
    'min.cleanable.dirty.ratio': MIN_CLEANABLE_DIRTY_RATIO,
    'delete.retention.ms': String(lag),
  };
}

/**
 * Settings of a topic whose records Kafka deletes `retentionMs` after they were written. Kafka
 * deletes whole segments, once the newest record of one is older than the retention: segments
 * span a seventh of the retention, at most a day, so a record lives at most that much longer.
 */
export function retainedTopicConfig(options: { retentionMs: number }): TopicConfig {
  const retention = positiveMs(options.retentionMs, 'retentionMs');
  return {
    'cleanup.policy': 'delete',
    'retention.ms': String(retention),
    'segment.ms': String(Math.max(1, Math.min(DAY_MS, Math.ceil(retention / 7)))),
  };
}

/** Topic-level settings by name, e.g. `{'cleanup.policy': 'compact'}`. */
export type TopicConfig = Record<string, string>;

function positiveMs(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a whole number of milliseconds ≥ 1, got ${value}`);
  }
  return value;
}

/** The topic with these settings added to (and winning over) the ones it declares already. */
export function withTopicConfig(topic: ITopicConfig, config: TopicConfig): ITopicConfig {
  const merged = new Map((topic.configEntries ?? []).map((e) => [e.name, e.value]));
  for (const [name, value] of Object.entries(config)) merged.set(name, value);
  return {
    ...topic,
    configEntries: [...merged].map(([name, value]) => ({ name, value })),
  };
}

/** A setting of an existing topic that `ensureTopics` changed to the declared value. */
export interface ReconciledSetting {
  topic: string;
  name: string;
  /** The topic's own value before, or null when it had none (the broker's default applied). */
  from: string | null;
  to: string;
}

export interface EnsuredTopics {
  /** The topics this call created. */
  created: string[];
  /** The settings it changed on topics that existed already. */
  reconciled: ReconciledSetting[];
}

/**
 * Creates the topics that are missing, with their `configEntries`, and waits until every
 * partition has a leader. On the topics that exist already, it sets every declared entry the
 * topic does not hold as its own (topic-level) value; its other topic-level settings stay.
 * The partition count of an existing topic is left as it is.
 *
 * Right after a create, a broker can still answer "unknown topic" for a moment (seen on a fresh
 * KRaft node), so the wait for leaders polls the metadata until every partition has one.
 */
export async function ensureTopics(
  kafka: Kafka,
  topics: readonly ITopicConfig[],
  timeoutMs = 30_000,
): Promise<EnsuredTopics> {
  const admin = kafka.admin();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    // One request per topic: a request's settings apply to every topic it names.
    for (const topic of missing) {
      try {
        await admin.createTopics({
          topics: [topic.topic],
          partitions: topic.numPartitions ?? -1,
          replicas: topic.replicationFactor ?? -1,
          configs: topic.configEntries ?? [],
        });
      } catch (err) {
        // Another process created it at the same moment: its settings are reconciled below
        // like any existing topic's.
        if (!findErrorBy(err as Error, 'apiId', 'TOPIC_ALREADY_EXISTS')) throw err;
      }
    }
    await waitForLeaders(
      admin,
      topics.map((t) => t.topic),
      timeoutMs,
    );
    const reconciled = await reconcileTopicConfigs(admin, topics);
    return { created: missing.map((t) => t.topic), reconciled };
  } finally {
    await admin.close();
  }
}

/**
 * Sets the declared `configEntries` on each topic whose own values differ, with Kafka's
 * IncrementalAlterConfigs: only the declared entries change, the topic's other topic-level
 * values stay as they are.
 */
async function reconcileTopicConfigs(
  admin: Admin,
  topics: readonly ITopicConfig[],
): Promise<ReconciledSetting[]> {
  const declared = topics.filter((t) => (t.configEntries ?? []).length > 0);
  if (declared.length === 0) return [];
  const described = await admin.describeConfigs({
    resources: declared.map((t) => ({
      resourceType: ConfigResourceTypes.TOPIC,
      resourceName: t.topic,
    })),
    includeSynonyms: false,
  });
  const reconciled: ReconciledSetting[] = [];
  for (const topic of declared) {
    const description = described.find((r) => r.resourceName === topic.topic);
    if (!description) {
      throw new Error(`Kafka did not describe the settings of ${topic.topic}`);
    }
    const own = new Map<string, string | null>();
    for (const entry of description.configs) {
      if (entry.configSource === ConfigSources.DYNAMIC_TOPIC_CONFIG) {
        own.set(entry.name, entry.value ?? null);
      }
    }
    const changes = (topic.configEntries ?? [])
      .filter((e) => own.get(e.name) !== e.value)
      .map((e) => ({
        topic: topic.topic,
        name: e.name,
        from: own.get(e.name) ?? null,
        to: e.value,
      }));
    if (changes.length === 0) continue;
    await admin.incrementalAlterConfigs({
      resources: [
        {
          resourceType: ConfigResourceTypes.TOPIC,
          resourceName: topic.topic,
          configs: changes.map((c) => ({
            name: c.name,
            configOperation: IncrementalAlterConfigOperationTypes.SET,
            value: c.to,
          })),
        },
      ],
    });
    reconciled.push(...changes);
  }
  return reconciled;
}

async function waitForLeaders(admin: Admin, topics: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics: metadata } = await admin.metadata({ topics, forceUpdate: true });
      const led = topics.every((name) => {
        const partitions = metadata.get(name)?.partitions ?? [];
        return partitions.length > 0 && partitions.every((p) => p.leader >= 0);
      });
      if (led) return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline)
      throw new Error(`Kafka topics have no leaders after ${timeoutMs} ms: ${topics.join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
