import { CLIENT_CODES, ConnectionError, HeraldError } from './errors.js';

/**
 * The parsed lines of a JSON Lines body, as they arrive. Reads with `getReader()` (a browser's
 * ReadableStream need not be async-iterable); stopping early cancels the transfer.
 */
export async function* ndjson(
  body: ReadableStream<Uint8Array>,
  requestId: string | null,
): AsyncGenerator<unknown, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let done = false;
  const parse = (line: string) => {
    try {
      return JSON.parse(line) as unknown;
    } catch (cause) {
      throw new HeraldError('an export line that is not JSON', {
        code: CLIENT_CODES.invalidResponse,
        status: 200,
        requestId,
        cause,
      });
    }
  };
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (cause) {
        // Herald aborts the transfer when a part of it fails midway: never a short file.
        throw new ConnectionError('the export was cut off before its end', {
          code: CLIENT_CODES.network,
          requestId,
          cause,
        });
      }
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line !== '') yield parse(line);
      }
    }
    done = true;
    const rest = (buffer + decoder.decode()).trim();
    if (rest !== '') yield parse(rest);
  } finally {
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
