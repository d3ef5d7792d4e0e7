/**
 * A job run every `intervalMs` (the first run after one interval), never two runs at once;
 * a failure is the job's own to report. `stop` waits for a run in flight.
 */
export function every(intervalMs: number, job: () => Promise<void>): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = job().finally(() => {
        running = undefined;
        schedule();
      });
    }, intervalMs);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
