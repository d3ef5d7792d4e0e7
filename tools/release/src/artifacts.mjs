// The release's pure parts: its release notes from CHANGELOG.md, the chart's values with the
// release's registry and image digests, and the checksum list. No I/O beyond what is passed in.
import { createHash } from 'node:crypto';
import { parseDocument } from 'yaml';

/**
 * The section of CHANGELOG.md for `version` (its heading to the next version's), or null.
 * @param {string} changelog
 * @param {string} version
 */
export function releaseNotes(changelog, version) {
  const lines = changelog.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`## [${version}]`));
  if (start === -1) return null;
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## ['));
  return `${lines
    .slice(start, end === -1 ? undefined : end)
    .join('\n')
    .trim()}\n`;
}

/** The chart's values key of a process: `events-relay` → `eventsRelay`. @param {string} name */
export const valuesKey = (name) => name.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

/**
 * values.yaml with `image.registry` set to the release's registry and each process's image
 * pinned to its digest (`services.<process>.image.digest`); comments and order are kept.
 * @param {string} valuesYaml
 * @param {string} registry  host[:port][/path]
 * @param {Record<string, string>} digests  process name → sha256:…
 */
export function pinnedValues(valuesYaml, registry, digests) {
  const doc = parseDocument(valuesYaml);
  doc.setIn(['image', 'registry'], registry);
  for (const [name, digest] of Object.entries(digests)) {
    if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`${name}: not a digest: ${digest}`);
    const key = valuesKey(name);
    if (!doc.hasIn(['services', key])) throw new Error(`values.yaml has no services.${key}`);
    doc.setIn(['services', key, 'image', 'digest'], digest);
  }
  return doc.toString({ lineWidth: 0 });
}

/**
 * `sha256sum` lines for the files, by their path relative to the release folder.
 * @param {{ name: string, bytes: Uint8Array }[]} files
 */
export function checksums(files) {
  return files
    .toSorted((a, b) => a.name.localeCompare(b.name))
    .map((f) => `${createHash('sha256').update(f.bytes).digest('hex')}  ${f.name}`)
    .join('\n')
    .concat('\n');
}
