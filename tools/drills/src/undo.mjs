// What a drill started and must take back, also when it fails or is interrupted, and the scratch
// folder it works in.
import fs from 'node:fs';
import path from 'node:path';
import { dataDir } from '@herald/stack/config.mjs';
import { makeScratch } from './restored-postgres.mjs';

/**
 * @typedef {object} Undo What the drill has to take back, last registered first.
 * @property {(step: () => unknown) => void} push
 * @property {(step: () => unknown) => void} remove  a step no longer needed
 * @property {() => Promise<void>} run  runs every step once, whatever the others do; a second
 *   call (the signal handler and the drill's own `finally`) waits for the first
 */

/**
 * @param {(line: string) => void} log
 * @returns {Undo}
 */
export function createUndo(log) {
  /** @type {(() => unknown)[]} */
  const steps = [];
  /** @type {Promise<void> | undefined} */
  let running;
  const runAll = async () => {
    for (let step = steps.pop(); step; step = steps.pop()) {
      try {
        await step();
      } catch (err) {
        log(`clean-up: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };
  return {
    push: (step) => void steps.push(step),
    remove: (step) => {
      const at = steps.lastIndexOf(step);
      if (at !== -1) steps.splice(at, 1);
    },
    run: () => (running ??= runAll()),
  };
}

/**
 * On SIGINT or SIGTERM: the undo steps, then exit 130. Returns what removes the handlers.
 * @param {Undo} undo
 * @param {(line: string) => void} log
 */
export function undoOnSignal(undo, log) {
  const onSignal = () => {
    log('interrupted: stopping what the drill started');
    void undo.run().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/**
 * Runs `drill` with a scratch folder of its own under <data dir>/drills and an undo list; on
 * return, failure or Ctrl-C everything in the list is taken back and the folder removed.
 * @template T
 * @param {string} name
 * @param {(line: string) => void} log
 * @param {(scratch: string, undo: Undo) => Promise<T>} drill
 * @returns {Promise<T>}
 */
export async function inScratch(name, log, drill) {
  const drills = path.join(dataDir, 'drills');
  const scratch = path.join(drills, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const undo = createUndo(log);
  const removeHandlers = undoOnSignal(undo, log);
  try {
    undo.push(() => fs.rmSync(scratch, { recursive: true, force: true }));
    // Traversable by PostgreSQL's OS user, who owns the scratch folder inside.
    fs.mkdirSync(drills, { recursive: true, mode: 0o755 });
    makeScratch(scratch);
    return await drill(scratch, undo);
  } finally {
    await undo.run();
    removeHandlers();
  }
}
