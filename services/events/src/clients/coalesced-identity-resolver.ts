import { MAX_IDENTITY_QUERIES } from '@herald/internal-api';
import type { IdentityQuery, IdentityResolver, ResolvedIdentity } from '../domain/identities.js';

interface Waiting {
  queries: readonly IdentityQuery[];
  resolve: (answers: ResolvedIdentity[]) => void;
  reject: (err: unknown) => void;
}

/**
 * One Tenant's lookups asked in one turn of the event loop go to `resolve` as one call (up to
 * `maxQueries` queries a call; a request is never split), and each request gets its own answers
 * back in order. Under load this turns one call to the contacts service per request into one per
 * Tenant per turn. A call that fails fails every request in it, each as it would have alone.
 */
export function coalescedIdentityResolver(
  resolve: IdentityResolver,
  maxQueries = MAX_IDENTITY_QUERIES,
): IdentityResolver {
  let pending = new Map<string, Waiting[]>();

  function send(tenantId: string, chunk: readonly Waiting[]): void {
    resolve(
      tenantId,
      chunk.flatMap((w) => w.queries),
    ).then(
      (answers) => {
        let at = 0;
        for (const w of chunk) {
          w.resolve(answers.slice(at, at + w.queries.length));
          at += w.queries.length;
        }
      },
      (err: unknown) => chunk.forEach((w) => w.reject(err)),
    );
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
      if (pending.size === 0) setImmediate(flush);
      const waiting = pending.get(tenantId) ?? [];
      waiting.push({ queries, resolve: resolveOne, reject: rejectOne });
      pending.set(tenantId, waiting);
    });
}
