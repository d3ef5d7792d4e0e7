// The stack's lock: one `up`, `down` or `ensureRelays` at a time, in this process and across
// processes (.herald/run/stack.lock holds the owner's pid). Node built-ins only.
import fs from 'node:fs';
import path from 'node:path';
import { runDir } from './config.mjs';
import { ensureDir } from './files.mjs';
import { StackError, say } from './output.mjs';
import { isAlive, readPid, sleep } from './processes.mjs';

const lockFile = path.join(runDir, 'stack.lock');
let holdingLock = false;
let queue = Promise.resolve();

function releaseLockSync() {
  if (readPid(lockFile) === process.pid) fs.rmSync(lockFile, { force: true });
}
process.on('exit', () => {
  if (holdingLock) releaseLockSync();
});

/** Runs `fn` holding the lock: one at a time in this process, and across processes. */
export function withLock(fn) {
  const run = queue.then(() => withFileLock(fn));
  queue = run.catch(() => {});
  return run;
}

async function withFileLock(fn) {
  ensureDir(runDir);
  const deadline = Date.now() + 15 * 60000;
  let told = false;
  for (;;) {
    try {
      fs.writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const holder = readPid(lockFile);
    if (!holder || !isAlive(holder)) {
      fs.rmSync(lockFile, { force: true }); // stale: its owner is gone
      continue;
    }
    if (!told) {
      say(`waiting for another stack command (pid ${holder}) to finish...`);
      told = true;
    }
    if (Date.now() > deadline) {
      throw new StackError('stack', `another stack command (pid ${holder}) holds ${lockFile}`);
    }
    await sleep(250);
  }
  holdingLock = true;
  try {
    return await fn();
  } finally {
    holdingLock = false;
    releaseLockSync();
  }
}
