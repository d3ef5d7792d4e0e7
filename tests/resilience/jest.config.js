import { jestConfig } from '@herald/jest-preset';

// One file at a time: each one stops and starts infrastructure that the others use too.
export default jestConfig({ maxWorkers: 1, testTimeout: 300_000 });
