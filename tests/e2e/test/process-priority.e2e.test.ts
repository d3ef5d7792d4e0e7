// The local stack runs each Herald process at the nice value its registry entry gives (the outbox
// relay ahead of the rest, so that publishing keeps up while recording saturates the CPU). Below
// 0 needs root: without it a process runs at 0, as the stack's log for it says.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { dataDir, repoRoot } from './support.js';

interface RegistryEntry {
  name: string;
  niceness?: number;
}

const registry = JSON.parse(
  readFileSync(path.join(repoRoot, 'scripts', 'stack', 'processes.generated.json'), 'utf8'),
) as RegistryEntry[];

/** Field 19 of /proc/<pid>/task/<tid>/stat, after the parenthesised command name. */
function niceOf(statFile: string): number {
  const stat = readFileSync(statFile, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

const canLower = process.getuid?.() === 0;

describe('process priority in the local stack', () => {
  it('when the stack runs, then the relay asks for a lower nice value than the rest', () => {
    expect(registry.find((e) => e.name === 'events-relay')?.niceness).toBeLessThan(0);
    expect(registry.filter((e) => e.niceness !== undefined).map((e) => e.name)).toEqual([
      'events-relay',
    ]);
  });

  it.each(registry.map((e) => [e.name, e.niceness ?? 0] as const))(
    'when %s runs, then its main thread runs at nice %d',
    (name, niceness) => {
      const pid = readFileSync(path.join(dataDir, 'run', `${name}.pid`), 'utf8').trim();
      expect(niceOf(`/proc/${pid}/stat`)).toBe(canLower || niceness >= 0 ? niceness : 0);
    },
  );
});
