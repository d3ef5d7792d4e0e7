import type { Readable } from 'node:stream';

/**
 * Reads a consumer's message stream in batches: each batch is what the stream held when it was
 * read (at most `maxMessages`, in the order received, so each partition's in offset order), and
 * the next is read only once `apply` resolved. Meanwhile the stream goes on fetching, up to its
 * high-water mark. Resolves when the stream ends; rejects with the stream's error or `apply`'s,
 * and then the stream is destroyed.
 */
export async function consumeBatches<T>(
  stream: Readable & AsyncIterable<T>,
  apply: (messages: T[]) => Promise<void>,
  maxMessages = 1_000,
): Promise<void> {
  const messages: AsyncIterable<T> = stream;
  let batch: T[] = [];
  for await (const message of messages) {
    batch.push(message);
    if (stream.readableLength === 0 || batch.length >= maxMessages) {
      const full = batch;
      batch = [];
      await apply(full);
    }
  }
  if (batch.length > 0) await apply(batch);
}
