// The README's layout table is the newcomer's map of the repository: every workspace package
// (package.json `workspaces`) has its row, and every path a row names exists.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { repoRoot } from '@herald/stack/config.mjs';

const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
const layout = readme.slice(readme.indexOf('## Repository layout'));
const table = layout.slice(0, layout.indexOf('\n\n', layout.indexOf('\n| ')));
/** The paths of the first column: `libs/auth`, `services/*`/`Dockerfile`, … (a cell may name several). */
const named = table
  .split('\n')
  .filter((line) => line.startsWith('| `'))
  .flatMap((line) => [...line.split('|')[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]));

/** Every folder that a `workspaces` pattern of the root package.json matches. */
function workspacePackages() {
  const { workspaces } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  return workspaces.flatMap((pattern) => {
    const parent = pattern.replace(/\/\*$/, '');
    return fs
      .readdirSync(path.join(repoRoot, parent), { withFileTypes: true })
      .filter(
        (d) =>
          d.isDirectory() && fs.existsSync(path.join(repoRoot, parent, d.name, 'package.json')),
      )
      .map((d) => `${parent}/${d.name}`);
  });
}

test('the layout table names every workspace package', () => {
  const missing = workspacePackages().filter((dir) => !named.includes(dir));
  assert.deepEqual(missing, [], `README.md's layout table lacks a row for ${missing.join(', ')}`);
});

test('every path the layout table names exists', () => {
  const plain = named.filter((p) => !p.includes('*'));
  const absent = plain.filter((p) => !fs.existsSync(path.join(repoRoot, p.replace(/\/$/, ''))));
  assert.ok(plain.length > 20, `read ${plain.length} paths from the table`);
  assert.deepEqual(absent, [], `README.md's layout table names paths that do not exist`);
});
