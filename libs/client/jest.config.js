import { jestConfig } from '@herald/jest-preset';

export default jestConfig({ setupFilesAfterEnv: ['<rootDir>/test/contract-check.ts'] });
