import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '@herald/stack/config.mjs';
import {
  BEGIN,
  END,
  markdownTable,
  readersOf,
  settingsRows,
  withSettingsTable,
} from './settings-table.mjs';

// zod as the services use it (the generator runs after the build, as here).
const { z } = await import(pathToFileURL(path.join(repoRoot, 'libs/config/dist/index.js')).href);

const httpEnv = (port) => ({
  PORT: z.coerce.number().default(port).describe('listen port'),
  TOKEN: z.string().min(8).describe('its own token'),
});
const processSpec = (name, port, schema, secrets = []) => ({
  name,
  port,
  secrets,
  settings: Object.keys(schema.shape).filter((n) => !secrets.includes(n)),
});

function service(name, port, extra = {}) {
  const main = z.object({ ...httpEnv(port), ...extra });
  const migration = z.object({
    DATABASE_URL: z.url().default(`postgres://db/${name}`).describe('its database'),
  });
  return {
    dir: name,
    manifest: { name, processes: [processSpec(name, port, main, ['TOKEN'])] },
    schemas: { [name]: main, [`${name} migration`]: migration },
  };
}

function fixture() {
  const services = [
    service('beta', 2, { LIST: z.string().default('').describe('a | list') }),
    service('alpha', 1),
  ];
  return {
    manifests: services.map(({ dir, manifest }) => ({ dir, manifest })),
    schemas: new Map(services.map(({ dir, schemas }) => [dir, schemas])),
  };
}

test('a row per variable, processes first (by port), then migrations: who reads it, its default for each reader, its description', () => {
  const { manifests, schemas } = fixture();
  assert.deepEqual(settingsRows(readersOf(manifests, schemas)), [
    ['`PORT`', 'every process', 'alpha: `1`; beta: `2`', 'listen port'],
    ['`TOKEN`', 'every process', 'none (secret)', 'its own token'],
    ['`LIST`', 'beta', 'empty', 'a | list'],
    [
      '`DATABASE_URL`',
      'every migration',
      'alpha migration: `postgres://db/alpha`; beta migration: `postgres://db/beta`',
      'its database',
    ],
  ]);
});

test('a variable without a description, or a schema the manifest does not list, is refused', () => {
  const { manifests, schemas } = fixture();
  schemas.get('alpha').alpha = z.object({
    ...httpEnv(1),
    MUTE: z.string().optional(),
  });
  assert.throws(
    () => readersOf(manifests, schemas),
    /alpha: its schema and its manifest differ in MUTE/,
  );
  manifests[1].manifest.processes[0].settings.push('MUTE');
  assert.throws(
    () => settingsRows(readersOf(manifests, schemas)),
    /MUTE \(read by alpha\) has no description/,
  );
});

test('the table is aligned as prettier aligns it, with a | in a cell escaped', () => {
  assert.equal(
    markdownTable(['A', 'Long header'], [['a | b', 'c']]),
    ['| A      | Long header |', '| ------ | ----------- |', '| a \\| b | c           |'].join(
      '\n',
    ),
  );
});

test('only the region between the markers is rewritten, and the markers must be there', () => {
  const { manifests, schemas } = fixture();
  const readers = readersOf(manifests, schemas);
  const readme = `# Title\n\n${BEGIN}\n\nold table\n\n${END}\n\nafter\n`;
  const written = withSettingsTable(readme, readers);
  assert.match(written, /^# Title\n\n<!-- settings: [^\n]+-->\n\n\| Variable +\| Read by/);
  assert.ok(written.endsWith(`|\n\n${END}\n\nafter\n`));
  assert.ok(!written.includes('old table'));
  assert.equal(withSettingsTable(written, readers), written);
  assert.throws(() => withSettingsTable('# Title\n', readers), /README.md must hold/);
});
