// The access token: exchanged for the API key on first use (`POST /v1/token`, HTTP Basic),
// reused until it is within the refresh margin of its expiry, renewed once after a 401. One
// exchange at a time, shared by every concurrent caller.
import { HeraldError, CLIENT_CODES } from './errors.js';
import { send, type CallOptions, type TokenProvider, type Transport } from './http.js';
import type { TokenAnswer } from './types.js';

interface CachedToken {
  value: string;
  /** On the transport's clock (ms). */
  refreshAt: number;
  expiresAt: number;
}

export class TokenCache implements TokenProvider {
  private current: CachedToken | undefined;
  private pending: Promise<CachedToken> | undefined;
  /** Exchanges done, for tests and metrics. */
  exchanges = 0;

  constructor(
    private readonly transport: Transport,
    /** `Basic …` of the API key. */
    private readonly authorization: string,
    private readonly refreshMarginMs: number,
  ) {}

  private now(): number {
    return (this.transport.now ?? Date.now)();
  }

  async token(options: CallOptions = {}): Promise<string> {
    const current = this.current;
    if (current && this.now() < current.refreshAt) return current.value;
    return (await this.exchange(options)).value;
  }

  async renew(rejected: string, options: CallOptions = {}): Promise<string> {
    // Only the first caller turned away with this token drops it; the others, turned away with
    // it too, wait for that same exchange (or find its result).
    if (!this.pending && this.current?.value === rejected) this.current = undefined;
    return this.token(options);
  }

  /** Forgets the token: the next call exchanges the key again. */
  clear(): void {
    this.current = undefined;
  }

  private exchange(options: CallOptions): Promise<CachedToken> {
    this.pending ??= this.fetchToken(options).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async fetchToken(options: CallOptions): Promise<CachedToken> {
    const startedAt = this.now();
    // The exchange is shared: one caller's abort must not fail the others' exchange.
    const retry: CallOptions = { ...options, signal: undefined, requestId: undefined };
    const answer = await send(
      this.transport,
      { method: 'POST', path: '/v1/token', auth: { authorization: this.authorization } },
      retry,
    );
    this.exchanges += 1;
    const body = answer.body as Partial<TokenAnswer> | undefined;
    if (typeof body?.accessToken !== 'string' || typeof body.expiresIn !== 'number') {
      throw new HeraldError('the token exchange answered without an access token', {
        code: CLIENT_CODES.invalidResponse,
        status: answer.status,
        requestId: answer.headers.get('x-request-id'),
        attempts: answer.attempts,
      });
    }
    // Counted from before the request: the token cannot outlive what the clock here says.
    const lifetimeMs = body.expiresIn * 1000;
    const expiresAt = startedAt + lifetimeMs;
    const margin = Math.min(this.refreshMarginMs, lifetimeMs / 2);
    const token = { value: body.accessToken, expiresAt, refreshAt: expiresAt - margin };
    this.current = token;
    return token;
  }
}
