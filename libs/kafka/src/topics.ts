// Topics: created with their settings, and those settings enforced again on every run, so that
// a topic made by an older release (or by hand) ends up with what the code declares.
import kafkajs, { type Admin, type ITopicConfig, type Kafka } from 'kafkajs';

// kafkajs is CommonJS and Node cannot see these among its named exports.
const { ConfigResourceTypes, ConfigSource } = kafkajs;

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
 * KRaft node), so that wait polls instead of trusting kafkajs's own, which retries only "leader
 * not available".
 */
export async function ensureTopics(
  kafka: Kafka,
  topics: readonly ITopicConfig[],
  timeoutMs = 30_000,
): Promise<EnsuredTopics> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) {
      try {
        await admin.createTopics({ topics: [...missing], waitForLeaders: false });
      } catch (err) {
        // Another process created one of them at the same moment: its settings are
        // reconciled below like any existing topic's.
        if ((err as { type?: string }).type !== 'TOPIC_ALREADY_EXISTS') throw err;
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
    await admin.disconnect();
  }
}

/**
 * Sets the declared `configEntries` on each topic whose own values differ. Kafka's AlterConfigs
 * (the one kafkajs speaks) replaces a topic's whole set of topic-level values, so the request
 * carries the topic's other topic-level values too, unchanged.
 */
async function reconcileTopicConfigs(
  admin: Admin,
  topics: readonly ITopicConfig[],
): Promise<ReconciledSetting[]> {
  const declared = topics.filter((t) => (t.configEntries ?? []).length > 0);
  if (declared.length === 0) return [];
  const { resources } = await admin.describeConfigs({
    resources: declared.map((t) => ({ type: ConfigResourceTypes.TOPIC, name: t.topic })),
    includeSynonyms: false,
  });
  const reconciled: ReconciledSetting[] = [];
  for (const topic of declared) {
    const described = resources.find((r) => r.resourceName === topic.topic);
    if (!described || described.errorCode !== 0) {
      throw new Error(
        `Kafka did not describe the settings of ${topic.topic}: ${described?.errorMessage ?? 'missing from the answer'}`,
      );
    }
    const own = new Map<string, string>();
    for (const entry of described.configEntries) {
      if (entry.configSource !== ConfigSource.TOPIC_CONFIG) continue;
      if (entry.configValue === null || entry.isSensitive) {
        // It could not be sent back, and leaving it out would erase it.
        throw new Error(
          `${topic.topic} has a sensitive topic-level setting ${entry.configName}: set its settings by hand`,
        );
      }
      own.set(entry.configName, entry.configValue);
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
    for (const change of changes) own.set(change.name, change.to);
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: topic.topic,
          configEntries: [...own].map(([name, value]) => ({ name, value })),
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
      const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
      if (
        metadata.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0))
      )
        return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline)
      throw new Error(`Kafka topics have no leaders after ${timeoutMs} ms: ${topics.join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
