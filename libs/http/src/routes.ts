import type { Express, Request, RequestHandler, Response } from 'express';
import type { RouteParameters } from 'express-serve-static-core';
import { methodNotAllowed } from '@herald/errors';
import { setHttpRoute } from '@herald/telemetry';
import { jsonBody } from './body.js';
import { answerDeadline } from './deadline.js';
import { publicCors } from './cors.js';
import {
  operationsOf,
  type RouteAccess,
  type RouteSpec,
  type RouteTable,
  type ServiceManifest,
} from './manifest.js';
import { buildOpenApi } from './openapi.js';

/** A route's handler; its `req.params` are the path's parameters. */
export type RouteHandler<Path extends string = string> = (
  req: Request<RouteParameters<Path>>,
  res: Response,
) => unknown;

/** One handler per route id of the table, no more, no less. */
export type RouteHandlers<R extends RouteTable> = { [K in keyof R]: RouteHandler<R[K]['path']> };

/**
 * The guard of the internal routes (`requireServiceCaller` of @herald/auth): `authenticate`
 * answers 401 to a token no caller has (the prefix guard), `allow` also 403 to a known caller
 * the route does not name.
 */
export interface ServiceGuard {
  authenticate: RequestHandler;
  allow(callers: readonly string[]): RequestHandler;
}

/** The middlewares that enforce each kind of access; only those the routes need are required. */
export interface RouteGuards {
  bearer?: (
    scope: string,
    options: { allowedWhileSuspended: boolean; identifierLookup: boolean },
  ) => RequestHandler;
  admin?: RequestHandler;
  service?: ServiceGuard;
}

export interface MountOptions {
  /**
   * Runs on every public route that takes a body, after its access guard and before the body is
   * read: a request refused for its token or budget never waits for it. See bodyAdmission.
   */
  admission?: RequestHandler;
  /** The public routes' answer deadline (answerDeadline); default PUBLIC_ANSWER_DEADLINE_MS. */
  answerDeadlineMs?: number;
}

const under = (prefix: string, path: string) => path === prefix || path.startsWith(`${prefix}/`);

/**
 * Mounts a service's routes from its manifest: the prefix middlewares first, then each path once,
 * in declaration order, with per method the access guard, the admission (public routes) and the
 * JSON body rules when the route takes a body, and the handler; then a 405 naming every method
 * declared for the path. A public path answers that 405 without a token; an operator path guarded
 * per route asks for the admin token first, as its routes do.
 */
export function mountRoutes<R extends RouteTable, H extends RouteHandlers<R>>(
  app: Express,
  service: Pick<ServiceManifest<R>, 'routes' | 'prefixes'>,
  handlers: H & Record<Exclude<keyof H, keyof R>, never>,
  guards: RouteGuards,
  options: MountOptions = {},
): void {
  const routes = Object.entries(service.routes);
  const prefixes = (service.prefixes ?? []).filter((rule) =>
    routes.some(([, route]) => under(rule.prefix, route.path)),
  );

  const bearerGuards = new Map<string, RequestHandler>();
  const serviceGuards = new Map<string, RequestHandler>();
  function guardOf(access: RouteAccess, route: RouteSpec): RequestHandler | undefined {
    const missing = () =>
      new Error(
        `${route.method} ${route.path} needs the ${access.kind} guard, which was not given`,
      );
    switch (access.kind) {
      case 'bearer': {
        if (!guards.bearer) throw missing();
        const allowedWhileSuspended = route.allowedWhileSuspended === true;
        const identifierLookup = access.identifierLookup === true;
        const key = `${access.scope} ${allowedWhileSuspended} ${identifierLookup}`;
        let guard = bearerGuards.get(key);
        if (!guard) {
          guard = guards.bearer(access.scope, { allowedWhileSuspended, identifierLookup });
          bearerGuards.set(key, guard);
        }
        return guard;
      }
      case 'admin': {
        if (prefixes.some((p) => p.access === 'admin' && under(p.prefix, route.path))) {
          return undefined;
        }
        if (!guards.admin) throw missing();
        return guards.admin;
      }
      // Always per route, under a prefix too: the prefix only knows who calls, the route whom
      // it lets in.
      case 'service': {
        if (!guards.service) throw missing();
        const key = JSON.stringify([...access.callers].sort());
        let guard = serviceGuards.get(key);
        if (!guard) {
          guard = guards.service.allow(access.callers);
          serviceGuards.set(key, guard);
        }
        return guard;
      }
      default:
        return undefined;
    }
  }

  // Each path names its pattern first, for the request's span and metrics; a request refused by
  // a prefix's guard is named after the prefix.
  const named = new Map<string, RequestHandler>();
  const nameRoute = (pattern: string): RequestHandler => {
    let handler = named.get(pattern);
    if (!handler) {
      handler = (_req, _res, next) => {
        setHttpRoute(pattern);
        next();
      };
      named.set(pattern, handler);
    }
    return handler;
  };

  for (const rule of prefixes) {
    app.use(rule.prefix, nameRoute(rule.prefix));
    if (rule.cors) {
      const methods = routes
        .filter(([, route]) => under(rule.prefix, route.path))
        .map(([, route]) => route.method.toUpperCase());
      app.use(rule.prefix, publicCors([...new Set(methods)]));
    }
    if (rule.access) {
      const guard = rule.access === 'admin' ? guards.admin : guards.service?.authenticate;
      if (!guard) throw new Error(`the prefix ${rule.prefix} needs the ${rule.access} guard`);
      app.use(rule.prefix, guard);
    }
  }

  const deadline = answerDeadline(options.answerDeadlineMs);
  const byPath = new Map<string, [string, RouteSpec][]>();
  for (const entry of routes) {
    const list = byPath.get(entry[1].path) ?? [];
    list.push(entry);
    byPath.set(entry[1].path, list);
  }
  for (const [path, entries] of byPath) {
    const route = app.route(path);
    const seen = new Set<string>();
    let operatorGuard: RequestHandler | undefined;
    for (const [id, spec] of entries) {
      if (seen.has(spec.method)) throw new Error(`${spec.method} ${path} is declared twice`);
      seen.add(spec.method);
      const handler = (handlers as Record<string, RouteHandler>)[id];
      if (!handler) throw new Error(`no handler for the route ${id}`);
      const guard = guardOf(spec.access, spec);
      if (guard && spec.access.kind !== 'bearer') operatorGuard = guard;
      route[spec.method](
        nameRoute(path),
        ...(spec.audience === 'public' && !spec.page && spec.answerDeadline !== false
          ? [deadline]
          : []),
        ...(guard ? [guard] : []),
        ...(spec.requestBody && spec.audience === 'public' && options.admission
          ? [options.admission]
          : []),
        ...(spec.requestBody ? jsonBody(spec.bodyFieldName) : []),
        handler as RequestHandler,
      );
    }
    if (entries.some(([, spec]) => spec.methodNotAllowed === false)) continue;
    route.all(
      nameRoute(path),
      ...(operatorGuard ? [operatorGuard] : []),
      methodNotAllowed(entries.map(([, spec]) => spec.method.toUpperCase())),
    );
  }
}

/**
 * The routes an app has mounted, as `METHOD /path` (Express paths), read from its router: for
 * tests that every mounted route is declared, so documented or deliberately internal.
 */
function mountedRoutes(app: Express): string[] {
  const router = (app as unknown as { router: { stack: { route?: unknown }[] } }).router;
  return router.stack.flatMap((layer) => {
    const route = layer.route as { path: string; methods: Record<string, boolean> } | undefined;
    if (!route) return [];
    return Object.keys(route.methods)
      .filter((m) => m !== '_all')
      .map((m) => `${m.toUpperCase()} ${route.path}`);
  });
}

/**
 * What a service's app must mount: the operations of its OpenAPI document plus its internal
 * routes, as `METHOD /path`. The document is passed in (not rebuilt from the manifest here), so
 * a test compares the mounted router with what is really documented.
 */
function expectedRoutes(
  document: { paths?: Record<string, Record<string, unknown>> },
  routes: RouteTable,
): string[] {
  const documented = Object.entries(document.paths ?? {}).flatMap(([path, methods]) =>
    Object.keys(methods).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
  );
  const internal = Object.values(routes)
    .filter((r) => r.audience === 'internal' || r.page)
    .map((r) => `${r.method.toUpperCase()} ${r.path}`);
  return [...documented, ...internal];
}

/**
 * A service's mounted routes (health routes aside) beside the ones it must mount, both sorted:
 * equal when the router and the OpenAPI document built from the same table agree, so a route
 * cannot be served undocumented or documented unserved.
 */
export function routeTableAgreement(
  app: Express,
  routes: RouteTable,
): { mounted: string[]; expected: string[] } {
  const document = buildOpenApi({ title: 'route table', version: '0' }, operationsOf(routes));
  return {
    mounted: mountedRoutes(app)
      .filter((r) => !/^GET \/(healthz|readyz)$/.test(r))
      .sort(),
    expected: expectedRoutes(document, routes).sort(),
  };
}
