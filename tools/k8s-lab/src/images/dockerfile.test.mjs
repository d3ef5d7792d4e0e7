// The Dockerfiles' base images: every external image pinned by digest, and the builds of
// `npm run images` served by the stand-in. `node --test tools/k8s-lab/src/images/dockerfile.test.mjs`.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { BASE_IMAGE } from './base.mjs';
import {
  fromInstructions,
  instructions,
  parseReference,
  standInContexts,
  unpinnedFroms,
} from './dockerfile.mjs';
import { repoRoot } from '@herald/stack/config.mjs';

const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;

function serviceDockerfiles() {
  const dir = path.join(repoRoot, 'services');
  return fs
    .readdirSync(dir)
    .map((name) => path.join('services', name, 'Dockerfile'))
    .filter((file) => fs.existsSync(path.join(repoRoot, file)))
    .map((file) => ({ file, text: fs.readFileSync(path.join(repoRoot, file), 'utf8') }));
}

test('image references are read as Docker reads them', () => {
  assert.deepEqual(parseReference('node:24-slim'), {
    name: 'docker.io/library/node',
    tag: '24-slim',
    digest: null,
    pinned: false,
  });
  assert.deepEqual(parseReference(`node:24-slim@${DIGEST}`), {
    name: 'docker.io/library/node',
    tag: '24-slim',
    digest: DIGEST,
    pinned: true,
  });
  assert.equal(parseReference('bitnami/redis').name, 'docker.io/bitnami/redis');
  assert.equal(parseReference('bitnami/redis').tag, 'latest');
  assert.equal(parseReference('registry:5000/team/app:1').name, 'registry:5000/team/app');
  assert.equal(parseReference(`ghcr.io/o/app@${DIGEST}`).tag, null);
  assert.equal(parseReference('node@sha256:abc').pinned, false, 'not a whole sha256 digest');
});

test('FROM lines: stages, scratch, flags, ARG defaults and continuations', () => {
  const froms = fromInstructions(
    [
      `ARG BASE=node:24@${DIGEST}`,
      '# FROM commented:out',
      'FROM --platform=linux/amd64 $BASE AS Build',
      'RUN true \\',
      '  && true',
      'from \\',
      '  build AS runtime',
      'FROM scratch',
      'FROM alpine:3.20',
    ].join('\n'),
  );
  assert.deepEqual(
    froms.map((f) => [f.line, f.image, f.alias, f.stage, f.scratch, f.reference?.pinned]),
    [
      [3, `node:24@${DIGEST}`, 'build', false, false, true],
      [6, 'build', 'runtime', true, false, undefined],
      [8, 'scratch', undefined, false, true, undefined],
      [9, 'alpine:3.20', undefined, false, false, false],
    ],
  );
  assert.deepEqual(
    instructions('RUN a \\\n  b\n\nCOPY x y').map((i) => [i.line, i.keyword, i.text]),
    [
      [1, 'RUN', 'RUN a b'],
      [4, 'COPY', 'COPY x y'],
    ],
  );
});

test('an external image without a digest is refused; stages and scratch need none', () => {
  const text = [
    `FROM node:24.21.0-bookworm-slim@${DIGEST} AS build`,
    'FROM build AS test',
    'FROM scratch AS empty',
    'FROM node:24.21.0-bookworm-slim AS runtime',
    'FROM $UNSET',
  ].join('\n');
  assert.deepEqual(unpinnedFroms(text), [
    'line 4: FROM node:24.21.0-bookworm-slim (no @sha256: digest)',
    'line 5: FROM $UNSET (a variable that has no default before the first FROM)',
  ]);
  assert.deepEqual(unpinnedFroms(`FROM node:24@${DIGEST}\nFROM redis@${DIGEST}`), []);
});

test('every FROM of an external image in services/*/Dockerfile carries a digest', () => {
  const files = serviceDockerfiles();
  assert.ok(files.length >= 4, 'the services have Dockerfiles');
  const problems = files.flatMap(({ file, text }) =>
    unpinnedFroms(text).map((p) => `${file} ${p}`),
  );
  assert.deepEqual(problems, [], 'pin each base as name:tag@sha256:<digest> (docs/images.md)');
});

test('the Dockerfiles pin each external image to one digest', () => {
  const digests = new Map();
  for (const { file, text } of serviceDockerfiles()) {
    for (const { reference } of fromInstructions(text)) {
      if (!reference) continue;
      const key = `${reference.name}:${reference.tag}`;
      digests.set(key, [...(digests.get(key) ?? []), `${reference.digest} (${file})`]);
    }
  }
  for (const [image, pins] of digests) {
    const distinct = new Set(pins.map((p) => p.split(' ')[0]));
    assert.equal(distinct.size, 1, `${image} is pinned differently: ${pins.join(', ')}`);
  }
});

test('npm run images serves every pinned base of the Dockerfiles from the stand-in', () => {
  for (const { file, text } of serviceDockerfiles()) {
    const contexts = standInContexts(text, { base: BASE_IMAGE, standIn: BASE_IMAGE });
    const pinned = fromInstructions(text).filter((f) => f.reference);
    assert.ok(pinned.length > 0, `${file} starts from the base`);
    for (const { image } of pinned) {
      assert.ok(
        contexts.includes(`${image}=docker-image://${BASE_IMAGE}`),
        `${file}: ${image} is served by the stand-in`,
      );
    }
  }
});

test('the stand-in build contexts: one per pinned name; another external image is refused', () => {
  const base = 'docker.io/library/node:24.21.0-bookworm-slim';
  const text = [
    `FROM node:24.21.0-bookworm-slim@${DIGEST} AS build`,
    `FROM node:24.21.0-bookworm-slim@${DIGEST} AS runtime`,
    'FROM runtime AS relay',
  ].join('\n');
  assert.deepEqual(standInContexts(text, { base, standIn: base }), [
    '--build-context',
    `node:24.21.0-bookworm-slim@${DIGEST}=docker-image://${base}`,
  ]);
  assert.throws(
    () => standInContexts(`FROM redis:7@${DIGEST}`, { base, standIn: base }),
    /line 1: FROM redis:7@sha256:\w+: only docker.io\/library\/node:24.21.0-bookworm-slim has a stand-in/,
  );
  assert.throws(
    () => standInContexts(`FROM node:22-bookworm-slim@${DIGEST}`, { base, standIn: base }),
    /only .* has a stand-in/,
  );
});
