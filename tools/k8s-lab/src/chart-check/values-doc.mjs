// The table of every value in charts/herald/README.md, made from values.schema.json (types and
// descriptions) and values.yaml (defaults). The schema refuses unknown keys, so a value that is
// in values.yaml is in the schema; this refuses a schema entry without a description, so every
// value that can be set is documented.

const START = '<!-- values:start -->';
const END = '<!-- values:end -->';

function resolve(schema, node) {
  if (!node?.$ref) return node;
  return schema.definitions[node.$ref.replace('#/definitions/', '')];
}

function typeOf(node) {
  if (node.type) return [node.type].flat().join(' \\| ');
  if (node.oneOf) return node.oneOf.map(typeOf).join(' \\| ');
  return 'any';
}

function cell(text) {
  return String(text).replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function walk(schema, node, key, defaults, rows, problems) {
  const own = resolve(schema, node);
  const describedBy = node.description ?? own.description;
  // A per-process block under `services` takes any key of `defaults`: one row, not a copy of all.
  if (node.$ref && key.startsWith('services.')) {
    rows.push({
      key,
      type: 'object',
      default: defaults,
      description: `Overrides of any \`defaults.*\` key for the ${key.slice('services.'.length)} process.`,
    });
    return;
  }
  if (own.type === 'object' && own.properties) {
    // a group's own row carries what its keys share (e.g. the Secret's keys)
    if (key) rows.push({ key, type: 'object', default: undefined, description: describedBy ?? '' });
    if (key && !describedBy) problems.push(`${key} has no description in values.schema.json`);
    for (const [name, child] of Object.entries(own.properties)) {
      walk(schema, child, key ? `${key}.${name}` : name, defaults?.[name], rows, problems);
    }
    return;
  }
  if (!describedBy) problems.push(`${key} has no description in values.schema.json`);
  rows.push({ key, type: typeOf(own), default: defaults, description: describedBy ?? '' });
}

/** The generated table (Markdown), or throws listing undocumented values. */
export function valuesTable(schema, defaults) {
  const rows = [];
  const problems = [];
  walk(schema, schema, '', defaults, rows, problems);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  const lines = ['| Key | Type | Default | Description |', '| --- | --- | --- | --- |'];
  for (const row of rows) {
    const shown = row.default === undefined ? '' : `\`${cell(JSON.stringify(row.default))}\``;
    lines.push(`| \`${row.key}\` | ${row.type} | ${shown} | ${cell(row.description)} |`);
  }
  return lines.join('\n');
}

/** `readme` with the table between its markers replaced; throws when the markers are missing. */
export function withValuesTable(readme, table) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) {
    throw new Error(`charts/herald/README.md needs the markers ${START} and ${END}`);
  }
  return `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`;
}
