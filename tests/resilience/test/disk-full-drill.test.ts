// The disk-full drill of `npm run drill -- disk-full` (tools/drills/src/disk-full.mjs): a
// PostgreSQL of its own on a small tmpfs, with the events service and a relay on it, filled up
// under load and then given space again. While the disk is full recording answers 503, never a
// 500 or nothing; every Event answered 202 is stored once; recording comes back without a
// restart of Herald's processes, and the relay publishes what waited. It stops and removes what
// it started; the stack's own processes keep running.
import { describe, expect, it } from '@jest/globals';

interface DiskFullResult {
  statuses: Record<string, number>;
  acked: number;
  missing: number;
  doubled: number;
  recoverySeconds: number;
  postgresRestarted: boolean;
  outboxLeft: number;
  ok: boolean;
}

/** tools/drills/src/disk-full.mjs (JavaScript, imported by URL), typed with what is used here. */
interface DiskFullDrill {
  runDiskFullDrill(options?: { log?: (line: string) => void }): Promise<DiskFullResult>;
  formatDiskFull(result: DiskFullResult): string;
}

const module = new URL('../../../tools/drills/src/disk-full.mjs', import.meta.url).href;
const drill = (await import(module)) as DiskFullDrill;

const log = (line: string) => process.stderr.write(`${line}\n`);

describe('disk-full drill', () => {
  it('a full disk answers 503, keeps every Event answered 202 once, and recording resumes without a restart', async () => {
    const result = await drill.runDiskFullDrill({ log });
    process.stdout.write(`\n${drill.formatDiskFull(result)}\n\n`);
    expect(result.acked).toBeGreaterThan(0);
    expect(result.statuses['503'] ?? 0).toBeGreaterThan(0);
    expect(result.statuses['500'] ?? 0).toBe(0);
    expect(result.statuses.timeout ?? 0).toBe(0);
    expect({ missing: result.missing, doubled: result.doubled }).toEqual({
      missing: 0,
      doubled: 0,
    });
    expect(result.recoverySeconds).toBeLessThan(60);
    expect(result.outboxLeft).toBe(0);
  }, 600_000);
});
