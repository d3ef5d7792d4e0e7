import type { z } from 'zod';
import type { ApiOperation } from './openapi.js';

export type HttpMethod = ApiOperation['method'];

/**
 * Who may call a route: an access token with a scope (the policy guard), the ClientID and secret
 * of the token exchange, ADMIN_TOKEN, the SERVICE_TOKEN of one of the Herald processes named in
 * `callers` (each process has its own; the serving process knows them from SERVICE_CALLERS), or
 * anyone (the JWKS).
 */
export type RouteAccess =
  | {
      kind: 'bearer';
      scope: string;
      /**
       * The route looks Contacts or organizations up by email or externalId: a publishable key
       * needs identifierLookup (otherwise 403, whatever exists).
       */
      identifierLookup?: true;
    }
  | { kind: 'basic' }
  | { kind: 'admin' }
  | {
      kind: 'service';
      /**
       * The processes that may call it, by process name: each must declare the service in its
       * `calls` (checked by `manifestProblems`). Any other caller's token answers 403.
       */
      callers: readonly string[];
    }
  | { kind: 'none' };

/**
 * The `node` arguments of every Herald process, before its entry: OpenTelemetry preloaded before
 * anything it instruments.
 */
const PROCESS_NODE_ARGS = ['--import', '@herald/telemetry/register'] as const;

/**
 * The V8 heap of a Herald process, in MiB, passed as `node` flags after its other arguments.
 * Left to itself V8 sizes the heap from the memory it sees: on a large host a young generation
 * of 64 MiB semi-spaces and an old generation that grows to hundreds of MiB of garbage between
 * collections; in a container, from its memory limit, which on a small limit means collections
 * so frequent that they take more CPU than the work. Fixing the sizes gives every process the
 * same footprint and the same collector cost wherever it runs.
 */
export interface HeapLimits {
  /** `--max-semi-space-size`: the young generation is up to 3 of them. */
  semiSpaceMiB: number;
  /** `--max-old-space-size`; V8's own choice when absent. */
  oldSpaceMiB?: number;
  /**
   * `--heap-growing-percent`: how far past the live size the old generation grows before its
   * next full collection. V8 grows a capped heap by as little as 10 %, which for a process
   * whose requests keep tens of MiB alive means a full collection every few hundred ms.
   */
  growingPercent?: number;
}

/** Every process's heap unless it names its own: a young generation a quarter of V8's largest. */
const PROCESS_HEAP: HeapLimits = { semiSpaceMiB: 16 };

/** `node` flags for a heap. */
function heapArgs(heap: HeapLimits): string[] {
  return [
    `--max-semi-space-size=${heap.semiSpaceMiB}`,
    ...(heap.oldSpaceMiB === undefined ? [] : [`--max-old-space-size=${heap.oldSpaceMiB}`]),
    ...(heap.growingPercent === undefined ? [] : [`--heap-growing-percent=${heap.growingPercent}`]),
  ];
}

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
  /** Its query parameters, for the reference; the handler parses them itself. */
  queryParameters?: ApiOperation['queryParameters'];
  /** The body schema; a route with one gets the JSON body rules (Content-Type, 1 MiB). */
  requestBody?: z.ZodType;
  /**
   * How a 400 about a value in the body names where it is, from its path, when not as
   * `body.email` or `body[2]`.
   */
  bodyFieldName?: (path: readonly PropertyKey[]) => string;
  /** A body the local stack accepted, for the reference (checked against `requestBody`). */
  requestExample?: unknown;
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
  /**
   * `false` for a public route whose answer may rightly take longer than the answer deadline
   * (PUBLIC_ANSWER_DEADLINE_MS): a Contact's export and erasure, which gather from every service.
   */
  answerDeadline?: false;
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
  /**
   * Its Prometheus endpoint's port in the local stack (METRICS_PORT; in Kubernetes every pod
   * uses the chart's `metrics.port`).
   */
  metricsPort: number;
  /** The PostgreSQL database it uses, e.g. `herald_events`; null for none. */
  database: string | null;
  /** Its migration entry (relative like `entry`) when it owns the database's schema. */
  migrate?: string;
  /** Processes whose start (migration included) it waits for in the local stack. */
  after?: readonly string[];
  /**
   * `node` arguments before the entry, resolved from the package folder; defineService gives a
   * process that names none the ones every Herald process runs with.
   */
  nodeArgs?: readonly string[];
  /** Its V8 heap; defineService appends it to `nodeArgs` (default: 16 MiB semi-spaces). */
  heap?: HeapLimits;
  /**
   * How far from the local stack's own nice value it runs (-20 to 19, lower gets a busy
   * machine's CPU sooner; default 0), as a larger CPU request does for its pods in a cluster.
   */
  niceness?: number;
  /** Kafka topics its migration creates, topics it publishes to, and topics it consumes. */
  topics?: {
    creates?: readonly string[];
    produces?: readonly string[];
    consumes?: readonly string[];
  };
  /**
   * The secrets it reads, by environment variable; it gets no other. ADMIN_TOKEN exactly when it
   * serves operator routes, SERVICE_CALLERS exactly when it serves internal routes guarded by
   * service tokens, SERVICE_TOKEN (its own) exactly when a route names it among its `callers`
   * (checked by `manifestProblems`, so the stack, the chart and compose hand out no more).
   */
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

/**
 * Keeps the route ids as literal types, so handler records are checked against them, and gives
 * each process that names no `nodeArgs` the ones every Herald process runs with, followed by
 * the flags of its heap.
 */
export function defineService<const R extends RouteTable>(
  manifest: ServiceManifest<R>,
): ServiceManifest<R> {
  return {
    ...manifest,
    processes: manifest.processes.map((process) => ({
      ...process,
      nodeArgs: [
        ...(process.nodeArgs ?? PROCESS_NODE_ARGS),
        ...heapArgs(process.heap ?? PROCESS_HEAP),
      ],
    })),
  };
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
      ...(route.queryParameters ? { queryParameters: route.queryParameters } : {}),
      ...(route.requestBody ? { requestBody: route.requestBody } : {}),
      ...(route.requestExample === undefined ? {} : { requestExample: route.requestExample }),
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

/** The process that serves a service's routes: its first. */
const servingProcess = (manifest: ServiceManifest) => manifest.processes[0];

/**
 * The processes that may call a service's internal routes (the union of its routes' `callers`),
 * each once, in declaration order: who the serving process's SERVICE_CALLERS lists.
 */
export function internalCallersOf(manifest: ServiceManifest): string[] {
  const callers = Object.values(manifest.routes).flatMap((route) =>
    route.access.kind === 'service' ? route.access.callers : [],
  );
  return [...new Set(callers)];
}

/** A heap V8 would refuse or silently clamp: whole MiB, semi-spaces 1 to 64 (V8's largest). */
function heapProblems(name: string, heap: HeapLimits): string[] {
  const whole = (n: number | undefined, min: number, max: number) =>
    n === undefined || (Number.isInteger(n) && n >= min && n <= max);
  return [
    ...(whole(heap.semiSpaceMiB, 1, 64) ? [] : [`${name}: heap.semiSpaceMiB must be 1 to 64`]),
    ...(whole(heap.oldSpaceMiB, 64, 16384)
      ? []
      : [`${name}: heap.oldSpaceMiB must be 64 to 16384`]),
    ...(whole(heap.growingPercent, 1, 400)
      ? []
      : [`${name}: heap.growingPercent must be 1 to 400`]),
  ];
}

/**
 * What is wrong with the manifests taken together (empty when nothing is): each internal route
 * names its callers, each caller declares the service in its `calls` and has its own
 * SERVICE_TOKEN, and the access secrets go exactly where they are needed: ADMIN_TOKEN to the
 * processes serving operator routes, SERVICE_CALLERS to those serving internal routes,
 * SERVICE_TOKEN to those named as callers. `npm run generate` refuses manifests with problems.
 */
export function manifestProblems(manifests: readonly ServiceManifest[]): string[] {
  const problems: string[] = [];
  const processes = new Map(
    manifests.flatMap((manifest) => manifest.processes.map((p) => [p.name, p] as const)),
  );
  const namedCallers = new Set<string>();
  for (const manifest of manifests) {
    const server = servingProcess(manifest);
    if (!server) {
      problems.push(`${manifest.name}: a service needs a process`);
      continue;
    }
    for (const [id, route] of Object.entries(manifest.routes)) {
      if (route.access.kind !== 'service') continue;
      const where = `${manifest.name}: ${id} (${route.method.toUpperCase()} ${route.path})`;
      if (route.access.callers.length === 0) problems.push(`${where} names no callers`);
      for (const caller of route.access.callers) {
        namedCallers.add(caller);
        const callerProcess = processes.get(caller);
        if (!callerProcess) {
          problems.push(`${where}: its caller ${caller} is no process of any service`);
          continue;
        }
        if (!Object.hasOwn(callerProcess.calls, server.name)) {
          problems.push(`${where}: its caller ${caller} does not declare ${server.name} in calls`);
        }
      }
    }
    const routes = Object.values(manifest.routes);
    const servesOperator = routes.some(
      (r) => r.audience === 'operator' || r.access.kind === 'admin',
    );
    const servesInternal = routes.some((r) => r.access.kind === 'service');
    manifest.processes.forEach((p, index) => {
      const serves = index === 0;
      const check = (secret: string, needed: boolean, missing: string, extra: string) => {
        const has = p.secrets.includes(secret);
        if (has && !needed) problems.push(`${p.name} lists ${secret}, but ${extra}`);
        if (!has && needed) problems.push(`${p.name} must list ${secret}: ${missing}`);
      };
      check(
        'ADMIN_TOKEN',
        serves && servesOperator,
        'it serves operator routes',
        'it serves no operator routes',
      );
      check(
        'SERVICE_CALLERS',
        serves && servesInternal,
        'it serves internal routes',
        'it serves no internal routes guarded by service tokens',
      );
    });
  }
  for (const p of processes.values()) {
    const { niceness } = p;
    if (
      niceness !== undefined &&
      !(Number.isInteger(niceness) && niceness >= -20 && niceness <= 19)
    ) {
      problems.push(`${p.name}: niceness must be an integer from -20 to 19`);
    }
    if (p.heap) problems.push(...heapProblems(p.name, p.heap));
    const has = p.secrets.includes('SERVICE_TOKEN');
    const named = namedCallers.has(p.name);
    if (has && !named) {
      problems.push(`${p.name} lists SERVICE_TOKEN, but no internal route names it a caller`);
    }
    if (!has && named) {
      problems.push(`${p.name} must list SERVICE_TOKEN: internal routes name it a caller`);
    }
  }
  return problems;
}
