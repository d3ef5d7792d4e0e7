import { jestConfig } from '@herald/jest-preset';

export default jestConfig();
