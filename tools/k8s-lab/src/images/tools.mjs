// The programs `npm run images` drives (buildah, runc, mmdebstrap), installed from Debian's
// packages when missing as the local stack installs its own, and one way to run them.
import { exists, tailFile } from '@herald/stack/files.mjs';
import { run, which } from '@herald/stack/processes.mjs';
import { ensureSystemPackages } from '@herald/stack/system-packages.mjs';

const SBIN = ['/usr/local/sbin', '/usr/sbin', '/sbin'];
const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';

export const REQUIREMENTS = {
  buildah: { find: () => which('buildah'), apt: 'buildah' },
  runc: { find: () => which('runc', SBIN), apt: 'runc' },
  mmdebstrap: { find: () => which('mmdebstrap'), apt: 'mmdebstrap' },
  // mmdebstrap checks the mirror's signatures with it
  keyring: { find: () => (exists(KEYRING) ? KEYRING : null), apt: 'debian-archive-keyring' },
  gpgv: { find: () => which('gpgv'), apt: 'gpgv' },
};

/** Paths of the tools, installing the missing ones with apt-get (as root). */
export function ensureTools() {
  return ensureSystemPackages({ requirements: REQUIREMENTS });
}

/**
 * Runs a program; on failure the error names the command and shows the end of its output (or
 * of `appendTo`, the log it writes to).
 */
export async function tool(cmd, args, opts = {}) {
  try {
    return await run(cmd, args, { timeoutMs: 30 * 60000, ...opts });
  } catch (error) {
    if (opts.appendTo) {
      const tail = tailFile(opts.appendTo, 40);
      error.message = `${cmd} ${args.slice(0, 3).join(' ')} ... failed (log: ${opts.appendTo}):\n${tail}`;
    }
    throw error;
  }
}
