// What `helm template` of charts/herald must refuse or accept, for the cases helm-unittest cannot
// express: the chart's default values (which must refuse to name no image registry, and an
// Ingress without TLS), and the
// template's own refusal of secrets in `env` for installs that skip the schema
// (--skip-schema-validation). Also that the copies of the secret-name pattern agree.
// Each function returns a list of problems (empty when all is well).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** `helm template` with these arguments: { ok, output } (stdout and stderr), never throws. */
async function template(helm, chartDir, args) {
  try {
    const { stdout, stderr } = await execFileAsync(
      helm,
      ['template', 'herald', chartDir, ...args],
      {
        maxBuffer: 256 * 1024 * 1024,
      },
    );
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    if (typeof error.code !== 'number') throw error;
    return { ok: false, output: `${error.stdout ?? ''}${error.stderr ?? ''}` };
  }
}

/** Variables named like secrets, each refused in env (and as a plain extraEnv value). */
export const SECRET_VARIABLES = [
  'ADMIN_TOKEN',
  'SERVICE_TOKEN',
  'SERVICE_TOKEN_EVENTS',
  'SERVICE_CALLERS',
  'SERVICE_CALLERS_AUTH',
  'AUTH_SIGNING_KEYS',
  'DATABASE_URL',
  'CONTACTS_DATABASE_URL',
  'REDIS_URL',
  'REDIS_CLUSTER_NODES',
  'REDIS_PASSWORD',
  'KAFKA_SASL_PASSWORD',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'GITHUB_TOKEN',
  'WEBHOOK_SECRET',
  'SMTP_PASS',
  'STRIPE_API_KEY',
  'MY_APIKEY',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'admin_token',
];

/**
 * The cases, rendered concurrently. `base` are arguments every case gets (the defaults' TLS
 * switch); `settingsFile` sets every non-secret variable the services read. Each name of
 * SECRET_VARIABLES is tried with the schema (its error names the key's path and says where a
 * secret goes) and without (the templates' own refusal).
 */
export async function chartCases({ helm, chartDir, kubeVersionArgs, base, settingsFile }) {
  const problems = [];
  /**
   * One case: `fails` the error it must fail with, or none when it must render.
   * @param {string} what
   * @param {string[]} args
   * @param {{ fails?: RegExp }} expectation
   */
  const expect = async (what, args, { fails }) => {
    const result = await template(helm, chartDir, [...kubeVersionArgs, ...args]);
    if (fails === undefined && !result.ok) {
      problems.push(`${what}: refused\n${result.output.trim()}`);
    } else if (fails !== undefined && result.ok) {
      problems.push(`${what}: rendered, but should fail with ${fails}`);
    } else if (fails !== undefined && !fails.test(result.output)) {
      problems.push(`${what}: failed, but not with ${fails}\n${result.output.trim()}`);
    }
  };
  const skip = '--skip-schema-validation';
  const envRefusal =
    /names a secret, which env would store in plain text in a ConfigMap: put it in the Secret \(secrets\.existingSecret/;
  await Promise.all([
    expect('the default values (no image registry)', [], {
      fails: /herald:\s*- at '\/image\/registry': minLength: got 0, want 1/,
    }),
    expect('the default values with an image registry', ['--set', 'image.registry=r.example'], {
      fails:
        /ingress\.tls is empty: .*POST \/v1\/token.*clear text.*Set ingress\.requireTls=false only when TLS ends in front of the ingress controller/,
    }),
    expect(
      `every setting the services read, in env (${skip})`,
      [...base, skip, '-f', settingsFile],
      {},
    ),
    ...SECRET_VARIABLES.flatMap((name) => [
      expect(`defaults.env.${name}`, [...base, '--set', `defaults.env.${name}=x`], {
        fails: new RegExp(
          `^(?=[^]*/defaults/env/${name}': false schema)(?=[^]*'${name}' does not match pattern ` +
            `'a secret, never in env: keep it in the Secret \\(secrets\\.existingSecret\\))`,
        ),
      }),
      expect(`defaults.env.${name} (${skip})`, [...base, skip, '--set', `defaults.env.${name}=x`], {
        fails: envRefusal,
      }),
      expect(
        `services.billing.env.${name} (${skip})`,
        [...base, skip, '--set', `services.billing.env.${name}=x`],
        { fails: envRefusal },
      ),
    ]),
    expect(
      `services.events.extraEnv with a plain ADMIN_TOKEN (${skip})`,
      [
        ...base,
        skip,
        '--set',
        'services.events.extraEnv[0].name=ADMIN_TOKEN,services.events.extraEnv[0].value=x',
      ],
      {
        fails:
          /extraEnv ADMIN_TOKEN of events .* take it from a Secret with valueFrom\.secretKeyRef/,
      },
    ),
    expect(
      `defaults.extraEnv with ADMIN_TOKEN from a Secret (${skip})`,
      [
        ...base,
        skip,
        '--set',
        'defaults.extraEnv[0].name=ADMIN_TOKEN,defaults.extraEnv[0].valueFrom.secretKeyRef.name=s,defaults.extraEnv[0].valueFrom.secretKeyRef.key=k',
      ],
      {},
    ),
  ]);
  return problems;
}

/**
 * The secret-name pattern is written three times: values.schema.json's
 * definitions.secretVariableName, the key of env's patternProperties, and the template's
 * herald.secretVariablePattern. They must be the same text.
 */
export function secretPatternCopies(schema, helpersText) {
  const pattern = schema.definitions?.secretVariableName?.pattern;
  if (!pattern) return ['values.schema.json has no definitions.secretVariableName.pattern'];
  const problems = [];
  const keys = Object.keys(schema.definitions.process?.properties?.env?.patternProperties ?? {});
  if (keys.length !== 1 || keys[0] !== pattern) {
    problems.push('the key of env.patternProperties is not definitions.secretVariableName.pattern');
  }
  const define =
    /\{\{-? define "herald\.secretVariablePattern" -?\}\}\n(.*)\n\{\{-? end -?\}\}/.exec(
      helpersText,
    );
  if (!define) problems.push('no herald.secretVariablePattern in templates/_helpers.tpl');
  else if (define[1] !== pattern) {
    problems.push('herald.secretVariablePattern is not definitions.secretVariableName.pattern');
  }
  return problems;
}

/**
 * The `helm lint` and `helm template` commands of a README's shell blocks, as helm's arguments
 * (they are written on one line, without quotes, to be run from the repository's root).
 * @param {string} markdown
 * @returns {string[][]}
 */
export function readmeHelmCommands(markdown) {
  const blocks = [...markdown.matchAll(/^```sh\n([^]*?)^```/gm)].map((m) => m[1]);
  return blocks
    .flatMap((block) => block.split('\n'))
    .map((line) => line.trim())
    .filter((line) => /^helm (lint|template) /.test(line))
    .map((line) => line.split(/\s+/).slice(1));
}
