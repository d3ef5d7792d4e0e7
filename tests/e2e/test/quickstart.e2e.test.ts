// docs/quickstart.md, run as written against the local stack, so the page can never drift from
// the API. Its fenced blocks are taken in order: the ```sh blocks run as one bash script
// (`set -euo pipefail`, from the repository root, so each block sees the variables of the ones
// before it, as in a reader's terminal), the ```ts blocks as one program (transpiled with SWC,
// run by node against the SDK, with exactly the variables the shell steps exported). A marker
// line before each block splits the output, and each block's output is checked against what its
// step promises. The TypeScript is type-checked against @herald/client as well, and the outcome
// is read back through the API at the end: the Contacts are gone, the Events reached the Tenant.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transform } from '@swc/core';
import { INGRESS, admin, adminToken, basic, exchange, repoRoot } from './support.js';

const QUICKSTART = path.join(repoRoot, 'docs', 'quickstart.md');
const MARKER = '@@quickstart-block';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const EVENT_NAMES = ['Newsletter Opened', 'Order Completed', 'Plan Upgraded', 'Signed In'];

type Language = 'sh' | 'ts';
interface Block {
  language: Language;
  code: string;
  /** The `## N. …` heading the block is under: its step number, or null outside the steps. */
  step: number | null;
  heading: string;
  line: number;
}

/** Fences that only show something (an answer, a file): they are not run. */
const SHOWN_ONLY = new Set(['', 'json', 'text', 'http']);
const LANGUAGES: Record<string, Language> = { sh: 'sh', bash: 'sh', ts: 'ts', typescript: 'ts' };

function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let heading = '';
  let open: { language: string; start: number; lines: string[] } | null = null;
  markdown.split('\n').forEach((text, index) => {
    if (open) {
      if (/^```\s*$/.test(text)) {
        const language = LANGUAGES[open.language];
        if (language) {
          const step = /^(\d+)\./.exec(heading)?.[1];
          blocks.push({
            language,
            code: open.lines.join('\n'),
            step: step === undefined ? null : Number(step),
            heading,
            line: open.start,
          });
        } else if (!SHOWN_ONLY.has(open.language)) {
          throw new Error(
            `docs/quickstart.md:${open.start}: a \`\`\`${open.language} block is neither run nor marked as shown only`,
          );
        }
        open = null;
      } else {
        open.lines.push(text);
      }
      return;
    }
    const fence = /^```(\S*)\s*$/.exec(text);
    if (fence) open = { language: fence[1]!, start: index + 1, lines: [] };
    else if (text.startsWith('## ')) heading = text.slice(3).trim();
  });
  if (open) throw new Error('docs/quickstart.md: a code block is never closed');
  return blocks;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, timeout = 120_000) {
  return new Promise<Run>((resolve) => {
    execFile(
      file,
      args,
      { env, cwd: repoRoot, timeout, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Each block's output, by the marker printed before it; `failedIn` the block that was running. */
function splitOutput(stdout: string, count: number) {
  const outputs: string[] = Array.from({ length: count }, () => '');
  let current = -1;
  for (const line of stdout.split('\n')) {
    const marker = new RegExp(`^${MARKER} (\\d+|end)$`).exec(line);
    if (marker) {
      current = marker[1] === 'end' ? count : Number(marker[1]);
      continue;
    }
    if (current >= 0 && current < count) outputs[current] += `${line}\n`;
  }
  return { outputs: outputs.map((o) => o.trim()), failedIn: current };
}

function explain(what: string, blocks: Block[], result: Run, failedIn: number): string {
  const block = blocks[failedIn];
  const where = block
    ? `the block at docs/quickstart.md:${block.line} (${block.heading})`
    : 'after the last block';
  return `${what} exited ${result.code} in ${where}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

const lines = (output: string) => output.split('\n').filter((l) => l.trim() !== '');

// What the shell steps leave behind for the checks and for the SDK run.
interface ShellState {
  exported: Record<string, string>;
  tenant: string;
  token: string;
  contactId: string;
}

/** The expected effect of each step's shell block, given its output. */
const shellChecks: Record<number, (output: string, state: ShellState) => void> = {
  1: (output, state) => {
    expect(state.tenant).toMatch(UUID);
    expect(state.exported.HERALD_URL).toBe(INGRESS.replace(/\/+$/, ''));
    expect(state.exported.HERALD_CLIENT_ID).toMatch(/^ck_/);
    expect(state.exported.HERALD_SECRET).toMatch(/^sk_/);
    // The CLI prints the created organization.
    expect(JSON.parse(output)).toMatchObject({ externalId: 'acme', name: 'Acme Inc' });
  },
  2: (output, state) => {
    const answer = JSON.parse(output);
    expect(answer).toStrictEqual({
      accessToken: expect.any(String),
      tokenType: 'Bearer',
      expiresIn: 900,
    });
    expect(state.token).toBe(answer.accessToken);
  },
  3: (output, state) => {
    expect(JSON.parse(output)).toMatchObject({
      id: state.contactId,
      externalId: 'user-42',
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      timeZone: 'Europe/London',
    });
    expect(state.contactId).toMatch(UUID);
  },
  4: (output) => {
    expect(lines(output).map((l) => JSON.parse(l))).toStrictEqual(
      Array.from({ length: 4 }, () => ({ accepted: 1 })),
    );
  },
  5: (output, state) => {
    expect(JSON.parse(output)).toMatchObject({ id: state.contactId, name: 'Ada Lovelace' });
  },
  6: (output, state) => {
    const [first, ...events] = lines(output).map((l) => JSON.parse(l));
    expect(first).toMatchObject({ type: 'contact', data: { id: state.contactId } });
    expect(events.every((e) => e.type === 'event')).toBe(true);
    expect(events.map((e) => e.data.eventName).sort()).toStrictEqual(EVENT_NAMES);
    const named = Object.fromEntries(events.map((e) => [e.data.eventName, e.data]));
    expect(named['Order Completed'].properties).toStrictEqual({ total: 42.5, currency: 'EUR' });
    expect(named['Plan Upgraded']).toMatchObject({
      organizationExternalId: 'acme',
      properties: { plan: 'pro' },
    });
  },
  7: (output) => {
    // The erasure answers 204; the Contact then reads as 404.
    expect(lines(output)).toStrictEqual(['204', '404']);
  },
};

/** The expected output of each step's TypeScript block (the SDK program's console). */
const sdkChecks: Record<number, (output: string, found: { contactId?: string }) => void> = {
  2: (output) => {
    // Creating the client sends nothing and prints nothing.
    expect(output).toBe('');
  },
  3: (output, found) => {
    // The shell steps erased their Contact: this one is new (a reader running both steps
    // interleaved gets "updated" instead).
    const m = /^(created|updated) (\S+)$/.exec(output);
    expect(m).not.toBeNull();
    expect(m![2]).toMatch(UUID);
    found.contactId = m![2];
  },
  4: (output) => {
    expect(lines(output)).toStrictEqual(Array.from({ length: 4 }, () => '{ accepted: 1 }'));
  },
  5: (output) => {
    expect(output).toBe('Ada Lovelace ada@example.com');
  },
  6: (output) => {
    const [first, ...events] = lines(output);
    expect(first).toBe('Contact ada@example.com');
    expect(events.map((e) => e.replace(/^Event /, '')).sort()).toStrictEqual(EVENT_NAMES);
  },
  7: (output) => {
    expect(output).toBe('404 not_found');
  },
};

let blocks: Block[];
let workDir: string;
let shell: ShellState | undefined;
let sdkContactId: string | undefined;

/** The environment a reader's terminal has: the ingress, the admin token, no key yet. */
function readerEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HERALD_URL: INGRESS.replace(/\/+$/, ''),
    ADMIN_TOKEN: adminToken(),
  };
  delete env.NODE_OPTIONS; // jest's VM flags are not the reader's
  delete env.HERALD_CLIENT_ID;
  delete env.HERALD_SECRET;
  return env;
}

beforeAll(() => {
  blocks = codeBlocks(fs.readFileSync(QUICKSTART, 'utf8'));
  const outputDir = path.join(repoRoot, '.herald', 'test-output');
  fs.mkdirSync(outputDir, { recursive: true });
  workDir = fs.mkdtempSync(path.join(outputDir, 'quickstart-'));
});

afterAll(() => {
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

describe('docs/quickstart.md', () => {
  it('walks the seven steps, each with curl and with the SDK, every block checked', () => {
    const steps = (language: Language) => [
      ...new Set(blocks.filter((b) => b.language === language).map((b) => b.step)),
    ];
    expect(steps('sh')).toStrictEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(steps('ts')).toStrictEqual([2, 3, 4, 5, 6, 7]);
    // One block per step and language, so each block's output is its step's.
    for (const language of ['sh', 'ts'] as const) {
      expect(blocks.filter((b) => b.language === language)).toHaveLength(steps(language).length);
    }
  });

  it('its SDK code type-checks against @herald/client', async () => {
    const file = path.join(workDir, 'quickstart-typecheck.ts');
    fs.writeFileSync(file, sdkProgram(false));
    const tsc = path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--noUncheckedIndexedAccess',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--types',
        'node',
        '--skipLibCheck',
        file,
      ],
      readerEnv(),
    );
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);

  it('its shell steps run in order against the stack, each doing what the page says', async () => {
    const shellBlocks = blocks.filter((b) => b.language === 'sh');
    const stateFile = path.join(workDir, 'shell-state.json');
    const script = [
      'set -euo pipefail',
      ...shellBlocks.flatMap((b, i) => [`printf '\\n${MARKER} ${i}\\n'`, b.code]),
      `printf '\\n${MARKER} end\\n'`,
      // What the steps exported (the SDK run gets exactly that) and the variables they set.
      `node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({ exported: process.env, tenant: process.argv[2], token: process.argv[3], contactId: process.argv[4] }))' ${JSON.stringify(stateFile)} "\${TENANT-}" "\${TOKEN-}" "\${CONTACT_ID-}"`,
    ].join('\n');
    const scriptFile = path.join(workDir, 'quickstart.sh');
    fs.writeFileSync(scriptFile, `${script}\n`);

    const result = await run('bash', [scriptFile], readerEnv());
    const { outputs, failedIn } = splitOutput(result.stdout, shellBlocks.length);
    if (result.code !== 0) throw new Error(explain('bash', shellBlocks, result, failedIn));
    shell = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as ShellState;

    shellBlocks.forEach((block, i) => {
      const check = block.step === null ? undefined : shellChecks[block.step];
      if (!check) throw new Error(`no check for the sh block at docs/quickstart.md:${block.line}`);
      try {
        check(outputs[i]!, shell!);
      } catch (error) {
        throw new Error(
          `the sh block at docs/quickstart.md:${block.line} (${block.heading}) printed:\n${outputs[i]}\n\n${String(error)}`,
        );
      }
    });
  }, 180_000);

  it('its SDK code runs against the stack with what the shell steps exported', async () => {
    if (!shell) throw new Error('needs the shell steps (the test before) to have run');
    const tsBlocks = blocks.filter((b) => b.language === 'ts');
    const { code } = await transform(sdkProgram(true), {
      filename: 'quickstart.ts',
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'es6' },
    });
    // Beside the repository's node_modules, so '@herald/client' resolves as in the repository.
    const file = path.join(workDir, 'quickstart.mjs');
    fs.writeFileSync(file, code);

    const result = await run(process.execPath, [file], { ...shell.exported });
    const { outputs, failedIn } = splitOutput(result.stdout, tsBlocks.length);
    if (result.code !== 0) throw new Error(explain('node', tsBlocks, result, failedIn));

    const found: { contactId?: string } = {};
    tsBlocks.forEach((block, i) => {
      const check = block.step === null ? undefined : sdkChecks[block.step];
      if (!check) throw new Error(`no check for the ts block at docs/quickstart.md:${block.line}`);
      try {
        check(outputs[i]!, found);
      } catch (error) {
        throw new Error(
          `the ts block at docs/quickstart.md:${block.line} (${block.heading}) printed:\n${outputs[i]}\n\n${String(error)}`,
        );
      }
    });
    sdkContactId = found.contactId;
  }, 120_000);

  it('leaves the Tenant as the page says: both Contacts erased, the four event names known', async () => {
    if (!shell || !sdkContactId) throw new Error('needs the shell and SDK runs to have passed');
    const { HERALD_CLIENT_ID, HERALD_SECRET } = shell.exported;
    const answer = await exchange(basic(HERALD_CLIENT_ID!, HERALD_SECRET!));
    expect(answer.status).toBe(200);
    const { accessToken } = await answer.json();
    const read = (route: string) =>
      fetch(`${INGRESS}${route}`, { headers: { authorization: `Bearer ${accessToken}` } });

    for (const route of [
      '/v1/contacts/user-42',
      `/v1/contacts/by-id/${shell.contactId}`,
      `/v1/contacts/by-id/${sdkContactId}`,
      `/v1/contacts/by-id/${shell.contactId}/export`,
    ]) {
      const res = await read(route);
      expect({ route, status: res.status }).toStrictEqual({ route, status: 404 });
      await res.body?.cancel();
    }
    expect(sdkContactId).not.toBe(shell.contactId);

    const catalog = await admin('GET', `/tenants/${shell.tenant}/event-names`);
    expect(catalog.status).toBe(200);
    const { eventNames } = await catalog.json<{ eventNames: { name: string }[] }>();
    expect(eventNames.map((e) => e.name)).toStrictEqual(EVENT_NAMES);
  });
});

/**
 * The page's TypeScript blocks as one module, in order (the page tells readers to put them in
 * one file). With `markers`, a line before each block tells its output apart.
 */
function sdkProgram(markers: boolean): string {
  return blocks
    .filter((b) => b.language === 'ts')
    .map((b, i) => (markers ? `console.log(${JSON.stringify(`${MARKER} ${i}`)});\n` : '') + b.code)
    .join('\n\n')
    .concat(markers ? `\nconsole.log(${JSON.stringify(`${MARKER} end`)});\n` : '\n');
}
