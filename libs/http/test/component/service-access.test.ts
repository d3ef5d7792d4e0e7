// The internal routes' access as the manifests declare it: each route names the processes that
// may call it, the prefix guard identifies the caller and every route checks it again; and the
// manifests together hand the access secrets out only where they are needed.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { RequestHandler } from 'express';
import { pino } from 'pino';
import { AppError } from '@herald/errors';
import {
  createHttpApp,
  defineService,
  internalCallersOf,
  manifestProblems,
  mountRoutes,
  startServer,
  type HeapLimits,
  type ProcessSpec,
  type RunningServer,
  type ServiceGuard,
  type ServiceManifest,
} from '../../src/index.js';

const logger = pino({ level: 'silent' });

/** A stand-in for @herald/auth's guard: the bearer token is the caller's name. */
function fakeServiceGuard(): ServiceGuard & { allowed: string[][] } {
  const allowed: string[][] = [];
  const callerOf = (header: string | undefined) => {
    const name = header?.replace(/^Bearer /, '') ?? '';
    if (!['contacts', 'events', 'billing'].includes(name)) {
      throw new AppError('missing or wrong service token', {
        code: 'unauthenticated',
        status: 401,
      });
    }
    return name;
  };
  const authenticate: RequestHandler = (req, _res, next) => {
    callerOf(req.get('authorization'));
    next();
  };
  return {
    allowed,
    authenticate,
    allow(callers) {
      allowed.push([...callers]);
      return (req, _res, next) => {
        const caller = callerOf(req.get('authorization'));
        if (!callers.includes(caller)) {
          throw new AppError(`${caller} may not call`, { code: 'forbidden', status: 403 });
        }
        next();
      };
    },
  };
}

/** A process with only what these checks read (cast: the rest is of no interest here). */
const processSpec = (spec: Partial<ProcessSpec> & { name: string }) =>
  ({
    entry: 'dist/index.js',
    port: 1,
    database: null,
    secrets: [],
    settings: [],
    calls: {},
    ...spec,
  }) as ProcessSpec;

const internal = (path: string, callers: readonly string[]) =>
  ({
    method: 'get',
    path,
    audience: 'internal',
    access: { kind: 'service', callers },
    summary: path,
  }) as const;

const auth = defineService({
  name: 'auth',
  processes: [processSpec({ name: 'auth', secrets: ['ADMIN_TOKEN', 'SERVICE_CALLERS'] })],
  routes: {
    tenantExists: internal('/internal/v1/tenants/:id', ['contacts', 'events', 'billing']),
    revokedKeys: internal('/internal/v1/revoked-keys', ['contacts', 'events']),
    createTenant: {
      method: 'post',
      path: '/admin/v1/tenants',
      audience: 'operator',
      access: { kind: 'admin' },
      summary: 'create',
    },
  },
  prefixes: [{ prefix: '/internal', access: 'service' }],
});

let running: RunningServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('mountRoutes with service routes', () => {
  it('when a known caller calls, then only the routes naming it let it in; a stranger gets 401 everywhere under the prefix', async () => {
    const guard = fakeServiceGuard();
    const app = createHttpApp({
      logger,
      routes: (a) =>
        mountRoutes(
          a,
          auth,
          {
            tenantExists: (_req, res) => res.sendStatus(200),
            revokedKeys: (_req, res) => res.sendStatus(200),
            createTenant: (_req, res) => res.sendStatus(201),
          },
          { admin: (_req, _res, next) => next(), service: guard },
        ),
    });
    running = await startServer(app, { host: '127.0.0.1', port: 0, logger });
    const get = async (path: string, caller?: string) =>
      (
        await fetch(`${running!.url}${path}`, {
          headers: caller ? { authorization: `Bearer ${caller}` } : {},
        })
      ).status;

    expect(guard.allowed).toEqual([
      ['contacts', 'events', 'billing'],
      ['contacts', 'events'],
    ]);
    expect(await get('/internal/v1/tenants/x', 'billing')).toBe(200);
    expect(await get('/internal/v1/revoked-keys', 'events')).toBe(200);
    expect(await get('/internal/v1/revoked-keys', 'billing')).toBe(403);
    expect(await get('/internal/v1/revoked-keys')).toBe(401);
    expect(await get('/internal/v1/nothing', 'stranger')).toBe(401);
    expect(await get('/internal/v1/nothing', 'events')).toBe(404);
  });
});

describe('manifestProblems', () => {
  const caller = (name: string, calls: Record<string, string>, secrets = ['SERVICE_TOKEN']) =>
    defineService({ name, processes: [processSpec({ name, secrets, calls })], routes: {} });

  const agreeing = () => [
    auth,
    caller('contacts', { auth: 'tenants, revocations' }),
    caller('events', { auth: 'tenants, revocations' }),
    caller('billing', { auth: 'whether a Tenant exists' }),
  ];

  it('when routes, calls and secrets agree, then there is none; the callers are each named once', () => {
    expect(manifestProblems(agreeing())).toEqual([]);
    expect(internalCallersOf(auth)).toEqual(['contacts', 'events', 'billing']);
  });

  it('when a route names a caller that does not declare the service in calls, then it is one', () => {
    const manifests: ServiceManifest[] = agreeing();
    manifests[3] = caller('billing', { contacts: 'nothing' });
    expect(manifestProblems(manifests)).toEqual([
      'auth: tenantExists (GET /internal/v1/tenants/:id): its caller billing does not declare auth in calls',
    ]);
  });

  it('when a route names no callers or an unknown one, then it is one', () => {
    const broken = defineService({
      ...auth,
      routes: {
        ...auth.routes,
        nobody: internal('/internal/v1/nobody', []),
        ghost: internal('/internal/v1/ghost', ['ghost']),
      },
    });
    expect(manifestProblems([broken, ...agreeing().slice(1)])).toEqual([
      'auth: nobody (GET /internal/v1/nobody) names no callers',
      'auth: ghost (GET /internal/v1/ghost): its caller ghost is no process of any service',
    ]);
  });

  it('when a process lists access secrets it does not need, or lacks ones it does, then each is one', () => {
    const manifests: ServiceManifest[] = [
      defineService({
        ...auth,
        processes: [
          processSpec({ name: 'auth', secrets: ['SERVICE_TOKEN'] }),
          processSpec({ name: 'auth-worker', secrets: ['ADMIN_TOKEN', 'SERVICE_CALLERS'] }),
        ],
      }),
      caller('contacts', { auth: 'tenants' }, []),
      caller('events', { auth: 'tenants' }),
      caller('billing', { auth: 'tenants' }),
    ];
    expect(manifestProblems(manifests)).toEqual([
      'auth must list ADMIN_TOKEN: it serves operator routes',
      'auth must list SERVICE_CALLERS: it serves internal routes',
      'auth-worker lists ADMIN_TOKEN, but it serves no operator routes',
      'auth-worker lists SERVICE_CALLERS, but it serves no internal routes guarded by service tokens',
      'auth lists SERVICE_TOKEN, but no internal route names it a caller',
      'contacts must list SERVICE_TOKEN: internal routes name it a caller',
    ]);
  });

  /** A service whose one process agrees with the others, plus `extra`. */
  const agreeingWith = (name: string, extra: Partial<ProcessSpec>) =>
    defineService({
      name,
      processes: [
        processSpec({ name, secrets: ['SERVICE_TOKEN'], calls: { auth: 'tenants' }, ...extra }),
      ],
      routes: {},
    });

  it('when a process names a niceness outside -20 to 19 or not whole, then it is one', () => {
    const withNiceness = (name: string, niceness: number) => agreeingWith(name, { niceness });
    const manifests: ServiceManifest[] = agreeing();
    manifests[1] = withNiceness('contacts', -21);
    manifests[2] = withNiceness('events', 1.5);
    manifests[3] = withNiceness('billing', 19);
    expect(manifestProblems(manifests)).toEqual([
      'contacts: niceness must be an integer from -20 to 19',
      'events: niceness must be an integer from -20 to 19',
    ]);
  });

  it('when a process names a heap V8 would refuse or clamp, then it is one', () => {
    const withHeap = (name: string, heap: HeapLimits) => agreeingWith(name, { heap });
    const manifests: ServiceManifest[] = agreeing();
    manifests[1] = withHeap('contacts', { semiSpaceMiB: 0, growingPercent: 401 });
    manifests[2] = withHeap('events', { semiSpaceMiB: 8, oldSpaceMiB: 32.5 });
    manifests[3] = withHeap('billing', { semiSpaceMiB: 64, oldSpaceMiB: 64, growingPercent: 400 });
    expect(manifestProblems(manifests)).toEqual([
      'contacts: heap.semiSpaceMiB must be 1 to 64',
      'contacts: heap.growingPercent must be 1 to 400',
      'events: heap.oldSpaceMiB must be 64 to 16384',
    ]);
  });

  it('when a process is defined, then its heap flags follow its node arguments, 16 MiB semi-spaces unless it names its own', () => {
    const [plain, sized, own] = defineService({
      name: 'events',
      processes: [
        processSpec({ name: 'events' }),
        processSpec({
          name: 'relay',
          heap: { semiSpaceMiB: 8, oldSpaceMiB: 160, growingPercent: 100 },
        }),
        processSpec({
          name: 'tool',
          nodeArgs: ['--enable-source-maps'],
          heap: { semiSpaceMiB: 4 },
        }),
      ],
      routes: {},
    }).processes;
    expect(plain!.nodeArgs).toEqual([
      '--import',
      '@herald/telemetry/register',
      '--max-semi-space-size=16',
    ]);
    expect(sized!.nodeArgs!.slice(2)).toEqual([
      '--max-semi-space-size=8',
      '--max-old-space-size=160',
      '--heap-growing-percent=100',
    ]);
    expect(own!.nodeArgs).toEqual(['--enable-source-maps', '--max-semi-space-size=4']);
  });
});
