// The release's pure parts: `node --test tools/release/src/artifacts.test.mjs`.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { parse } from 'yaml';
import { checksums, pinnedValues, releaseNotes, valuesKey } from './artifacts.mjs';

const CHANGELOG = `# Changelog

## [Unreleased]

## [1.1.0] - 2026-12-01

Herald 1.1.0, Chart 1.1.0.

### Added

- a thing

## [1.0.0] - 2026-11-29

Herald 1.0.0, Chart 1.0.0.
`;

test("the release notes are the version's section of the changelog, up to the next", () => {
  assert.equal(
    releaseNotes(CHANGELOG, '1.1.0'),
    '## [1.1.0] - 2026-12-01\n\nHerald 1.1.0, Chart 1.1.0.\n\n### Added\n\n- a thing\n',
  );
  assert.equal(
    releaseNotes(CHANGELOG, '1.0.0'),
    '## [1.0.0] - 2026-11-29\n\nHerald 1.0.0, Chart 1.0.0.\n',
  );
  assert.equal(releaseNotes(CHANGELOG, '2.0.0'), null);
});

const VALUES = `# Default values.
image:
  # Required.
  registry: ""
  repositoryPrefix: herald
services:
  auth:
    replicas: 2
  contacts: {}
  eventsRelay:
    autoscaling:
      enabled: false
`;
const digest = (c) => `sha256:${c.repeat(64)}`;

test("the packaged chart's values name the release's registry and pin each image's digest, comments kept", () => {
  const pinned = pinnedValues(VALUES, '127.0.0.1:25000', {
    auth: digest('a'),
    contacts: digest('b'),
    'events-relay': digest('c'),
  });
  const values = parse(pinned);
  assert.equal(values.image.registry, '127.0.0.1:25000');
  assert.equal(values.services.auth.image.digest, digest('a'));
  assert.equal(values.services.auth.replicas, 2);
  assert.equal(values.services.contacts.image.digest, digest('b'));
  assert.equal(values.services.eventsRelay.image.digest, digest('c'));
  assert.equal(values.services.eventsRelay.autoscaling.enabled, false);
  assert.match(pinned, /# Required\./);
});

test('a digest that is not one, or a process the values do not know, is refused', () => {
  assert.throws(() => pinnedValues(VALUES, 'r', { auth: 'latest' }), /not a digest/);
  assert.throws(() => pinnedValues(VALUES, 'r', { billing: digest('d') }), /no services\.billing/);
  assert.equal(valuesKey('events-relay'), 'eventsRelay');
});

test('the checksums are sha256sum lines, sorted by name', () => {
  const sum = (s) => createHash('sha256').update(s).digest('hex');
  assert.equal(
    checksums([
      { name: 'b.txt', bytes: Buffer.from('b') },
      { name: 'a/x.json', bytes: Buffer.from('x') },
    ]),
    `${sum('x')}  a/x.json\n${sum('b')}  b.txt\n`,
  );
});
