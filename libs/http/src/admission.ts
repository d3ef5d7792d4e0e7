import { context } from '@herald/telemetry';
import type { RequestHandler } from 'express';
import { MAX_BODY_BYTES } from './body.js';

export interface BodyAdmissionOptions {
  /**
   * Request bodies (by Content-Length; a compressed one counts as the largest body accepted)
   * being handled at once, in bytes. A request that would go
   * over waits, in arrival order, before its body is read; one larger than the whole budget
   * waits until nothing else is in flight and then goes alone.
   */
  maxBytesInFlight: number;
}

/** What the admission holds now (the tests read it). */
export interface AdmissionState {
  bytesInFlight: number;
  requestsInFlight: number;
  waiting: number;
}

export interface BodyAdmission {
  /** The middleware: put it after the access guard and before the body is parsed. */
  handler: RequestHandler;
  state(): AdmissionState;
}

interface Waiter {
  bytes: number;
  admit: () => void;
}

/** Whether the body is sent compressed (any Content-Encoding but identity). */
function isEncoded(contentEncoding: string | undefined): boolean {
  return contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity';
}

/**
 * Bounds the work a process has in hand by the size of the bodies it is handling. Each body
 * becomes many objects while it is parsed, checked and written, and they live until the answer:
 * without a bound, a burst of large requests is all parsed at once and the heap grows with the
 * number of connections, though the CPU can only work through a few at a time anyway. A request
 * that waits keeps its body unread in the socket, so waiting costs almost no memory. The budget
 * is given back when the response ends or the connection closes, whichever comes first; a
 * client that goes away while waiting leaves the queue.
 */
export function bodyAdmission(options: BodyAdmissionOptions): BodyAdmission {
  const { maxBytesInFlight } = options;
  if (!Number.isInteger(maxBytesInFlight) || maxBytesInFlight < 1) {
    throw new RangeError('maxBytesInFlight must be a positive integer');
  }
  let bytesInFlight = 0;
  let requestsInFlight = 0;
  const queue: Waiter[] = [];

  // A request's bytes are capped at the budget, so one always fits when nothing is in flight.
  const fits = (bytes: number) => bytesInFlight + bytes <= maxBytesInFlight;

  function take(bytes: number): () => void {
    bytesInFlight += bytes;
    requestsInFlight += 1;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      bytesInFlight -= bytes;
      requestsInFlight -= 1;
      admitWaiting();
    };
  }

  // In arrival order: a large request at the head is not passed by smaller ones behind it.
  function admitWaiting(): void {
    while (queue.length > 0 && fits(queue[0]!.bytes)) queue.shift()!.admit();
  }

  const handler: RequestHandler = (req, res, next) => {
    const length = Number(req.get('content-length'));
    // Chunked or unknown: counted as the largest body the parser accepts. So is a compressed
    // body: what the process holds is the inflated body, which may be up to a thousand times
    // the bytes sent (the parser stops it at the limit).
    const declared =
      Number.isSafeInteger(length) && length >= 0 && !isEncoded(req.get('content-encoding'))
        ? length
        : MAX_BODY_BYTES;
    const bytes = Math.min(declared, maxBytesInFlight);
    const enter = () => {
      res.once('close', take(bytes));
      next();
    };
    if (queue.length === 0 && fits(bytes)) {
      enter();
      return;
    }
    const waiter: Waiter = {
      bytes,
      // Called from another request's 'close', whose context that listener runs in: the
      // waiting request goes on in its own.
      admit: context.bind(context.active(), () => {
        res.off('close', leave);
        enter();
      }),
    };
    const leave = () => {
      const at = queue.indexOf(waiter);
      if (at < 0) return;
      queue.splice(at, 1);
      // It may have been the head that the others waited behind.
      if (at === 0) admitWaiting();
    };
    res.once('close', leave);
    queue.push(waiter);
  };

  return {
    handler,
    state: () => ({ bytesInFlight, requestsInFlight, waiting: queue.length }),
  };
}
