import type { OutputOptions } from './args.js';
import type { ApiAnswer } from './client.js';
import { CliError } from './settings.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function json(value: unknown, compact: boolean): string {
  return compact ? JSON.stringify(value) : JSON.stringify(value, null, 2);
}

/**
 * What a successful answer prints on stdout: pretty JSON, compact with --json, or one field
 * raw with --get. An empty answer (204) prints nothing.
 */
export function formatSuccess(answer: ApiAnswer, output: OutputOptions): string {
  if (output.raw) return answer.text;
  if (output.get !== undefined) return `${raw(field(answer.body, output.get), output.json)}\n`;
  if (answer.body === undefined) return '';
  if (typeof answer.body === 'string') return `${answer.body}\n`;
  return `${json(answer.body, output.json)}\n`;
}

/** Strings as they are (no quotes); numbers, booleans and null as JSON; objects as JSON. */
function raw(value: unknown, compact: boolean): string {
  return typeof value === 'string' ? value : json(value, compact);
}

/** `id`, or a dotted path such as `eventNames.0.name`. */
function field(body: unknown, dottedPath: string): unknown {
  if (body === undefined) {
    throw new CliError(`the answer is empty, so it has no field "${dottedPath}"`);
  }
  let value: unknown = body;
  for (const key of dottedPath.split('.')) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) {
      const fields = isRecord(body) ? ` (its fields: ${Object.keys(body).join(', ')})` : '';
      throw new CliError(`the answer has no field "${dottedPath}"${fields}`);
    }
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** `error: <code>: <message> (HTTP <status>)`, also for problem+json and non-JSON answers. */
export function formatFailure(answer: ApiAnswer): string {
  const body = isRecord(answer.body) ? answer.body : {};
  const text = (key: string) => (typeof body[key] === 'string' ? body[key] : undefined);
  const fallback =
    typeof answer.body === 'string' && answer.body.trim() !== ''
      ? answer.body.trim().split('\n')[0]
      : answer.statusText || 'no message';
  const code = text('code') ?? text('type') ?? `http_${answer.status}`;
  const message = text('message') ?? text('detail') ?? text('title') ?? fallback;
  return `error: ${code}: ${message} (HTTP ${answer.status})\n`;
}
