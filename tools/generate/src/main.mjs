// `npm run generate` writes every file derived from the services' manifests
// (services/*/src/manifest.ts, read from their build output, so it runs after the build) and
// from the service level objectives (tools/observability/src/slos.mjs);
// `npm run generate -- --check` writes nothing and fails naming each file that is out of date.
// A target is `{ file, render(manifests, context) }`; `render` returns the file's whole text.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import prettier from 'prettier';
import { renderApiReference } from './api-reference.mjs';
import { dockerfile } from './dockerfile.mjs';
import { chartProcesses, cliOperatorRoutes, composeFile, stackRegistry } from './render.mjs';
import { alertsWithSloGroup, k6Objectives } from '@herald/observability/slos.mjs';
import { commandLine } from '@herald/stack/args.mjs';
import { repoRoot as root } from '@herald/stack/config.mjs';

const USAGE = `Usage: npm run generate [-- --check]

Writes every file derived from the services' manifests (run after the build).
  --check   write nothing; exit 1 naming each file that is out of date`;
const { values } = commandLine(USAGE, { options: { check: { type: 'boolean' } } });

const load = (file) => import(pathToFileURL(path.join(root, file)).href);

const { buildOpenApi, manifestProblems, operationsOf } = await load('libs/http/dist/index.js');
const { TOPIC_SETTINGS } = await load('libs/messages/dist/index.js');

const targets = [
  { file: 'libs/api-reference/openapi.json', render: openApiDocument },
  { file: 'tools/stack/src/processes.generated.json', render: stackRegistry },
  { file: 'charts/herald/templates/_processes.tpl', render: chartProcesses },
  { file: 'tools/cli/src/forward/operator-routes.generated.ts', render: cliOperatorRoutes },
  { file: 'docker-compose.yml', render: composeFile },
  {
    file: 'docs/api-reference.md',
    render: (manifests) => renderApiReference(JSON.parse(openApiDocument(manifests))),
  },
  { file: 'README.md', render: (await import('./settings-table.mjs')).settingsTable },
  // The service level objectives' alerts and load-test thresholds, from their one definition.
  {
    file: 'charts/herald/files/alerts.yaml',
    render: (_manifests, { current }) => alertsWithSloGroup(current),
  },
  { file: 'loadtest/lib/slos.generated.js', render: () => k6Objectives() },
];

function openApiDocument(manifests) {
  const document = buildOpenApi(
    {
      title: 'Herald',
      version: '1',
      description: [
        'Herald records the people you message (Contacts) and what they and their organizations do (Events); Journeys turn Events into email and SMS.',
        '',
        'Start by exchanging an API key for an access token at `POST /v1/token` (HTTP Basic, ClientID and secret), then call the public routes with `Authorization: Bearer <token>`. Give every Event a `dedupKey` and resend failed requests with the same keys: an Event is recorded once per key inside the dedup window, however often it is sent.',
      ].join('\n'),
      // No licence is granted: the repository has no LICENSE and its packages are private.
      license: { name: 'Proprietary' },
      'x-generated-by':
        'tools/generate/src/main.mjs (npm run generate), from the services\u2019 manifests and zod schemas: do not edit',
      servers: [
        { url: 'http://localhost:8080', description: 'the local stack (npm start)' },
        {
          url: 'https://{host}',
          description: 'a deployment: the host of its public Ingress',
          variables: { host: { default: 'api.herald.example' } },
        },
      ],
    },
    manifests.flatMap(({ manifest }) => operationsOf(manifest.routes)),
  );
  return `${JSON.stringify(document, null, 2)}\n`;
}

async function loadManifests() {
  const manifests = [];
  for (const dir of fs.readdirSync(path.join(root, 'services')).sort()) {
    if (!fs.existsSync(path.join(root, 'services', dir, 'src', 'manifest.ts'))) continue;
    const built = path.join('services', dir, 'dist', 'manifest.js');
    if (!fs.existsSync(path.join(root, built))) {
      throw new Error(`${built} is missing: build first (npx turbo run build)`);
    }
    const { manifest } = await load(built);
    if (manifest?.name !== dir) throw new Error(`${built} must export the manifest of ${dir}`);
    manifests.push({ dir, manifest });
  }
  return manifests;
}

const check = values.check === true;
const manifests = await loadManifests();
// Every service's image, from one template.
for (const { dir } of manifests) {
  targets.push({ file: `services/${dir}/Dockerfile`, render: dockerfile(dir) });
}
// Who may call which internal route, and which process gets which access secret, must agree
// across the manifests before anything is derived from them.
const problems = manifestProblems(manifests.map(({ manifest }) => manifest));
if (problems.length > 0) {
  for (const problem of problems) console.error(`generate: ${problem}`);
  console.error('generate: fix the manifests (services/*/src/manifest.ts)');
  process.exit(1);
}
const stale = [];
for (const target of targets) {
  const file = path.join(root, target.file);
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const rendered = target.render(manifests, {
    current,
    file: target.file,
    topicSettings: TOPIC_SETTINGS,
  });
  // as the repository's formatter writes it (unless it ignores the file), so the lint agrees
  const { ignored, inferredParser } = await prettier.getFileInfo(file, {
    ignorePath: path.join(root, '.prettierignore'),
  });
  const text =
    ignored || !inferredParser || !/\.(json|ts)$/.test(target.file)
      ? rendered
      : await prettier.format(rendered, {
          ...(await prettier.resolveConfig(file)),
          filepath: file,
        });
  if (text === current) continue;
  if (check) stale.push(target.file);
  else {
    fs.writeFileSync(file, text);
    console.log(`generate: wrote ${target.file}`);
  }
}
// The SDK's types follow the document (openapi-typescript, asynchronous: its own script).
const client = spawnSync(
  process.execPath,
  [path.join(root, 'libs', 'client', 'scripts', 'generate.mjs'), ...(check ? ['--check'] : [])],
  { encoding: 'utf8' },
);
if (client.status !== 0) {
  if (!check) throw new Error(`the SDK's types could not be generated:\n${client.stderr}`);
  stale.push('libs/client/src/generated/openapi.ts');
}
if (stale.length > 0) {
  for (const file of stale) console.error(`generate: ${file} is out of date`);
  console.error('generate: run `npm run generate` and commit the result');
  process.exit(1);
}
console.log(
  `generate: ${targets.length} files ${check ? 'up to date' : 'in sync'} with ${manifests.length} service manifests`,
);
