// Where topics' partitions begin and end, and how far a consumer group is behind them.
import { ListOffsetTimestamps, type Admin } from '@platformatic/kafka';

/** A partition's first offset still held (`low`) and the offset its next record gets (`high`). */
export interface PartitionOffsets {
  topic: string;
  partition: number;
  low: bigint;
  high: bigint;
}

/** The first and next offsets of every partition of the topics, in topic and partition order. */
export async function partitionOffsets(
  admin: Admin,
  topics: readonly string[],
): Promise<PartitionOffsets[]> {
  const metadata = await admin.metadata({ topics: [...topics], forceUpdate: true });
  const request = (timestamp: bigint) => ({
    topics: topics.map((name) => ({
      name,
      partitions: Array.from(
        { length: metadata.topics.get(name)?.partitionsCount ?? 0 },
        (_, partitionIndex) => ({ partitionIndex, timestamp }),
      ),
    })),
  });
  const [starts, ends] = await Promise.all([
    admin.listOffsets(request(ListOffsetTimestamps.EARLIEST)),
    admin.listOffsets(request(ListOffsetTimestamps.LATEST)),
  ]);
  const offsetOf = (listed: typeof starts, topic: string, partition: number) =>
    listed.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === partition)
      ?.offset ?? 0n;
  return request(0n).topics.flatMap(({ name, partitions }) =>
    partitions.map(({ partitionIndex }) => ({
      topic: name,
      partition: partitionIndex,
      low: offsetOf(starts, name, partitionIndex),
      high: offsetOf(ends, name, partitionIndex),
    })),
  );
}

/**
 * Records the group has not committed yet, over every partition of the topics: from its
 * committed offset, or from the partition's first record where it committed none.
 */
export async function groupLag(
  admin: Admin,
  groupId: string,
  topics: readonly string[],
): Promise<number> {
  const [group] = await admin.listConsumerGroupOffsets({ groups: [groupId] });
  const committed = new Map<string, bigint>();
  for (const topic of group?.topics ?? []) {
    for (const p of topic.partitions)
      committed.set(`${topic.name}:${p.partitionIndex}`, p.committedOffset);
  }
  let behind = 0n;
  for (const { topic, partition, low, high } of await partitionOffsets(admin, topics)) {
    const done = committed.get(`${topic}:${partition}`) ?? -1n;
    const from = done < 0n ? low : done;
    if (high > from) behind += high - from;
  }
  return Number(behind);
}

/** Sets the group's committed offsets (the group must have no live member). */
export async function setGroupOffsets(
  admin: Admin,
  groupId: string,
  offsets: readonly { topic: string; partition: number; offset: bigint }[],
): Promise<void> {
  const byTopic = new Map<string, { partition: number; offset: bigint }[]>();
  for (const { topic, partition, offset } of offsets) {
    let partitions = byTopic.get(topic);
    if (!partitions) byTopic.set(topic, (partitions = []));
    partitions.push({ partition, offset });
  }
  await admin.alterConsumerGroupOffsets({
    groupId,
    topics: [...byTopic].map(([name, partitionOffsets]) => ({ name, partitionOffsets })),
  });
}
