// `node --test tools/generate/src/dockerfile.test.mjs`: every service's Dockerfile comes from one
// template; a service's other processes become build targets before the service's own, last.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BASE_IMAGE, dockerfile } from './dockerfile.mjs';

const process_ = (name, port, entry, nodeArgs = []) => ({ name, port, entry, nodeArgs, calls: {} });
const manifests = (processes) => [
  { dir: 'demo', manifest: { name: 'demo', processes, routes: {} } },
];

test('when a service has one process, then the image runs it and has no other target', () => {
  const text = dockerfile('demo')(manifests([process_('demo', 18081, 'dist/index.js', ['--x'])]));
  assert.equal(text.match(/^FROM /gm).length, 2);
  assert.ok(text.includes(`FROM ${BASE_IMAGE} AS build`));
  assert.ok(text.includes('--workspace=@herald/demo-service'));
  assert.ok(text.endsWith('CMD ["node", "--x", "dist/index.js"]\n'));
  assert.ok(!text.includes('AS service'));
});

test('when a service has a second process, then it is a target of its own and the service is the last', () => {
  const text = dockerfile('demo')(
    manifests([
      process_('demo', 18081, 'dist/index.js'),
      process_('demo-relay', 18085, 'dist/relay/main.js', ['--y']),
    ]),
  );
  const targets = [...text.matchAll(/^FROM \S+ AS (\S+)$/gm)].map((m) => m[1]);
  assert.deepEqual(targets, ['build', 'runtime', 'relay', 'service']);
  assert.ok(text.includes('--target relay -t herald/demo-relay'));
  assert.ok(text.includes('FROM runtime AS relay\nCMD ["node", "--y", "dist/relay/main.js"]'));
  assert.ok(text.endsWith('CMD ["node", "dist/index.js"]\n'));
});
