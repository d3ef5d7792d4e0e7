// JSON Schemas in words, for the API reference: a schema's type (`string (uuid)`, `array of
// string`) and its limits and formats (`1..200 characters`, `RFC 3339`).
import { join } from './markdown.mjs';

/** JSON Schema bounds that only say "a JavaScript safe integer": not worth a reader's time. */
const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** `string (uuid)`, `string or null`, `array of string`, `object`. */
export function typeOf(schema) {
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) {
    const types = variants.map((v) => typeOf(v));
    return [...new Set(types)].join(' or ');
  }
  if (Array.isArray(schema.type)) return schema.type.join(' or ');
  if (schema.type === 'array') return `array of ${typeOf(schema.items ?? {})}`;
  if (schema.type === 'string' && schema.format) return `string (${schema.format})`;
  if (schema.type === 'number' && Number.isInteger(schema.const)) return 'integer';
  return schema.type ?? 'any';
}

/** Limits and formats in words; a uuid's or date-time's own pattern is left to its format. */
export function rulesOf(schema) {
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) {
    return join(
      variants.filter((v) => v.type !== 'null').map((v) => rulesOf(v)),
      '; ',
    );
  }
  const rules = [];
  if (schema.const !== undefined) rules.push(`always \`${JSON.stringify(schema.const)}\``);
  if (schema.enum) rules.push(`one of ${schema.enum.map((v) => `\`${v}\``).join(', ')}`);
  if (schema.type === 'array') {
    if (schema.minItems !== undefined || schema.maxItems !== undefined) {
      rules.push(countOf(schema, 'items'));
    }
    const items = rulesOf(schema.items ?? {});
    if (items) rules.push(`each ${items}`);
  }
  if (schema.minLength !== undefined || schema.maxLength !== undefined) {
    rules.push(range(schema.minLength, schema.maxLength, 'characters'));
  }
  if (schema.pattern && !schema.format) rules.push(`matches \`${schema.pattern}\``);
  const min = schema.minimum;
  const max = schema.maximum;
  if ((min !== undefined && min > -SAFE_INTEGER) || (max !== undefined && max < SAFE_INTEGER)) {
    rules.push(range(min, max, ''));
  }
  if (schema.format === 'date-time') rules.push('RFC 3339');
  return join(rules, ', ');
}

export function countOf(schema, noun) {
  return range(schema.minItems, schema.maxItems, noun);
}

function range(min, max, noun) {
  const unit = noun ? ` ${noun}` : '';
  if (min !== undefined && max !== undefined) return `${min}..${max}${unit}`;
  if (min !== undefined) return `${min} or more${unit}`;
  return `at most ${max}${unit}`;
}
