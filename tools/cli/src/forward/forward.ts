// `herald-admin forward`: one local address for every operator route of an installation whose
// operator API is not exposed. The operator routes live on four Services (auth, contacts,
// events, billing), and `kubectl port-forward` reaches one Service per port; this runs one
// port-forward per Service and a router in front of them that sends each path where the
// operator Ingress would.
import { spawn, type ChildProcess } from 'node:child_process';
import { CliError, type Env } from '../settings.js';
import { operatorRoutes } from './operator-routes.generated.js';
import { startRouter, type Router } from './router.js';

export interface ForwardOptions {
  /** The release's namespace; kubectl's current one when unset. */
  readonly namespace?: string;
  /** The Helm release name (the `app.kubernetes.io/instance` label). */
  readonly release: string;
  /** The local port (127.0.0.1); 0 picks a free one. */
  readonly port: number;
  /** A kubeconfig context; kubectl's current one when unset. */
  readonly context?: string;
}

export interface Forward extends Router {
  /** Each forwarded Service, by the name the routes use: `auth` → `herald-auth`. */
  readonly services: ReadonlyMap<string, string>;
}

type Log = (line: string) => void;

/** How long kubectl may take to open a port-forward before the command gives up. */
const START_TIMEOUT_MS = 30_000;
/** The pause before a port-forward that ended (its pod went away) is opened again. */
const RESTART_DELAY_MS = 1_000;

class Kubectl {
  constructor(
    private readonly options: ForwardOptions,
    private readonly env: Env,
  ) {}

  get binary(): string {
    return this.env.KUBECTL || 'kubectl';
  }

  args(args: readonly string[]): string[] {
    return [
      ...(this.options.context ? ['--context', this.options.context] : []),
      ...(this.options.namespace ? ['--namespace', this.options.namespace] : []),
      ...args,
    ];
  }

  spawn(args: readonly string[]): ChildProcess {
    return spawn(this.binary, this.args(args), {
      env: { ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  /** Runs kubectl to its end: its stdout, or a CliError with what it said. */
  output(args: readonly string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = this.spawn(args);
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', (err) => reject(new CliError(`cannot run ${this.binary}: ${err.message}`)));
      child.on('close', (code) => {
        if (code === 0) resolve(stdout);
        else reject(new CliError(`kubectl ${args.join(' ')}: ${stderr.trim() || `exit ${code}`}`));
      });
    });
  }
}

/** The release's Services that serve operator routes, by the component label. */
async function releaseServices(kubectl: Kubectl, release: string): Promise<Map<string, string>> {
  const selector = `app.kubernetes.io/part-of=herald,app.kubernetes.io/instance=${release}`;
  const listed = JSON.parse(
    await kubectl.output(['get', 'services', '--selector', selector, '--output', 'json']),
  ) as { items: { metadata: { name: string; labels?: Record<string, string> } }[] };
  const byComponent = new Map<string, string>();
  for (const { metadata } of listed.items) {
    const component = metadata.labels?.['app.kubernetes.io/component'];
    if (component) byComponent.set(component, metadata.name);
  }
  const wanted = [...new Set(operatorRoutes.map((r) => r.service))];
  const found = new Map(
    wanted.flatMap((s) => (byComponent.has(s) ? [[s, byComponent.get(s) as string]] : [])),
  );
  if (found.size === 0) {
    throw new CliError(
      `no Services of the Helm release "${release}" here: name its namespace (--namespace) ` +
        'and release (--release)',
    );
  }
  return found;
}

/**
 * One `kubectl port-forward service/<name> :http`, opened again whenever it ends while the
 * command runs: kubectl forwards to one pod, and ends when that pod goes away (a rollout).
 */
class ServiceForward {
  /** The local port while the forward is open. */
  port: number | undefined;
  private child: ChildProcess | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly kubectl: Kubectl,
    readonly service: string,
    readonly name: string,
    private readonly log: Log,
  ) {}

  /** Resolves once kubectl listens; rejects with what kubectl said if it ends first. */
  open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const args = ['port-forward', '--address', '127.0.0.1', `service/${this.name}`, ':http'];
      const child = this.kubectl.spawn(args);
      this.child = child;
      let said = '';
      let out = '';
      const started = setTimeout(() => {
        child.kill();
        reject(new CliError(`kubectl port-forward service/${this.name}: no port within 30 s`));
      }, START_TIMEOUT_MS);
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const port = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out)?.[1];
        if (port && this.port === undefined) {
          clearTimeout(started);
          this.port = Number(port);
          resolve();
        }
      });
      child.stderr?.on('data', (d: Buffer) => (said += d.toString()));
      child.on('error', (err) => {
        clearTimeout(started);
        reject(new CliError(`cannot run ${this.kubectl.binary}: ${err.message}`));
      });
      child.on('close', (code) => {
        clearTimeout(started);
        const wasOpen = this.port !== undefined;
        this.port = undefined;
        const why = said.trim().split('\n').pop() || `exit ${code}`;
        if (!wasOpen) {
          reject(new CliError(`kubectl port-forward service/${this.name}: ${why}`));
          return;
        }
        if (this.closed) return;
        this.log(`${this.service}: the port-forward ended (${why}); opening it again`);
        this.reopen();
      });
    });
  }

  private reopen(): void {
    this.timer = setTimeout(() => {
      if (this.closed) return;
      this.open().then(
        () => this.log(`${this.service}: forwarded again`),
        (err: Error) => {
          this.log(`${this.service}: ${err.message}; trying again`);
          this.reopen();
        },
      );
    }, RESTART_DELAY_MS);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.child?.kill();
  }
}

/**
 * Opens a port-forward to each Service of the release that serves operator routes and a router
 * on 127.0.0.1:`port` in front of them. A Service the release does not run (disabled) answers
 * 503, as does one whose port-forward is being opened again.
 */
export async function startForward(options: ForwardOptions, env: Env, log: Log): Promise<Forward> {
  const kubectl = new Kubectl(options, env);
  const services = await releaseServices(kubectl, options.release);
  const forwards = [...services].map(([s, name]) => new ServiceForward(kubectl, s, name, log));
  try {
    await Promise.all(forwards.map((f) => f.open()));
  } catch (error) {
    for (const f of forwards) f.close();
    throw error;
  }
  const byService = new Map(forwards.map((f) => [f.service, f]));
  let router: Router;
  try {
    router = await startRouter(
      operatorRoutes,
      (service) => {
        const port = byService.get(service)?.port;
        return port === undefined ? undefined : `http://127.0.0.1:${port}`;
      },
      { port: options.port },
    );
  } catch (error) {
    for (const f of forwards) f.close();
    const { code } = error as NodeJS.ErrnoException;
    throw code === 'EADDRINUSE'
      ? new CliError(`127.0.0.1:${options.port} is taken: choose another --port`)
      : error;
  }
  return {
    url: router.url,
    services,
    close: async () => {
      for (const f of forwards) f.close();
      await router.close();
    },
  };
}
