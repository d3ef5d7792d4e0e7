import { HeraldError, UnresolvedIdentityError } from './errors.js';
import { prepareEvent, type EventInput, type PreparedEvent } from './event.js';
import {
  basicAuthorization,
  send,
  type CallOptions,
  type FetchLike,
  type Transport,
} from './http.js';
import { ndjson } from './ndjson.js';
import { DEFAULT_RETRY, type RetryOptions } from './retry.js';
import { TokenCache } from './tokens.js';
import { Tracker, type TrackerOptions } from './tracker.js';
import {
  EVENT_ROUTES,
  type Contact,
  type ContactByEmailFields,
  type ContactFields,
  type EventRoute,
  type EventsAccepted,
  type ExportLine,
} from './types.js';

/** A secret key: servers only. */
export interface SecretKeyCredentials {
  /** `ck_…` */
  clientId: string;
  /** `sk_…`, shown once when the key was created. */
  secret: string;
  publishableKey?: never;
  identifierLookup?: never;
}

/**
 * A publishable key: browsers; it can record Events (scope `events:write`) and nothing else, and
 * by default only by `contactId` (`events.byContactId`, without `organizationExternalId`).
 */
export interface PublishableKeyCredentials {
  /** `pk_…`: the ClientID of a publishable key, which has no secret. */
  publishableKey: string;
  /**
   * `true` when the key was created with identifierLookup: it may also name Contacts by email or
   * externalId, and organizations. Without it the client refuses those calls without sending.
   */
  identifierLookup?: boolean;
  clientId?: never;
  secret?: never;
}

export interface ClientOptions extends Partial<RetryOptions> {
  /** E.g. `https://herald.example.com` (locally `http://localhost:8080`), without `/v1`. */
  baseUrl: string;
  /** Default: the runtime's global `fetch`. */
  fetch?: FetchLike;
  /**
   * How long before its expiry a token is replaced (ms). Default 60,000, as the API reference
   * recommends; at most half the token's lifetime.
   */
  tokenRefreshMarginMs?: number;
  /**
   * A secret key grants its scopes over every Contact of the Tenant, so the client refuses one
   * in a browser. Set this only for code that really is not shipped to browsers.
   */
  dangerouslyAllowSecretKeyInBrowser?: boolean;
}

export type HeraldClientOptions = ClientOptions &
  (SecretKeyCredentials | PublishableKeyCredentials);

/** An upsert's Contact, and whether this request created it (201) or found it (200). */
export interface UpsertResult {
  contact: Contact;
  created: boolean;
}

/** Events in one request, at most (docs/api-reference.md#limits). */
export const MAX_EVENTS_PER_REQUEST = 1000;

/**
 * Herald records a dedupKey once within 60 seconds of its first recording. An Event request is
 * never resent later than this after an attempt that may have recorded it (its answer was lost
 * or a 5xx): 5 seconds of the window are left for that resend to arrive and commit.
 */
const RESEND_WITHIN_DEDUP_WINDOW_MS = 55_000;

const isBrowser = () =>
  typeof (globalThis as { document?: unknown }).document !== 'undefined' &&
  typeof (globalThis as { window?: unknown }).window !== 'undefined';

/**
 * An externalId as one path segment. `/` becomes %2F; `.` and `..` (and `../…`, see the API
 * reference) would be read as path steps, so such a Contact is reached by its id instead.
 */
function externalIdSegment(externalId: string): string {
  if (typeof externalId !== 'string' || externalId.length === 0) {
    throw new TypeError('externalId must be a non-empty string');
  }
  if (externalId === '.' || externalId === '..' || externalId.startsWith('../')) {
    throw new TypeError(
      `the externalId ${JSON.stringify(externalId)} cannot be used in a path: use upsertByEmail and the by-id methods for this Contact`,
    );
  }
  return encodeURIComponent(externalId);
}

function idSegment(id: string): string {
  if (typeof id !== 'string' || id.length === 0)
    throw new TypeError('id must be a non-empty string');
  return encodeURIComponent(id);
}

/**
 * The Herald API client. One instance per key: it keeps the key's access token and shares it
 * between concurrent calls.
 */
export class HeraldClient {
  readonly contacts: Contacts;
  readonly events: Events;
  /** @internal */
  readonly transport: Transport;
  /** @internal */
  readonly tokens: TokenCache;

  constructor(options: HeraldClientOptions) {
    if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '') {
      throw new TypeError('baseUrl is required, e.g. https://herald.example.com');
    }
    const fetchImpl = options.fetch ?? globalThis.fetch?.bind(globalThis);
    if (typeof fetchImpl !== 'function') {
      throw new TypeError('no global fetch in this runtime: pass options.fetch');
    }
    const retry: RetryOptions = { ...DEFAULT_RETRY };
    for (const key of Object.keys(DEFAULT_RETRY) as (keyof RetryOptions)[]) {
      const value = options[key];
      if (value !== undefined) retry[key] = value;
    }
    if (!(retry.maxAttempts >= 1)) throw new RangeError('maxAttempts must be at least 1');
    this.transport = {
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: fetchImpl,
      retry: Object.freeze(retry),
    };
    this.tokens = new TokenCache(
      this.transport,
      credentialsOf(options),
      options.tokenRefreshMarginMs ?? 60_000,
    );
    this.transport.tokens = this.tokens;
    this.contacts = new Contacts(this.transport, typeof options.publishableKey === 'string');
    this.events = new Events(
      this.transport,
      typeof options.publishableKey !== 'string' || options.identifierLookup === true,
    );
  }

  /**
   * A batching tracker over this client (see Tracker): `track()` queues, batches go out per
   * route at `flushAt` Events, every `flushIntervalMs`, or on `flush()`/`close()`.
   */
  tracker(options: TrackerOptions = {}): Tracker {
    return new Tracker(this.events, options);
  }
}

function credentialsOf(options: HeraldClientOptions): string {
  if (typeof options.publishableKey === 'string') {
    if (options.clientId !== undefined || options.secret !== undefined) {
      throw new TypeError('pass either publishableKey or clientId and secret, not both');
    }
    if (!options.publishableKey.startsWith('pk_')) {
      throw new TypeError('publishableKey must be a publishable key ClientID (pk_…)');
    }
    // A publishable key is exchanged with an empty password.
    return basicAuthorization(options.publishableKey, '');
  }
  const { clientId, secret } = options as SecretKeyCredentials;
  if (typeof clientId !== 'string' || clientId === '') {
    throw new TypeError('credentials are required: clientId and secret, or publishableKey');
  }
  if (clientId.startsWith('pk_')) {
    throw new TypeError('a pk_ ClientID is a publishable key: pass it as publishableKey');
  }
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError('a secret key needs its secret (sk_…)');
  }
  if (isBrowser() && !options.dangerouslyAllowSecretKeyInBrowser) {
    throw new TypeError(
      'a secret key must not run in a browser: use a publishable key there (or set dangerouslyAllowSecretKeyInBrowser)',
    );
  }
  return basicAuthorization(clientId, secret);
}

/**
 * Contacts: upsert, read, export (GDPR access) and erase (GDPR erasure). Every route needs a
 * secret key's scope: with a publishable key (`events:write` only) each method throws a
 * HeraldError `insufficient_scope` without sending anything (in a browser the request would not
 * even pass CORS, which only the token exchange and the Event routes allow).
 */
export class Contacts {
  constructor(
    private readonly transport: Transport,
    private readonly publishable = false,
  ) {}

  /**
   * `PUT /v1/contacts/{externalId}`: creates or updates the Contact with your own id. Idempotent,
   * so it is resent like an Event (a resend after a lost 201 answers 200: `created` false).
   */
  async upsert(
    externalId: string,
    fields: ContactFields,
    options?: CallOptions,
  ): Promise<UpsertResult> {
    this.requireSecretKey('contacts:write');
    const answer = await send(
      this.transport,
      {
        method: 'PUT',
        path: `/v1/contacts/${externalIdSegment(externalId)}`,
        body: JSON.stringify(fields),
        auth: 'bearer',
      },
      options,
    );
    return { contact: answer.body as Contact, created: answer.status === 201 };
  }

  /** `POST /v1/contacts`: creates or updates the Contact with this email (case-insensitive). */
  async upsertByEmail(fields: ContactByEmailFields, options?: CallOptions): Promise<UpsertResult> {
    this.requireSecretKey('contacts:write');
    const answer = await send(
      this.transport,
      { method: 'POST', path: '/v1/contacts', body: JSON.stringify(fields), auth: 'bearer' },
      options,
    );
    return { contact: answer.body as Contact, created: answer.status === 201 };
  }

  /** `GET /v1/contacts/{externalId}`; a HeraldError with status 404 when there is none. */
  async get(externalId: string, options?: CallOptions): Promise<Contact> {
    return this.read(`/v1/contacts/${externalIdSegment(externalId)}`, options);
  }

  /** `GET /v1/contacts/by-id/{id}`, by Herald's id. */
  async getById(id: string, options?: CallOptions): Promise<Contact> {
    return this.read(`/v1/contacts/by-id/${idSegment(id)}`, options);
  }

  /**
   * `GET /v1/contacts/{externalId}/export`: everything Herald holds about the Contact, line by
   * line as it streams: the Contact first, then its Events. The request is resent until the
   * stream starts; a transfer cut off midway throws (a ConnectionError), never ends short.
   */
  export(externalId: string, options?: CallOptions): AsyncGenerator<ExportLine, void, undefined> {
    return this.exportLines(`/v1/contacts/${externalIdSegment(externalId)}/export`, options);
  }

  /** `GET /v1/contacts/by-id/{id}/export`. */
  exportById(id: string, options?: CallOptions): AsyncGenerator<ExportLine, void, undefined> {
    return this.exportLines(`/v1/contacts/by-id/${idSegment(id)}/export`, options);
  }

  /**
   * `POST /v1/contacts/{externalId}/erase`: removes the Contact and every Event about it,
   * permanently. When a resend follows an attempt that got no answer, a 404 means that attempt
   * erased it: the call succeeds (the Contact is gone either way).
   */
  async erase(externalId: string, options?: CallOptions): Promise<void> {
    await this.eraseAt(`/v1/contacts/${externalIdSegment(externalId)}/erase`, options);
  }

  /** `POST /v1/contacts/by-id/{id}/erase` (a repeat answers 204 again). */
  async eraseById(id: string, options?: CallOptions): Promise<void> {
    await this.eraseAt(`/v1/contacts/by-id/${idSegment(id)}/erase`, options);
  }

  private requireSecretKey(scope: string): void {
    if (!this.publishable) return;
    throw new HeraldError(
      `missing scope ${scope}: a publishable key can only record Events; Contacts need a secret key (on a server)`,
      { code: 'insufficient_scope', attempts: 0 },
    );
  }

  private async read(path: string, options?: CallOptions): Promise<Contact> {
    this.requireSecretKey('contacts:read');
    const answer = await send(this.transport, { method: 'GET', path, auth: 'bearer' }, options);
    return answer.body as Contact;
  }

  private async eraseAt(path: string, options?: CallOptions): Promise<void> {
    this.requireSecretKey('contacts:erase');
    await send(
      this.transport,
      { method: 'POST', path, auth: 'bearer', notFoundAfterUncertainIsDone: true },
      options,
    );
  }

  private async *exportLines(
    path: string,
    options?: CallOptions,
  ): AsyncGenerator<ExportLine, void, undefined> {
    this.requireSecretKey('contacts:export');
    const answer = await send(
      this.transport,
      { method: 'GET', path, auth: 'bearer', accept: 'application/x-ndjson', stream: true },
      options,
    );
    try {
      const body = answer.response?.body;
      if (!body) return;
      yield* ndjson(body, answer.headers.get('x-request-id')) as AsyncGenerator<ExportLine>;
    } finally {
      answer.release?.();
    }
  }
}

/**
 * The four Event routes. Every Event without a dedupKey gets one (a random UUID) before the
 * first attempt, and every resend sends the same bytes, so an Event is recorded once however
 * often the request is resent.
 */
export class Events {
  constructor(
    private readonly transport: Transport,
    /** Whether the key may name Contacts by email or externalId, and organizations. */
    private readonly identifierLookup = true,
  ) {}

  /**
   * Throws the API's 403 at once, sending nothing, for Events a publishable key without
   * identifierLookup may not record: any route but by-contact-id, or an organization named.
   */
  assertAllowed<R extends EventRoute>(
    route: R,
    events: EventInput<R> | readonly EventInput<R>[],
  ): void {
    if (this.identifierLookup) return;
    const list = (Array.isArray(events) ? events : [events]) as readonly EventInput<R>[];
    const namesOrganization = list.some(
      (event) =>
        (event as { organizationExternalId?: unknown }).organizationExternalId !== undefined,
    );
    if (route === 'by-contact-id' && !namesOrganization) return;
    throw new HeraldError(
      'a publishable key records Events by contactId only; naming a Contact by email or externalId, or an organization, needs a publishable key created with identifierLookup (and identifierLookup: true here)',
      { code: 'forbidden', attempts: 0 },
    );
  }

  /** `POST /v1/events/by-contact-id`: Events about Contacts named by Herald's id. */
  byContactId(
    events: EventInput<'by-contact-id'> | readonly EventInput<'by-contact-id'>[],
    options?: CallOptions,
  ): Promise<EventsAccepted> {
    return this.record('by-contact-id', events, options);
  }

  /** `POST /v1/events/by-external-id`: Events about Contacts named by your own id. */
  byExternalId(
    events: EventInput<'by-external-id'> | readonly EventInput<'by-external-id'>[],
    options?: CallOptions,
  ): Promise<EventsAccepted> {
    return this.record('by-external-id', events, options);
  }

  /** `POST /v1/events/by-email`: Events about Contacts named by email. */
  byEmail(
    events: EventInput<'by-email'> | readonly EventInput<'by-email'>[],
    options?: CallOptions,
  ): Promise<EventsAccepted> {
    return this.record('by-email', events, options);
  }

  /** `POST /v1/events/by-organization`: Events of organizations (optionally a `contactId`). */
  byOrganization(
    events: EventInput<'by-organization'> | readonly EventInput<'by-organization'>[],
    options?: CallOptions,
  ): Promise<EventsAccepted> {
    return this.record('by-organization', events, options);
  }

  /**
   * `POST /v1/events/{route}` with one Event or an array of 1 to 1,000. A 422 rejects with an
   * UnresolvedIdentityError whose `events` are the Events as sent (dedupKeys included), to
   * resend after creating what was missing.
   */
  async record<R extends EventRoute>(
    route: R,
    events: EventInput<R> | readonly EventInput<R>[],
    options?: CallOptions,
  ): Promise<EventsAccepted> {
    if (!(EVENT_ROUTES as readonly string[]).includes(route)) {
      throw new TypeError(
        `unknown Event route ${JSON.stringify(route)}: one of ${EVENT_ROUTES.join(', ')}`,
      );
    }
    this.assertAllowed(route, events);
    let prepared: PreparedEvent<R> | PreparedEvent<R>[];
    if (Array.isArray(events)) {
      const list = events as readonly EventInput<R>[];
      if (list.length === 0 || list.length > MAX_EVENTS_PER_REQUEST) {
        throw new RangeError(
          `one request takes 1 to ${MAX_EVENTS_PER_REQUEST} Events; got ${list.length}`,
        );
      }
      prepared = list.map((event) => prepareEvent<R>(event));
    } else {
      prepared = prepareEvent<R>(events as EventInput<R>);
    }
    // Serialized once, keys and all: every resend carries these very bytes.
    const body = JSON.stringify(prepared);
    try {
      const answer = await send(
        this.transport,
        {
          method: 'POST',
          path: `/v1/events/${route}`,
          body,
          auth: 'bearer',
          resendWithinMs: RESEND_WITHIN_DEDUP_WINDOW_MS,
        },
        options,
      );
      return answer.body as EventsAccepted;
    } catch (error) {
      if (error instanceof UnresolvedIdentityError) {
        error.events = Array.isArray(prepared) ? prepared : [prepared];
      }
      throw error;
    }
  }
}
