// The local stack runs each Herald process at the nice value its registry entry asks for, counted
// from the stack's own (the outbox relay ahead of the rest, so that publishing keeps up while
// recording saturates the CPU). Going lower needs root or CAP_SYS_NICE: without it the process
// keeps the stack's value, and its log says why. It also runs each with its registry entry's
// `node` arguments, which size its V8 heap the same as the images and the chart do.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { dataDir, repoRoot } from './support.js';

interface RegistryEntry {
  name: string;
  entry: string;
  nodeArgs: string[];
  niceness?: number;
}

const registry = JSON.parse(
  readFileSync(path.join(repoRoot, 'tools', 'stack', 'src', 'processes.generated.json'), 'utf8'),
) as RegistryEntry[];

const pidOf = (name: string) =>
  readFileSync(path.join(dataDir, 'run', `${name}.pid`), 'utf8').trim();

/** The nice value of a running stack process: field 19 of /proc/<pid>/stat. */
function niceOf(name: string): number {
  const stat = readFileSync(`/proc/${pidOf(name)}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

describe('process priority and heap in the local stack', () => {
  it('when the registry is read, then only the relay asks to run ahead of the rest', () => {
    expect(registry.filter((e) => e.niceness !== undefined)).toEqual([
      expect.objectContaining({ name: 'events-relay', niceness: expect.any(Number) }),
    ]);
    expect(registry.find((e) => e.name === 'events-relay')!.niceness).toBeLessThan(0);
  });

  it('when the stack runs, then each process is at the stack value plus its niceness, or its log says why not', () => {
    // The events service asks for none: it runs at the stack's own value.
    const base = niceOf('events');
    for (const { name, niceness = 0 } of registry) {
      const nice = niceOf(name);
      if (niceness === 0) {
        expect({ name, nice }).toEqual({ name, nice: base });
        continue;
      }
      const target = Math.min(19, Math.max(-20, base + niceness));
      if (nice !== target) {
        expect({ name, nice }).toEqual({ name, nice: base });
        const log = readFileSync(path.join(dataDir, 'logs', `${name}.log`), 'utf8');
        expect(log).toContain(`could not set nice ${target}`);
      }
    }
  });

  it('when the stack runs, then each process runs with exactly its node arguments, heap sizes included', () => {
    for (const { name, entry, nodeArgs } of registry) {
      const argv = readFileSync(`/proc/${pidOf(name)}/cmdline`, 'utf8')
        .split('\0')
        .slice(1, -1);
      expect({ name, argv }).toEqual({ name, argv: [...nodeArgs, path.join(repoRoot, entry)] });
      expect(nodeArgs).toEqual(
        expect.arrayContaining([expect.stringMatching(/^--max-semi-space-size=\d+$/)]),
      );
    }
  });
});
