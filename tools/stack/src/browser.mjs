// Prints the path of a Chromium the browser tests can drive, installing Debian's `chromium`
// with apt-get first when it is missing (as the stack installs its servers).
import { ensureSystemPackages } from './system-packages.mjs';
import { which } from './processes.mjs';

const found = await ensureSystemPackages({
  requirements: { chromium: { find: () => which('chromium'), apt: 'chromium' } },
});
console.log(found.chromium);
