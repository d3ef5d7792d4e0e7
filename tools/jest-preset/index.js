// Shared jest setup: TypeScript run directly through SWC as native ES modules, and
// workspace libs resolved to their sources so tests never need a prior build.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** @returns {import('jest').Config} */
export function jestConfig(overrides = {}) {
  return {
    testEnvironment: 'node',
    extensionsToTreatAsEsm: ['.ts'],
    transform: {
      '^.+\\.ts$': [
        '@swc/jest',
        {
          jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
          module: { type: 'es6' },
          sourceMaps: 'inline',
        },
      ],
    },
    moduleNameMapper: {
      '^@herald/([a-z-]+)$': `${repoRoot}/libs/$1/src/index.ts`,
      '^(\\.{1,2}/.*)\\.js$': '$1',
    },
    testMatch: ['<rootDir>/test/**/*.test.ts'],
    testTimeout: 30_000,
    reporters: ['default', `${repoRoot}/tools/jest-preset/summary-reporter.js`],
    ...overrides,
  };
}
