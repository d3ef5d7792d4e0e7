// The package as published: its generated types are up to date with Herald's OpenAPI document,
// and its source needs nothing but what Node 24 and browsers both have.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function run(args: string[]): Promise<{ code: number | null; output: string }> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // jest's VM flags are not the script's business
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd: packageDir, env, timeout: 120_000 },
      (error, stdout, stderr) => {
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
          output: stdout + stderr,
        });
      },
    );
  });
}

function sourceFiles(dir = path.join(packageDir, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(path.join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [path.join(dir, entry.name)]
        : [],
  );
}

describe('the package', () => {
  it('when the OpenAPI types are generated afresh, then they equal src/generated/openapi.ts (else: npm run generate -w @herald/client)', async () => {
    const { code, output } = await run(['scripts/generate.mjs', '--check']);
    expect(output).toMatch(/up to date/);
    expect(code).toBe(0);
  }, 120_000);

  it('when its source is read, then it imports no Node module and uses no Node-only global', () => {
    for (const file of sourceFiles()) {
      // The code, not its comments.
      const text = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      const relative = path.relative(packageDir, file);
      expect({
        relative,
        nodeImport: /from ['"](node:|fs|path|http|https|net|crypto|buffer)['"]/.test(text),
      }).toStrictEqual({ relative, nodeImport: false });
      expect({
        relative,
        nodeGlobal: /\b(Buffer|process|require)\s*[.(]/.test(text),
      }).toStrictEqual({ relative, nodeGlobal: false });
    }
  });

  it('when its manifest is read, then it has no runtime dependency and is publishable, with provenance', () => {
    const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
    expect(manifest.name).toBe('@herald/client');
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies ?? {}).toStrictEqual({});
    expect(manifest.peerDependencies ?? {}).toStrictEqual({});
    expect(manifest.type).toBe('module');
    expect(manifest.exports['.']).toStrictEqual({
      types: './dist/index.d.ts',
      default: './dist/index.js',
    });
    expect(manifest.files).toContain('dist');
    // npm publish then attaches a signed statement of the CI run that built it, and refuses to
    // publish from anywhere else
    expect(manifest.publishConfig).toStrictEqual({ access: 'public', provenance: true });
  });
});
