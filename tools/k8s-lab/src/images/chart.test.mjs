// Reading the rendered chart's pods: `node --test tools/k8s-lab/src/images/chart.test.mjs`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { budArgs } from './build.mjs';
import { containerEnv, imageName, localEnv, podsOf } from './chart.mjs';

const documents = [
  {
    kind: 'ConfigMap',
    metadata: { name: 'herald-contacts' },
    data: {
      PORT: '8080',
      HOST: '0.0.0.0',
      METRICS_PORT: '9464',
      SERVICE_URL_AUTH: 'http://herald-auth:80',
      AUTH_JWKS_URL: 'http://herald-auth:80/.well-known/jwks.json',
    },
  },
  {
    kind: 'Secret',
    metadata: { name: 'herald-secrets' },
    stringData: { ADMIN_TOKEN: 'admin', SERVICE_TOKEN_CONTACTS: 'token' },
    data: { CONTACTS_DATABASE_URL: Buffer.from('postgres://db/contacts').toString('base64') },
  },
  {
    kind: 'Deployment',
    metadata: { name: 'herald-contacts' },
    spec: {
      template: {
        metadata: { labels: { 'app.kubernetes.io/component': 'contacts' } },
        spec: {
          securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 },
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              image: 'registry.example/herald/contacts:0.1.0',
              command: ['node', 'dist/index.js'],
              ports: [
                { name: 'http', containerPort: 8080 },
                { name: 'metrics', containerPort: 9464 },
              ],
              envFrom: [{ configMapRef: { name: 'herald-contacts' } }],
              env: [
                {
                  name: 'SERVICE_TOKEN',
                  valueFrom: {
                    secretKeyRef: { name: 'herald-secrets', key: 'SERVICE_TOKEN_CONTACTS' },
                  },
                },
                {
                  name: 'DATABASE_URL',
                  valueFrom: {
                    secretKeyRef: { name: 'herald-secrets', key: 'CONTACTS_DATABASE_URL' },
                  },
                },
                { name: 'HOST', value: '127.0.0.1' },
              ],
              readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 5 },
              startupProbe: {
                httpGet: { path: '/healthz', port: 'http' },
                periodSeconds: 2,
                failureThreshold: 30,
              },
              lifecycle: { preStop: { sleep: { seconds: 5 } } },
              resources: { limits: { memory: '512Mi' } },
              securityContext: { readOnlyRootFilesystem: true },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }],
        },
      },
    },
  },
];

test('a Deployment becomes a pod with its environment resolved', () => {
  const [pod] = podsOf(documents);
  assert.equal(pod.kind, 'service');
  assert.equal(pod.name, 'contacts');
  assert.equal(pod.imageName, 'contacts');
  assert.equal(pod.tmpSize, '64Mi');
  assert.equal(pod.memoryLimit, '512Mi');
  assert.equal(pod.preStopSleepSeconds, 5);
  assert.deepEqual(pod.probes.startupProbe, {
    path: '/healthz',
    port: 8080,
    periodSeconds: 2,
    failureThreshold: 30,
  });
  // env wins over envFrom; Secret data is decoded
  assert.equal(pod.env.HOST, '127.0.0.1');
  assert.equal(pod.env.SERVICE_TOKEN, 'token');
  assert.equal(pod.env.DATABASE_URL, 'postgres://db/contacts');
});

test('a reference to a missing Secret key is an error', () => {
  assert.throws(
    () =>
      containerEnv(
        {
          env: [
            { name: 'X', valueFrom: { secretKeyRef: { name: 'herald-secrets', key: 'NOPE' } } },
          ],
        },
        { configMaps: {}, secrets: { 'herald-secrets': {} } },
      ),
    /no key NOPE/,
  );
});

test('local ports and the stack addresses of the other services', () => {
  const [pod] = podsOf(documents);
  const { env, replaced } = localEnv(pod.env, {
    stackVariables: {
      SERVICE_URL_AUTH: 'http://127.0.0.1:47181',
      AUTH_JWKS_URL: 'http://127.0.0.1:47181/.well-known/jwks.json',
    },
    port: 41001,
    metricsPort: 41002,
  });
  assert.equal(env.PORT, '41001');
  assert.equal(env.METRICS_PORT, '41002');
  assert.equal(env.SERVICE_URL_AUTH, 'http://127.0.0.1:47181');
  assert.deepEqual(replaced.sort(), ['AUTH_JWKS_URL', 'SERVICE_URL_AUTH']);
  assert.throws(() => localEnv(pod.env, { stackVariables: {} }), /no value for/);
});

test('image names and the relay target', () => {
  assert.equal(imageName('herald/events-relay:0.1.0'), 'events-relay');
  assert.equal(imageName('registry:5000/herald/auth:1.2@sha256:abc'), 'auth');
  const args = budArgs({
    repoRoot: '/repo',
    name: 'events-relay',
    tag: 'herald/events-relay:0.1.0',
  });
  assert.deepEqual(args.slice(args.indexOf('--target'), args.indexOf('--target') + 2), [
    '--target',
    'relay',
  ]);
  assert.ok(args.includes('--pull=never'));
  assert.throws(() => budArgs({ repoRoot: '/repo', name: 'nope', tag: 'x' }), /no Dockerfile/);
});

test('the install test pulls the released images: no pull policy that forbids it, no tag of its own', () => {
  const values = readFileSync(
    new URL('../../../../charts/herald/ci/local-cluster-values.yaml', import.meta.url),
    'utf8',
  );
  assert.doesNotMatch(values, /pullPolicy: Never/);
  assert.doesNotMatch(values, /^ {2}tag:/m, 'the tag follows the appVersion, as the release does');
});
