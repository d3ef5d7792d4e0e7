import { z } from 'zod';

/** Thrown at start when the environment does not fit the service's schema. */
export class ConfigError extends Error {
  constructor(readonly issues: readonly string[]) {
    super(`invalid configuration:\n${issues.map((i) => `  - ${i}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Parses the environment once with a zod schema whose keys are variable names, and returns
 * a frozen, typed object. Empty strings count as unset, so `FOO=` falls back to the default.
 */
export function loadConfig<S extends z.ZodObject>(
  schema: S,
  env: Env = process.env,
): Readonly<z.output<S>> {
  const input: Env = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    input[key] = value === '' ? undefined : value;
  }
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => {
        const name = issue.path.join('.') || '(root)';
        const shown = typeof issue.path[0] === 'string' ? input[issue.path[0]] : undefined;
        const got = shown === undefined ? 'unset' : 'got a value that does not fit';
        return `${name}: ${issue.message} (${got})`;
      }),
    );
  }
  return Object.freeze(result.data);
}

/** A TCP port, with a local default. */
export const port = (fallback: number) =>
  z.coerce.number().int().min(0).max(65535).default(fallback);

/** A URL, with a local default. */
export const url = (fallback: string) => z.url().default(fallback);

/** A whole number, with a default. */
export const int = (fallback: number, min = 0) =>
  z.coerce.number().int().min(min).default(fallback);

/**
 * A secret never has a default: the local stack generates one and passes it in, and a
 * deployment must provide its own.
 */
export const secret = (minLength = 16) =>
  z
    .string({ error: 'required secret is missing' })
    .min(minLength, `must be at least ${minLength} characters`);

/** A comma-separated list, e.g. `KAFKA_BROKERS=a:9092,b:9092`. */
export const list = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((s) =>
      s
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string()).min(1));

/** A comma-separated list of URLs, empty by default, e.g. Redis Cluster seed nodes. */
export const urlList = () =>
  z
    .string()
    .default('')
    .transform((s) =>
      s
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.url()));

/** An optional switch: `true` or `false` (also 1/0, yes/no, on/off); unset stays undefined. */
export const flag = () => z.stringbool({ error: 'must be true or false' }).optional();

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .default('info');

/**
 * The port of the process's Prometheus endpoint (GET /metrics), apart from PORT; unset, none is
 * opened. `@herald/telemetry/register` serves it (and refuses to start on a bad value before
 * this schema is read); it is here so that the manifest lists it and the same rule is checked.
 */
export const metricsPort = () => z.coerce.number().int().min(1).max(65535).optional();

/** The variables every HTTP service reads. */
export const httpServerEnv = (defaultPort: number) => ({
  HOST: z.string().default('127.0.0.1').describe('listen address (`0.0.0.0` in containers)'),
  PORT: port(defaultPort).describe('listen port'),
  METRICS_PORT: metricsPort().describe(
    "port of the process's Prometheus endpoint, `GET /metrics`, apart from `PORT`; unset, none is opened (the local stack sets each process's own, the chart `metrics.port`) ([docs/metrics.md](docs/metrics.md))",
  ),
  LOG_LEVEL: logLevel.describe('pino level: `fatal` … `trace`, `silent`'),
  SHUTDOWN_TIMEOUT_MS: int(10_000).describe(
    'how long SIGTERM waits for in-flight requests before closing anyway',
  ),
});

export { caFile, readCaFile } from './certificates.js';
export { z };
