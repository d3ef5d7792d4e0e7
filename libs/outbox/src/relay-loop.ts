import type { PollResult } from './publish.js';

export interface RelayLoopOptions {
  poll: () => Promise<PollResult>;
  logger: {
    warn(obj: object, msg?: string): void;
    info(obj: object, msg?: string): void;
  };
  /** The outbox's name, in the log lines. */
  name: string;
  pollIntervalMs: number;
  maxBackoffMs: number;
}

export interface RelayLoop {
  /** Starts polling; false when it already runs. */
  start(): boolean;
  /** Ends the wait in progress, lets the poll in flight finish, then resolves. */
  stop(): Promise<void>;
}

/** While publishing keeps failing, a warning at most this often (the first at once). */
const WARN_EVERY_MS = 60_000;

/**
 * Polls until stopped: again at once while more is waiting, after `pollIntervalMs` when caught
 * up, and with exponential backoff (up to `maxBackoffMs`) while polls fail. Failures are logged
 * (when they start and once a minute after) and never thrown.
 */
export function createRelayLoop(options: RelayLoopOptions): RelayLoop {
  const { poll, logger, name, pollIntervalMs, maxBackoffMs } = options;
  let loop: Promise<void> | undefined;
  let stopping = false;
  let wake: (() => void) | undefined;

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  }

  async function run(): Promise<void> {
    let failures = 0;
    let failingSince = 0;
    let lastWarning = 0;
    while (!stopping) {
      let wait = pollIntervalMs;
      try {
        const { published, more } = await poll();
        if (failures > 0) {
          logger.info(
            {
              outbox: name,
              failedAttempts: failures,
              downForMs: Date.now() - failingSince,
              published,
            },
            'outbox relay recovered',
          );
          failures = 0;
        }
        if (more) wait = 0;
      } catch (err) {
        if (failures === 0) failingSince = Date.now();
        failures += 1;
        if (failures === 1 || Date.now() - lastWarning >= WARN_EVERY_MS) {
          lastWarning = Date.now();
          logger.warn(
            {
              outbox: name,
              err,
              failedAttempts: failures,
              failingForMs: Date.now() - failingSince,
            },
            'outbox relay cannot publish; the messages stay in the outbox and are retried',
          );
        }
        wait = Math.min(maxBackoffMs, pollIntervalMs * 2 ** Math.min(failures - 1, 20));
      }
      if (stopping) break;
      if (wait > 0) await sleep(wait);
    }
  }

  return {
    start() {
      if (loop) return false;
      stopping = false;
      loop = run();
      return true;
    },
    async stop() {
      stopping = true;
      wake?.();
      const running = loop;
      await running;
      if (loop === running) loop = undefined;
    },
  };
}
