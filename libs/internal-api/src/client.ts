import type { AppError } from '@herald/errors';
import {
  createInternalClient,
  type InternalAnswer,
  type InternalClient,
  type InternalClientOptions,
  type InternalRequest,
} from '@herald/http';
import type { z } from 'zod';
import { pathOf, type AnswerOf, type InternalRouteSpec, type ParamNames } from './route.js';

/** The path's parameters, when it has any. */
type ParamsInput<R extends InternalRouteSpec> = [ParamNames<R['path']>] extends [never]
  ? { params?: never }
  : { params: { readonly [K in ParamNames<R['path']>]: string } };

/** The JSON body, when the route takes one. */
type JsonInput<R extends InternalRouteSpec> = R extends { requestBody: infer B extends z.ZodType }
  ? { json: z.input<B> }
  : { json?: never };

/** What one call of the route names: its path's parameters and its body. */
export type RouteInput<R extends InternalRouteSpec> = ParamsInput<R> & JsonInput<R>;

/** How one call goes, as `InternalRequest` of @herald/http has it. */
export interface Delivery {
  timeoutMs?: number;
  /** `answer` (the default): the timeout covers reading the body too; `headers`: it does not. */
  timeoutCovers?: 'answer' | 'headers';
  /** The request id of the call being served, passed on. */
  requestId?: string;
}

/**
 * One internal route of another service, called as its definition says: no caller writes its
 * path or method. The methods are those of `InternalClient` (@herald/http): the service token,
 * the request id and the timeout go with every call, and `call` maps unreachable, a timeout or a
 * 5xx to the 503 naming the service.
 */
export interface RouteClient<R extends InternalRouteSpec> {
  /** The URL this call goes to, for messages. */
  url(input: ParamsInput<R>): string;
  /** Sends; resolves with the answer as fetch does, rejects when unreachable or too slow. */
  send(input: RouteInput<R> & Delivery): Promise<Response>;
  /** Sends and reads the answer (its text, or nothing when `body` is `discard`). */
  call(
    input: RouteInput<R> & Delivery & { consequence: string; body?: 'text' | 'discard' },
  ): Promise<InternalAnswer>;
  /** The success body checked against the route's answer schema; throws when it does not fit. */
  parse(json: unknown): AnswerOf<R>;
  /** The 503 for an answer with this status that the caller cannot use. */
  unavailable(status: number, consequence: string): AppError;
}

/** A `RouteClient` per route of a table. */
export type ServiceClient<T extends Readonly<Record<string, InternalRouteSpec>>> = {
  readonly [K in keyof T]: RouteClient<T[K]>;
};

/** What every call carries, whatever the route. */
type AnyInput = Delivery & { params?: Readonly<Record<string, string>>; json?: unknown };

function routeClient<R extends InternalRouteSpec>(
  route: R,
  client: InternalClient,
): RouteClient<R> {
  const method = route.method === 'post' ? 'POST' : 'GET';
  const path = (input: AnyInput) => pathOf(route.path, input.params ?? {});
  const request = (input: AnyInput): InternalRequest => ({
    method,
    path: path(input),
    json: input.json,
    timeoutMs: input.timeoutMs,
    timeoutCovers: input.timeoutCovers,
    requestId: input.requestId,
  });
  return {
    url: (input) => client.url(path(input)),
    send: (input) => client.send(request(input)),
    call: (input) =>
      client.call({ ...request(input), consequence: input.consequence, body: input.body }),
    parse: (json) => {
      if (!route.answer) throw new Error(`${method} ${route.path} declares no answer schema`);
      return route.answer.parse(json) as AnswerOf<R>;
    },
    unavailable: (status, consequence) => client.unavailable(status, consequence),
  };
}

/**
 * A client of another service's internal routes, one `RouteClient` per route of the table given
 * (e.g. `authRoutes`, or the one route a caller needs).
 */
export function internalClient<const T extends Readonly<Record<string, InternalRouteSpec>>>(
  routes: T,
  options: InternalClientOptions,
): ServiceClient<T> {
  const client = createInternalClient(options);
  return Object.fromEntries(
    Object.entries(routes).map(([id, route]) => [id, routeClient(route, client)]),
  ) as ServiceClient<T>;
}
