// The restore drill of `npm run drill -- restore` (tools/drills/src/restore.mjs), short: Events
// recorded through the ingress for 3 s before a base backup of the stack's PostgreSQL and 3 s
// after it, the backup restored into a second server, and the Contact's export read from the
// events service started on it. Every Event answered 202 before the backup started must be
// there, none twice. It stops only what it started; the stack's own processes keep running.
import { describe, expect, it } from '@jest/globals';

type Windows = Record<'before' | 'during' | 'after', number>;

interface Verdict {
  answered: Windows;
  restored: Windows;
  exported: number;
  missing: number;
  doubled: number;
  renamed: number;
  unanswered: number;
  examples: string[];
  ok: boolean;
}

/** tools/drills/src/restore.mjs (JavaScript, imported by URL), typed with what is used here. */
interface RestoreDrill {
  runRestoreDrill(options?: {
    seconds?: number;
    log?: (line: string) => void;
  }): Promise<{ verdict: Verdict; anomalies: string[] }>;
  formatVerdict(verdict: Verdict): string;
}

const restoreModule = new URL('../../../tools/drills/src/restore.mjs', import.meta.url).href;
const drill = (await import(restoreModule)) as RestoreDrill;

const log = (line: string) => process.stderr.write(`${line}\n`);

describe('restore drill', () => {
  it('a base backup taken under load restores every Event answered 202 before it started, once', async () => {
    const { verdict } = await drill.runRestoreDrill({ seconds: 3, log });
    process.stdout.write(`\n${drill.formatVerdict(verdict)}\n\n`);
    // Something to check: a drill that restored nothing would pass empty.
    expect(verdict.answered.before).toBeGreaterThan(0);
    expect(verdict.restored.before).toBe(verdict.answered.before);
    expect(verdict).toMatchObject({ missing: 0, doubled: 0, renamed: 0 });
  }, 180_000);
});
