// The FROM lines of the services' Dockerfiles: which external images they start from, whether
// each is pinned by digest (the check in dockerfile.test.mjs), and how `npm run images` builds
// them on the stand-in base in local storage (base.mjs) instead of the pinned upstream.

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * An image reference as Docker reads it: `[registry/]path[:tag][@digest]`. `name` is the full
 * repository name (`docker.io/library/node` for `node`), `tag` defaults to `latest`.
 */
export function parseReference(image) {
  const at = image.indexOf('@');
  const digest = at >= 0 ? image.slice(at + 1) : null;
  const rest = at >= 0 ? image.slice(0, at) : image;
  const colon = rest.lastIndexOf(':');
  const hasTag = colon > rest.lastIndexOf('/');
  const path = hasTag ? rest.slice(0, colon) : rest;
  const tag = hasTag ? rest.slice(colon + 1) : null;
  const [first, ...others] = path.split('/');
  const isRegistry = others.length > 0 && (/[.:]/.test(first) || first === 'localhost');
  const registry = isRegistry ? first : 'docker.io';
  let repository = isRegistry ? others.join('/') : path;
  if (registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  const name = `${registry}/${repository}`;
  return {
    name,
    tag: tag ?? (digest ? null : 'latest'),
    digest,
    pinned: DIGEST.test(digest ?? ''),
  };
}

/**
 * The instructions, in order: {line (its first physical line), text (continuations joined,
 * comment lines dropped), keyword (upper case)}.
 */
export function instructions(text) {
  const out = [];
  /** @type {{ line: number, text: string } | null} */
  let current = null;
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (/^\s*#/.test(line)) return;
    const continued = /\\\s*$/.test(line);
    const body = continued ? line.replace(/\\\s*$/, '') : line;
    if (current) current.text += ` ${body.trim()}`;
    else current = { line: index + 1, text: body.trim() };
    if (!continued) {
      if (current.text) out.push(current);
      current = null;
    }
  });
  if (current?.text) out.push(current);
  return out.map((i) => ({ ...i, keyword: i.text.split(/\s/, 1)[0].toUpperCase() }));
}

/** `${NAME}` and `$NAME` from the ARGs declared before the first FROM, where they have values. */
function expand(value, args) {
  return value.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a, b) => args[a ?? b] ?? whole);
}

/**
 * Every FROM, in order: {line, written (its image as written), image (ARGs expanded), alias,
 * stage: true when it names an earlier stage, scratch, reference: parseReference(image) for an
 * external image, unresolved: a variable is left in it}.
 */
export function fromInstructions(text) {
  const args = {};
  const stages = new Set();
  const froms = [];
  for (const { line, text: instruction, keyword } of instructions(text)) {
    const words = instruction.split(/\s+/).slice(1);
    if (keyword === 'ARG' && froms.length === 0) {
      for (const word of words) {
        const [name, ...value] = word.split('=');
        if (value.length) args[name] = value.join('=').replace(/^(["'])(.*)\1$/, '$2');
      }
    }
    if (keyword !== 'FROM') continue;
    const operands = words.filter((w) => !w.startsWith('--'));
    const written = operands[0] ?? '';
    const image = expand(written, args);
    const alias = operands[1]?.toUpperCase() === 'AS' ? operands[2]?.toLowerCase() : undefined;
    const stage = stages.has(image.toLowerCase());
    const scratch = image.toLowerCase() === 'scratch';
    froms.push({
      line,
      written,
      image,
      alias,
      stage,
      scratch,
      reference: stage || scratch || image.includes('$') ? null : parseReference(image),
      unresolved: image.includes('$'),
    });
    if (alias) stages.add(alias);
  }
  return froms;
}

/** What is wrong with the FROMs of one Dockerfile: external images without a digest. */
export function unpinnedFroms(text) {
  return fromInstructions(text)
    .filter((f) => f.unresolved || (f.reference && !f.reference.pinned))
    .map((f) =>
      f.unresolved
        ? `line ${f.line}: FROM ${f.written} (a variable that has no default before the first FROM)`
        : `line ${f.line}: FROM ${f.image} (no @sha256: digest)`,
    );
}

/**
 * buildah's `--build-context` arguments that build the Dockerfile on the stand-in base: each FROM
 * of the upstream base (`base`, e.g. docker.io/library/node:24.21.0-bookworm-slim, with the
 * digest it is pinned to) is served by `standIn` from local storage. No registry here serves the
 * upstream, and the stand-in, built locally, cannot have the upstream's digest, so a pinned FROM
 * would otherwise find no image. Any other external image stops the build here, clearly.
 */
export function standInContexts(text, { base, standIn }) {
  const want = parseReference(base);
  const images = new Set();
  for (const from of fromInstructions(text)) {
    if (from.unresolved) throw new Error(`line ${from.line}: FROM ${from.written}: unresolved`);
    if (!from.reference) continue;
    const { name, tag } = from.reference;
    if (name !== want.name || tag !== want.tag) {
      throw new Error(
        `line ${from.line}: FROM ${from.image}: only ${base} has a stand-in here (tools/k8s-lab/src/images/base.mjs)`,
      );
    }
    images.add(from.image);
  }
  return [...images].flatMap((image) => ['--build-context', `${image}=docker-image://${standIn}`]);
}
