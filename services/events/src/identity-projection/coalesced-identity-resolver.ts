import { MAX_IDENTITY_QUERIES } from '@herald/internal-api';
import type { IdentityQuery, IdentityResolver, ResolvedIdentity } from '../recording/identities.js';

interface Waiting {
  queries: readonly IdentityQuery[];
  resolve: (answers: ResolvedIdentity[]) => void;
  reject: (err: unknown) => void;
}

/**
 * One Tenant's lookups asked in one turn of the event loop go to `resolve` as one call (up to
 * `maxQueries` queries a call; a request is never split), and each request gets its own answers
 * back in order. While `maxInFlight` calls are out, lookups wait for one to come back and then go
 * together (one call per Tenant, as in a turn). Under load this turns one call to the contacts
 * service per request into one per Tenant per turn, or per returning call. A call that fails
 * fails every request in it, each as it would have alone.
 */
export function coalescedIdentityResolver(
  resolve: IdentityResolver,
  maxQueries = MAX_IDENTITY_QUERIES,
  maxInFlight = 2,
): IdentityResolver {
  let pending = new Map<string, Waiting[]>();
  let inFlight = 0;

  function send(tenantId: string, chunk: readonly Waiting[]): void {
    inFlight += 1;
    void resolve(
      tenantId,
      chunk.flatMap((w) => w.queries),
    )
      .then(
        (answers) => {
          let at = 0;
          for (const w of chunk) {
            w.resolve(answers.slice(at, at + w.queries.length));
            at += w.queries.length;
          }
        },
        (err: unknown) => chunk.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        // The lookups that waited for a call to come back go now, together.
        inFlight -= 1;
        if (pending.size > 0) flush();
      });
  }

  function flush(): void {
    const groups = pending;
    pending = new Map();
    for (const [tenantId, waiting] of groups) {
      let chunk: Waiting[] = [];
      let size = 0;
      for (const w of waiting) {
        if (chunk.length > 0 && size + w.queries.length > maxQueries) {
          send(tenantId, chunk);
          chunk = [];
          size = 0;
        }
        chunk.push(w);
        size += w.queries.length;
      }
      send(tenantId, chunk);
    }
  }

  return (tenantId, queries) =>
    new Promise((resolveOne, rejectOne) => {
      if (pending.size === 0) {
        setImmediate(() => {
          if (inFlight < maxInFlight) flush();
        });
      }
      const waiting = pending.get(tenantId) ?? [];
      waiting.push({ queries, resolve: resolveOne, reject: rejectOne });
      pending.set(tenantId, waiting);
    });
}
