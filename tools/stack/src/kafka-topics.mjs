// The registry's Kafka topics, created on a node with Kafka's own TopicCommand.
import { host, ports, stackServices } from './config.mjs';
import { StackError, say } from './output.mjs';
import { run } from './processes.mjs';
import { kafkaMetadata } from './kafka-metadata.mjs';
import { javaArgs, kafkaJars } from './kafka-jars.mjs';

const component = 'kafka';

/** Topics wanted by the registry (`topics: [{name, partitions?, config?}]` on any service). */
export function registryTopics() {
  const byName = new Map();
  for (const s of stackServices) {
    for (const t of s.topics) {
      const prev = byName.get(t.name);
      byName.set(t.name, {
        ...prev,
        ...t,
        partitions: Math.max(prev?.partitions ?? 0, t.partitions ?? 0) || undefined,
      });
    }
  }
  return [...byName.values()];
}

/**
 * Creates the topics that do not exist yet on the node at `port` (with Kafka's TopicCommand).
 * Returns the names created.
 */
export async function ensureKafkaTopics(bins, topics, port = ports.kafka) {
  if (!topics.length) return [];
  const existing = new Set((await kafkaMetadata(port)).topics.map((t) => t.name));
  const created = [];
  for (const t of topics) {
    if (!/^[A-Za-z0-9._-]{1,249}$/.test(t.name ?? '')) {
      throw new StackError(component, `bad topic name in the registry: ${JSON.stringify(t.name)}`);
    }
    if (existing.has(t.name)) continue;
    say(`kafka: creating topic ${t.name}`);
    const args = [
      ...javaArgs(['-Xmx256m'], kafkaJars.toolsLog4j),
      'org.apache.kafka.tools.TopicCommand',
      '--bootstrap-server',
      `${host}:${port}`,
      '--create',
      '--if-not-exists',
      '--topic',
      t.name,
      '--replication-factor',
      '1',
    ];
    if (t.partitions) args.push('--partitions', String(t.partitions));
    for (const [k, v] of Object.entries(t.config ?? {})) args.push('--config', `${k}=${v}`);
    try {
      await run(bins.java, args, { timeoutMs: 120000 });
    } catch (err) {
      throw new StackError(component, `creating topic ${t.name} failed: ${err.message}`);
    }
    created.push(t.name);
  }
  return created;
}
