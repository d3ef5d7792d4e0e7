// The repository's lint setup, less the generated OpenAPI types (openapi-typescript's output is
// checked by the compiler and by `npm run generate:check`, not held to hand-written style).
import root from '../../eslint.config.js';

export default [...root, { ignores: ['src/generated/**'] }];
