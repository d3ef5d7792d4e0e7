import type { z } from 'zod';
import type { ApiOperation } from './openapi.js';

export type HttpMethod = ApiOperation['method'];

/**
 * Who may call a route: an access token with a scope (the policy guard), the ClientID and secret
 * of the token exchange, ADMIN_TOKEN, SERVICE_TOKEN, or anyone (the JWKS).
 */
export type RouteAccess =
  | { kind: 'bearer'; scope: string }
  | { kind: 'basic' }
  | { kind: 'admin' }
  | { kind: 'service' }
  | { kind: 'none' };

/**
 * One route. Public and operator routes are documented in the OpenAPI document; internal ones
 * (Herald's services calling each other) are mounted only, and no ingress routes them.
 */
export interface RouteSpec {
  method: HttpMethod;
  /** The Express path, e.g. `/v1/contacts/:externalId`. */
  path: string;
  audience: 'public' | 'operator' | 'internal';
  access: RouteAccess;
  /** A bearer write that still works while the Tenant's subscription is suspended. */
  allowedWhileSuspended?: boolean;
  summary: string;
  /** What it does and what to know before calling it, for the reference (CommonMark). */
  description?: string;
  pathParameters?: ApiOperation['pathParameters'];
  /** The body schema; a route with one gets the JSON body rules (Content-Type, 1 MiB). */
  requestBody?: z.ZodType;
  /** Status → answer; documented for public and operator routes. */
  responses?: ApiOperation['responses'];
  /**
   * `false` when other methods on this path fall through to the 404 instead of a 405 (routes
   * that only Herald's own services call and that have always answered so).
   */
  methodNotAllowed?: false;
  /**
   * Served to people rather than programs (the rendered reference and its files): public, open
   * to anyone, and left out of the OpenAPI document.
   */
  page?: true;
}

/**
 * Middlewares for every request under a path prefix, whether a route matches or not: a guard
 * (so an unknown path under `/internal` still answers 401 to a caller without the token) or
 * CORS for browsers (so errors under it carry the CORS headers too). CORS allows the methods of
 * the routes under the prefix.
 */
export interface PrefixRule {
  prefix: string;
  access?: 'admin' | 'service';
  cors?: true;
}

/**
 * What the ingress sends to a process, in nginx location terms (nginx matches the decoded URI):
 * an exact path (`=`), a prefix (`^~`) or a regular expression (`~`, tried in registry order).
 * Public paths are exact or prefix (Kubernetes Ingress paths); `/admin/` ones are regexes.
 */
export type IngressRule = { exact: string } | { prefix: string } | { regex: string };

export interface ProcessSpec {
  /** The process name: resource names in the chart, the stack's component name. */
  name: string;
  /** Relative to the service's package folder, e.g. `dist/index.js`. */
  entry: string;
  /** Its port in the local stack. */
  port: number;
  /** The PostgreSQL database it uses, e.g. `herald_events`; null for none. */
  database: string | null;
  /** Its migration entry (relative like `entry`) when it owns the database's schema. */
  migrate?: string;
  /** Processes whose start (migration included) it waits for in the local stack. */
  after?: readonly string[];
  /** `node` arguments before the entry, resolved from the package folder. */
  nodeArgs?: readonly string[];
  /** Kafka topics its migration creates, topics it publishes to, and topics it consumes. */
  topics?: {
    creates?: readonly string[];
    produces?: readonly string[];
    consumes?: readonly string[];
  };
  /** The shared secrets it reads, by environment variable; it gets no other. */
  secrets: readonly string[];
  /** The other environment variables it reads. */
  settings: readonly string[];
  /** The Herald services it calls, each with what for (the NetworkPolicy allows exactly these). */
  calls: Readonly<Record<string, string>>;
  /** It holds data about Contacts and answers the internal export and erase routes. */
  holdsContactData?: boolean;
  /** What the ingresses send to it; the service's routes are served by its first process. */
  ingress?: readonly (IngressRule & { note?: string })[];
}

export type RouteTable = Readonly<Record<string, RouteSpec>>;

/** A service, declared once: its processes and its routes. */
export interface ServiceManifest<R extends RouteTable = RouteTable> {
  /** The service's package folder under `services/`. */
  name: string;
  processes: readonly ProcessSpec[];
  prefixes?: readonly PrefixRule[];
  /** Mounted in this order (a literal segment before a parameter in the same position). */
  routes: R;
}

/** Keeps the route ids as literal types, so handler records are checked against them. */
export function defineService<const R extends RouteTable>(
  manifest: ServiceManifest<R>,
): ServiceManifest<R> {
  return manifest;
}

/** `/v1/contacts/:externalId` → `/v1/contacts/{externalId}`. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}

/** The documented (public and operator) routes as OpenAPI operations. */
export function operationsOf(routes: RouteTable): ApiOperation[] {
  const operations: ApiOperation[] = [];
  for (const [id, route] of Object.entries(routes)) {
    if (route.audience === 'internal' || route.page) continue;
    const { access } = route;
    if (access.kind === 'service' || (access.kind === 'none' && route.audience !== 'public')) {
      throw new Error(`${route.method} ${route.path}: a documented route needs a caller's access`);
    }
    operations.push({
      operationId: id,
      method: route.method,
      path: openApiPath(route.path),
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tag: route.audience === 'public' ? 'Public API' : 'Operator API',
      auth: access,
      ...(route.pathParameters ? { pathParameters: route.pathParameters } : {}),
      ...(route.requestBody ? { requestBody: route.requestBody } : {}),
      responses: route.responses ?? {},
      ...(route.allowedWhileSuspended ? { allowedWhileSuspended: true } : {}),
    });
  }
  return operations;
}

/**
 * The variables a process reads besides its secrets, from its config schema: the manifest can
 * then never list a setting the process does not read, nor miss one it does.
 */
export function settingsOf(
  schema: { shape: Record<string, unknown> },
  secrets: readonly string[],
): string[] {
  return Object.keys(schema.shape).filter((name) => !secrets.includes(name));
}
