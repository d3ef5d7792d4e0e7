import type { RouteSpec } from '@herald/http';
import type { z } from 'zod';

/**
 * One route a Herald service serves to the others: the serving service's manifest mounts it as it
 * is, and the callers' clients (`internalClient`) take its method, path and schemas from it.
 */
export interface InternalRouteSpec extends RouteSpec {
  method: 'get' | 'post';
  audience: 'internal';
  /**
   * The processes whose SERVICE_TOKEN it lets in (each must declare the service in its `calls`),
   * or anyone who reaches it (the JWKS).
   */
  access: { kind: 'service'; callers: readonly string[] } | { kind: 'none' };
  /** The JSON body of its success, which a caller's client checks when it reads one. */
  answer?: z.ZodType;
}

/** Keeps each route's literal types (path, method, schemas) for the handlers and the clients. */
export function defineInternalRoutes<const T extends Readonly<Record<string, InternalRouteSpec>>>(
  routes: T,
): T {
  return routes;
}

/** The parameter names of an Express path: `/a/:tenantId/b/:id` → `'tenantId' | 'id'`. */
export type ParamNames<Path extends string> = Path extends `${string}:${infer Rest}`
  ? Rest extends `${infer Name}/${infer Tail}`
    ? Name | ParamNames<Tail>
    : Rest
  : never;

export type PathParams<Path extends string> = { [K in ParamNames<Path>]: string };

/** A route's success body, as its answer schema reads it. */
export type AnswerOf<R extends InternalRouteSpec> = R extends { answer: infer A extends z.ZodType }
  ? z.output<A>
  : never;

/** The path to call: each `:name` replaced by its value, percent-encoded. */
export function pathOf(path: string, params: Readonly<Record<string, string>>): string {
  return path.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${path}: no value for :${name}`);
    return encodeURIComponent(value);
  });
}
