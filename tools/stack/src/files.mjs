// File helpers for the local stack: reading, writing only on change, templates, log tails,
// build freshness and directory permissions. Node built-ins only.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { warn } from './output.mjs';

export function ensureDir(dir, mode = 0o755) {
  fs.mkdirSync(dir, { recursive: true, mode });
  return dir;
}

export function sha256(data) {
  return createHash('sha256').update(data).digest('hex');
}

export function readText(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw err;
  }
}

/** Writes `content` only when it differs; returns true when the file changed. */
export function writeIfChanged(file, content, mode) {
  if (readText(file) === content) return false;
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, content, mode === undefined ? undefined : { mode });
  if (mode !== undefined) fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, file);
  return true;
}

export function mtimeMs(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

export function exists(file) {
  return fs.existsSync(file);
}

/** `{{NAME}}` placeholders; an unknown or missing one is an error, not an empty string. */
export function renderTemplate(templateFile, values) {
  const text = fs.readFileSync(templateFile, 'utf8');
  return text.replace(/\{\{([A-Z0-9_]+)\}\}/g, (_, key) => {
    if (!(key in values)) throw new Error(`${templateFile}: no value for {{${key}}}`);
    return String(values[key]);
  });
}

/** Last `lines` lines of a file (empty string when missing). Reads at most the last 256 KiB. */
export function tailFile(file, lines = 50) {
  let fd;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const size = fs.fstatSync(fd).size;
    const len = Math.min(size, 256 * 1024);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - len);
    const all = buf.toString('utf8').split('\n');
    if (all.at(-1) === '') all.pop();
    return all.slice(-lines).join('\n');
  } finally {
    fs.closeSync(fd);
  }
}

/** Newest mtime of any file below `dir` (0 when missing); skips node_modules. */
export function newestMtime(dir, limit = 20000) {
  let newest = 0;
  let seen = 0;
  const stack = [dir];
  while (stack.length && seen < limit) {
    const d = stack.pop();
    let entries;
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (e.name === 'node_modules') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else {
        seen++;
        const m = mtimeMs(p);
        if (m > newest) newest = m;
      }
    }
  }
  return newest;
}

/**
 * Makes every directory from / down to `dir` searchable (x) by other users, so that a daemon
 * running as another user (postgres, nginx's workers) can reach its files below it. Only adds
 * o+x, never read permission; prints what it changed outside the data folder.
 */
export function ensureTraversable(dir, quietBelow) {
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  /** @type {string} */
  let cur = path.sep;
  for (const part of [''].concat(parts)) {
    cur = part ? path.join(cur, part) : cur;
    let st;
    try {
      st = fs.statSync(cur);
    } catch {
      return;
    }
    if ((st.mode & 0o001) === 0) {
      fs.chmodSync(cur, (st.mode & 0o7777) | 0o001);
      if (!quietBelow || !cur.startsWith(quietBelow)) {
        warn(
          `note: added o+x (search only) to ${cur} so the stack's daemons can reach their files`,
        );
      }
    }
  }
}
