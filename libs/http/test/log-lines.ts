import { Writable } from 'node:stream';
import { pino } from 'pino';

/** A JSON logger at info whose lines the test reads; `lines.length = 0` forgets them. */
export function loggerToLines(): { logger: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    }),
  );
  return { logger, lines };
}
