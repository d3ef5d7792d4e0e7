import type { RequestHandler, Response } from 'express';
import { errors, sendError } from '@herald/errors';

/**
 * How long a public route may take before Herald answers 503 itself: below the attempt timeouts
 * clients are told to use (the SDK's 15 s, the fault suite's 10 s), so a caller whose request
 * waits on an unreachable or very slow dependency hears a retryable answer instead of timing out.
 */
export const PUBLIC_ANSWER_DEADLINE_MS = 8_000;

/**
 * Answers 503 `service_unavailable` with Retry-After when the route has not begun its answer
 * within `ms`. The handler runs on (a commit under way may still land, as after a client's own
 * timeout), and whatever it answers later is dropped: the client resends with the same
 * dedupKeys, as after any 5xx.
 */
export function answerDeadline(ms: number = PUBLIC_ANSWER_DEADLINE_MS): RequestHandler {
  return (_req, res, next) => {
    const timer = setTimeout(() => {
      if (res.headersSent || res.writableEnded) return;
      sendError(
        res,
        errors.unavailable(
          `no answer within ${ms / 1000} s: a dependency is slow or unreachable; retry later (with the same dedupKeys)`,
        ),
      );
      dropLateAnswer(res);
    }, ms);
    res.once('close', () => clearTimeout(timer));
    next();
  };
}

/** The handler's own answer, once the deadline has answered for it, goes nowhere. */
function dropLateAnswer(res: Response): void {
  const ignore = (() => res) as never;
  res.setHeader = ignore;
  res.writeHead = ignore;
  res.write = (() => true) as never;
  res.end = ignore;
}
