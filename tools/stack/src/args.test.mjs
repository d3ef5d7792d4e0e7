// `node --test tools/stack/src/args.test.mjs`: the scripts' shared command line. `--help` prints the
// usage and exits 0; an unknown option prints a usage line and exits 2, not a stack trace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { UsageError, parseCommandLine, positiveInteger } from './args.mjs';
import { repoRoot } from './config.mjs';

describe('parseCommandLine', () => {
  /** @type {import('./args.mjs').CommandLineConfig} */
  const config = {
    options: { seconds: { type: 'string', default: '10' } },
    allowPositionals: true,
  };

  it('when given known options and positionals, then it returns them', () => {
    const parsed = parseCommandLine(['events', '--seconds', '2'], config);
    assert.deepEqual(parsed, {
      values: { seconds: '2' },
      positionals: ['events'],
      rest: [],
      help: false,
    });
  });

  it('when given --help or -h, then help is true', () => {
    assert.equal(parseCommandLine(['--help'], config).help, true);
    assert.equal(parseCommandLine(['-h'], config).help, true);
  });

  it('when given an unknown option, then a UsageError names it', () => {
    assert.throws(() => parseCommandLine(['--bogus'], config), {
      name: 'UsageError',
      message: 'unknown option --bogus',
    });
  });

  it('when an option lacks its value, then a UsageError', () => {
    assert.throws(() => parseCommandLine(['--seconds'], config), UsageError);
  });

  it('when positionals are not allowed, then one is a UsageError naming it', () => {
    assert.throws(() => parseCommandLine(['extra'], {}), {
      name: 'UsageError',
      message: 'unexpected argument extra',
    });
  });

  it('when passThrough is set, then what follows -- is returned untouched', () => {
    const parsed = parseCommandLine(['smoke', '--', '--vus', '2'], {
      allowPositionals: true,
      passThrough: true,
    });
    assert.deepEqual(parsed.positionals, ['smoke']);
    assert.deepEqual(parsed.rest, ['--vus', '2']);
  });

  it('when a count is not a whole number >= 1, then a UsageError names the option', () => {
    assert.equal(positiveInteger('seconds', '3'), 3);
    assert.throws(() => positiveInteger('seconds', '0'), /--seconds/);
    assert.throws(() => positiveInteger('seconds', 'x'), UsageError);
  });
});

// The scripts themselves; each exits before it starts anything.
const scripts = [
  ['tools/bench/src/main.mjs'],
  ['tools/stack/src/cli.mjs', 'up'],
  ['tools/stack/src/cli.mjs', 'status'],
  ['tools/stack/src/run-tests.mjs'],
  ['tools/stack/src/go-tools.mjs'],
  ['loadtest/run.mjs', 'smoke'],
  ['tools/generate/src/api-reference.mjs'],
];

for (const [script, ...command] of scripts) {
  const node = (...args) =>
    spawnSync(process.execPath, [script, ...command, ...args], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 30_000,
    });

  describe(`node ${[script, ...command].join(' ')}`, () => {
    it('when given --help, then it prints the usage and exits 0', () => {
      const result = node('--help');
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, /^Usage: /);
    });

    it('when given an unknown option, then it prints a usage line and exits 2', () => {
      const result = node('--no-such-option');
      assert.equal(result.status, 2, result.stdout);
      assert.match(result.stderr, /unknown option --no-such-option/);
      assert.match(result.stderr, /Usage: /);
      assert.doesNotMatch(result.stderr, /\n\s+at /); // no stack trace
    });
  });
}
