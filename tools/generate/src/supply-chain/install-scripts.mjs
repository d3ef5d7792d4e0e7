// Dependencies with install scripts (preinstall, install or postinstall; package-lock.json marks
// them `hasInstallScript`) against the reviewed list beside this file. npm runs none of those
// scripts here (.npmrc: ignore-scripts), so a new one must be checked to work without its script
// before it is added to the list. The check runs in `npm test` (install-scripts.test.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REVIEWED_FILE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'reviewed-install-scripts.json',
);

/** The package a lockfile key installs: `node_modules/a/node_modules/@s/b` is `@s/b`. */
export function packageName(key, entry = {}) {
  if (entry.name) return entry.name;
  const at = key.lastIndexOf('node_modules/');
  return at >= 0 ? key.slice(at + 'node_modules/'.length) : key;
}

/**
 * Every package with an install script in a lockfile (version 2 or 3): name → {versions, paths}.
 * The root project and workspace packages count too (their own scripts run on install).
 */
export function installScriptPackages(lock) {
  if (!lock?.packages) {
    throw new Error('package-lock.json has no "packages" (lockfileVersion 2 or 3 is needed)');
  }
  const found = new Map();
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (!entry.hasInstallScript) continue;
    const name = key === '' ? (lock.name ?? '(root)') : packageName(key, entry);
    const item = found.get(name) ?? { versions: [], paths: [] };
    if (entry.version && !item.versions.includes(entry.version)) item.versions.push(entry.version);
    item.paths.push(key === '' ? '.' : key);
    found.set(name, item);
  }
  return found;
}

/** The reviewed list: {packages: {name: {why}}}, each with a reason. */
export function readReviewed(file = REVIEWED_FILE) {
  const list = JSON.parse(fs.readFileSync(file, 'utf8'));
  const problems = Object.entries(list.packages ?? {})
    .filter(([, entry]) => typeof entry?.why !== 'string' || entry.why.trim() === '')
    .map(([name]) => `${name}: no "why"`);
  if (!list.packages || problems.length) {
    throw new Error(`${file}: ${problems.join('; ') || 'no "packages"'}`);
  }
  return list;
}

/**
 * {found, unreviewed, stale}: the packages with install scripts, those of them missing from the
 * reviewed list, and names on the list that no longer have one in the lockfile.
 */
export function checkInstallScripts(lock, reviewed) {
  const found = installScriptPackages(lock);
  const listed = new Set(Object.keys(reviewed.packages));
  const unreviewed = [...found.entries()]
    .filter(([name]) => !listed.has(name))
    .map(([name, { versions, paths }]) => ({ name, versions, paths }));
  const stale = [...listed].filter((name) => !found.has(name));
  return { found, unreviewed, stale };
}

/** What the check says when it fails; empty when it passes. */
export function describeProblems({ unreviewed, stale }, listFile = 'the reviewed list') {
  return [
    ...unreviewed.map(
      ({ name, versions, paths }) =>
        `${name}@${versions.join(', ') || '?'} (${paths.join(', ')}) has an install script and ` +
        `is not in ${listFile}: check that it works without the script (npm runs none here), ` +
        'then add it with the reason',
    ),
    ...stale.map(
      (name) => `${name} is in ${listFile} but no longer has an install script in the lockfile`,
    ),
  ];
}
