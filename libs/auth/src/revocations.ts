import { authRoutes, internalClient } from '@herald/internal-api';
import { TOKEN_TTL_SECONDS } from './token.js';

/**
 * How far back the revocation list reaches: a token lives 900 s, plus a minute for clock
 * tolerance and slow polls. A key revoked earlier has no unexpired token left.
 */
export const REVOCATION_LIST_WINDOW_SECONDS = TOKEN_TTL_SECONDS + 60;

interface WarnLogger {
  warn(obj: object, msg: string): void;
}

export interface RevocationListOptions {
  /** The auth service, e.g. http://auth:8080, whose internal route `revokedKeys` lists them. */
  authUrl: string;
  serviceToken: string;
  logger: WarnLogger;
  /** Poll period; the API allows 5 s from revocation to refusal. Default 1 s. */
  intervalMs?: number;
}

/** The keys revoked recently enough that tokens issued for them may still be unexpired. */
export interface RevocationList {
  isRevoked(clientId: string): boolean;
  /** Fetches once and then polls until close; resolves after the first attempt. */
  start(): Promise<void>;
  /** Whether the list was fetched at least once: until then the process is not ready. */
  loaded(): boolean;
  close(): void;
}

/**
 * Polled, not looked up per request: refusing a revoked key's tokens costs a Set lookup, and
 * an auth outage keeps the last list (a key cannot be revoked while auth is down anyway).
 */
export function createRevocationList(options: RevocationListOptions): RevocationList {
  const { authUrl, serviceToken, logger, intervalMs = 1_000 } = options;
  const { revokedKeys } = internalClient(authRoutes, {
    baseUrl: authUrl,
    serviceToken,
    serviceName: 'the auth service',
    // Below the poll period, so a slow auth cannot stretch the 5 s from revocation to refusal.
    timeoutMs: Math.max(200, intervalMs * 0.8),
  });
  let revoked = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let failingSince: number | null = null;
  let closed = false;
  let loadedOnce = false;

  async function refresh(): Promise<void> {
    try {
      const res = await revokedKeys.send({});
      if (!res.ok) throw new Error(`revocation list answered ${res.status}`);
      revoked = new Set(revokedKeys.parse(await res.json()).clientIds);
      loadedOnce = true;
      if (failingSince !== null) logger.warn({}, 'revocation list: auth answers again');
      failingSince = null;
    } catch (err) {
      // Logged when it starts failing and once a minute after, not every second.
      const now = Date.now();
      if (failingSince === null || now - failingSince >= 60_000) {
        failingSince = now;
        logger.warn({ err }, 'revocation list: cannot reach auth; keeping the last list');
      }
    }
  }

  async function loop(): Promise<void> {
    await refresh();
    if (closed) return;
    timer = setTimeout(() => void loop(), intervalMs);
    timer.unref();
  }

  return {
    isRevoked: (clientId) => revoked.has(clientId),
    loaded: () => loadedOnce,
    async start() {
      await loop();
    },
    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
