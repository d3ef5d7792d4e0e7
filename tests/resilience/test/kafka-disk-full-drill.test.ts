// The Kafka disk-full drill of `npm run drill -- kafka-disk-full`
// (tools/drills/src/kafka-disk-full.mjs): a Kafka node of its own with its log directory on a
// small tmpfs, the relay publishing to it, filled up under load and then given space again (and
// started again when it stopped, as its supervisor would). Recording answers 202 throughout, the
// outbox holding what cannot be published; every Event answered 202 is stored once and reaches
// Kafka, and the relay publishes the backlog without a restart of its own.
import { describe, expect, it } from '@jest/globals';

interface KafkaDiskFullResult {
  statuses: Record<string, number>;
  acked: number;
  missing: number;
  doubled: number;
  kafkaFailure: string;
  kafkaRestarted: boolean;
  backlog: number;
  publishSeconds: number;
  outboxLeft: number;
  notOnKafka: number;
  kafkaDuplicates: number;
  ok: boolean;
}

/** tools/drills/src/kafka-disk-full.mjs (JavaScript, imported by URL), typed with what is used. */
interface KafkaDiskFullDrill {
  runKafkaDiskFullDrill(options?: { log?: (line: string) => void }): Promise<KafkaDiskFullResult>;
  formatKafkaDiskFull(result: KafkaDiskFullResult): string;
}

const module = new URL('../../../tools/drills/src/kafka-disk-full.mjs', import.meta.url).href;
const drill = (await import(module)) as KafkaDiskFullDrill;

const log = (line: string) => process.stderr.write(`${line}\n`);

describe('Kafka disk-full drill', () => {
  it("Kafka's full disk leaves recording answering 202, and the backlog reaches Kafka once space is back", async () => {
    const result = await drill.runKafkaDiskFullDrill({ log });
    process.stdout.write(`\n${drill.formatKafkaDiskFull(result)}\n\n`);
    expect(result.acked).toBeGreaterThan(0);
    // Kafka really failed for want of space, and Events waited for it in the outbox.
    expect(result.backlog).toBeGreaterThan(0);
    const unexpected = Object.keys(result.statuses).filter((s) => !['202', '429'].includes(s));
    expect(unexpected).toEqual([]);
    expect({ missing: result.missing, doubled: result.doubled }).toEqual({
      missing: 0,
      doubled: 0,
    });
    expect(result.outboxLeft).toBe(0);
    expect(result.notOnKafka).toBe(0);
    expect(result.ok).toBe(true);
  }, 600_000);
});
