import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { commands } from '../src/commands.js';
import { synopsis } from '../src/help.js';
import { ADMIN_TOKEN, run, startFakeApi, TENANT, type FakeApi } from './support.js';

let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi();
});
afterAll(() => api.close());
beforeEach(() => {
  api.requests.length = 0;
});

const env = () => ({ HERALD_URL: api.url, ADMIN_TOKEN });

describe('help', () => {
  it.each([[['help']], [['--help']], [['-h']]])(
    'when running %j, then every command with its options is listed on stdout and the exit code is 0',
    async (argv) => {
      const result = await run(argv, {});

      expect(result).toMatchObject({ code: 0, stderr: '' });
      for (const command of commands) {
        expect(result.stdout).toContain(synopsis(command));
        expect(result.stdout).toContain(`${command.method} ${command.path}`);
      }
      expect(result.stdout).toContain('--get <field>');
      expect(result.stdout).toContain('--json');
      expect(result.stdout).toMatch(/Exit codes/);
      expect(api.requests).toHaveLength(0);
    },
  );

  it.each([[['keys', '--help']], [['help', 'keys']], [['keys', '-h']]])(
    'when running %j, then only the keys commands are listed',
    async (argv) => {
      const result = await run(argv, {});

      expect(result.code).toBe(0);
      expect(result.stdout).toContain('keys create --tenant <id> [--kind secret|publishable]');
      expect(result.stdout).toContain('keys revoke --tenant <id> --client-id <clientId>');
      expect(result.stdout).not.toContain('tenants create');
    },
  );

  it('when asking for help on one command, then its options are explained and nothing is sent', async () => {
    const result = await run(['keys', 'create', '--tenant', TENANT, '--help'], env());

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--kind <kind>');
    expect(result.stdout).toContain('default: secret');
    expect(result.stdout).not.toContain('keys revoke');
    expect(api.requests).toHaveLength(0);
  });
});

describe('usage errors', () => {
  it.each([
    [[], /^error: missing command\n/],
    [['frobnicate'], /^error: unknown command "frobnicate"\n/],
    [['help', 'frobnicate'], /^error: unknown command "frobnicate"\n/],
    [['keys'], /^error: missing action for "keys": one of create, list, revoke\n/],
    [['keys', 'rotate', '--tenant', TENANT], /^error: unknown command "keys rotate"/],
    [['tenants', 'create'], /^error: missing required option --name <name>\n/],
    [['tenants', 'create', '--name', ''], /^error: missing required option --name <name>\n/],
    [['keys', 'revoke', '--tenant', TENANT], /^error: missing required option --client-id/],
    [['tenants', 'delete', '--tenant', TENANT], /^error: missing required option --confirm <id>\n/],
    [['tenants', 'delete', '--confirm', TENANT], /^error: missing required option --tenant <id>\n/],
    [['keys', 'create', '--client-id', 'ck_x'], /^error: "keys create" has no option --client-id/],
    [['tenants', 'create', '--name', 'A', '--tenant', TENANT], /has no option --tenant/],
    [['tenants', 'create', '--nmae', 'A'], /^error: unknown option --nmae\n/],
    [['tenants', 'create', '--name'], /^error: Option '--name <value>' argument missing/],
    [
      ['keys', 'create', '--tenant', TENANT, '--kind', 'root'],
      /--kind must be one of secret, publishable \(got "root"\)/,
    ],
    [['tenants', 'create', 'Acme'], /^error: unexpected argument "Acme"/],
    [
      ['event-retention', 'set', '--tenant', TENANT],
      /^error: missing required option --days <n\|default>\n/,
    ],
    [
      ['event-retention', 'set', '--tenant', TENANT, '--days', '1.5'],
      /^error: --days must be a whole number of days or "default" \(got "1.5"\)\n/,
    ],
    [
      ['event-retention', 'set', '--tenant', TENANT, '--days', 'forever'],
      /^error: --days must be a whole number of days or "default" \(got "forever"\)/,
    ],
    [['event-retention', 'set', '--tenant', TENANT, '--days', '-3'], /--days/],
    [['tenants', 'create', '--name', 'A', '--get', ''], /^error: --get needs a field name/],
  ])(
    'when running %j, then a clear message on stderr, exit code 2 and nothing sent',
    async (argv, message) => {
      const result = await run(argv, env());

      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(message);
      expect(api.requests).toHaveLength(0);
    },
  );

  it('when a required option is missing, then the command synopsis follows the message', async () => {
    const result = await run(['keys', 'create'], env());

    expect(result.stderr).toBe(
      'error: missing required option --tenant <id>\n' +
        'usage: herald-admin keys create --tenant <id> [--kind secret|publishable] [--scopes <a,b>] [--name <name>] [--identifier-lookup yes|no] [--allowed-origins <a,b>]\n',
    );
  });

  it('when no command is given, then the whole help follows on stderr', async () => {
    const result = await run([], env());

    expect(result.stderr).toContain('tenants create --name <name>');
    expect(result.stderr).toContain('event-names list --tenant <id>');
  });
});
