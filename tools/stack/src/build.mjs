// npm dependencies and the workspace build, before the stack starts the services.
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './config.mjs';
import { StackError, isQuiet, say } from './output.mjs';
import { exists, mtimeMs } from './files.mjs';
import { run, which } from './processes.mjs';

/** @returns {[string, string[]]} the program and the arguments before npm's own */
function npmBin() {
  // npm_execpath is set when we run under `npm run`/`npm start`: use that same npm.
  const fromNpm = process.env.npm_execpath;
  if (fromNpm && /npm-cli\.js$/.test(fromNpm) && exists(fromNpm))
    return [process.execPath, [fromNpm]];
  const npm = which('npm');
  if (!npm) throw new StackError('build', 'npm is not on PATH');
  return [npm, []];
}

async function npm(args, what) {
  const [cmd, pre] = npmBin();
  try {
    await run(cmd, [...pre, ...args], {
      cwd: repoRoot,
      inherit: !isQuiet(),
      timeoutMs: 30 * 60000,
    });
  } catch (err) {
    throw new StackError('build', `${what} failed: ${err.message}`);
  }
}

/**
 * Installs the lockfile's dependencies when node_modules is missing or stale. Not `npm ci`:
 * the registry reachable here lacks some other platforms' optional binaries (e.g.
 * @swc/core-darwin-*), so the lockfile cannot list them and npm ci's strict check refuses it.
 * `npm install --no-save` installs the same locked versions and leaves the lockfile untouched.
 */
export async function ensureNodeModules() {
  const lock = path.join(repoRoot, 'package-lock.json');
  const installed = path.join(repoRoot, 'node_modules', '.package-lock.json');
  const hasLock = exists(lock);
  const stale =
    !exists(path.join(repoRoot, 'node_modules')) || !exists(installed)
      ? true
      : hasLock
        ? mtimeMs(lock) > mtimeMs(installed)
        : mtimeMs(path.join(repoRoot, 'package.json')) > mtimeMs(installed);
  if (!stale) return 'up to date';
  const args = ['install', '--no-audit', '--no-fund', ...(hasLock ? ['--no-save'] : [])];
  say(`build: npm ${args.join(' ')}`);
  await npm(args, 'npm install');
  return 'installed';
}

function workspaceHasBuildScripts() {
  let pkg;
  try {
    pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  } catch {
    return false;
  }
  for (const pattern of pkg.workspaces ?? []) {
    const parent = path.join(repoRoot, pattern.replace(/\/\*$/, ''));
    let names = [];
    try {
      names = pattern.endsWith('/*') ? fs.readdirSync(parent) : [''];
    } catch {
      continue;
    }
    for (const n of names) {
      try {
        const p = JSON.parse(fs.readFileSync(path.join(parent, n, 'package.json'), 'utf8'));
        if (p.scripts?.build) return true;
      } catch {
        // not a package
      }
    }
  }
  return false;
}

/** `turbo run build` (cached builds take about a second). */
export async function buildWorkspace() {
  if (!workspaceHasBuildScripts()) {
    say('build: no workspace package has a build script yet, skipped');
    return 'nothing to build';
  }
  const turbo = path.join(repoRoot, 'node_modules', '.bin', 'turbo');
  const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };
  say('build: turbo run build');
  try {
    if (exists(turbo)) {
      await run(
        turbo,
        ['run', 'build', `--output-logs=${isQuiet() ? 'errors-only' : 'new-only'}`],
        {
          cwd: repoRoot,
          env,
          inherit: !isQuiet(),
          timeoutMs: 30 * 60000,
        },
      );
    } else {
      const [cmd, pre] = npmBin();
      await run(cmd, [...pre, 'run', 'build', '--workspaces', '--if-present'], {
        cwd: repoRoot,
        env,
        inherit: !isQuiet(),
        timeoutMs: 30 * 60000,
      });
    }
  } catch (err) {
    throw new StackError('build', `the build failed: ${err.message}`);
  }
  return 'built';
}
