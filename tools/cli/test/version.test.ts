import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from '@jest/globals';
import { repoRoot } from '../src/settings.js';

const versionOf = (file: string) =>
  (JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8')) as { version: string }).version;

it("when Herald is released, then the CLI's package carries Herald's version (the release ships it as herald-cli-<version>.tgz)", () => {
  expect(versionOf('tools/cli/package.json')).toBe(versionOf('package.json'));
});
