// The trace receiver (tools/stack/src/trace-receiver.mjs) as a component of the local stack: a Node
// process on 127.0.0.1:14318 (HERALD_TRACES_PORT) that the services export their spans to, one
// JSON line per span in .herald/traces/spans.jsonl; and the reading of that file for
// `npm run stack -- traces`. Node built-ins only.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { host, logDir, portEnvVars, ports, runDir, tracesDir, tracesUrl } from './config.mjs';
import { StackError, say } from './output.mjs';
import { ensureDir, mtimeMs, readText } from './files.mjs';
import { cmdline, livePid, startDetached, stopProcess, waitFor } from './processes.mjs';
import { assertPortFree, httpRequest } from './net.mjs';

const component = 'traces';
const receiverScript = fileURLToPath(new URL('./trace-receiver.mjs', import.meta.url));
/** The receiver's code: a file of it newer than the running process restarts it. */
const receiverCode = [receiverScript, fileURLToPath(new URL('./otlp-decode.mjs', import.meta.url))];

export const tracesPaths = {
  dir: tracesDir,
  /** Every span received, one JSON object a line; `<file>.1` holds the previous 64 MiB. */
  spansFile: path.join(tracesDir, 'spans.jsonl'),
  pidFile: path.join(runDir, 'traces.pid'),
  /** When the running receiver started: newer receiver code restarts it. */
  stateFile: path.join(runDir, 'traces.json'),
  logFile: path.join(logDir, 'traces.log'),
};

function receiverArgs() {
  return [
    receiverScript,
    '--host',
    host,
    '--port',
    String(ports.traces),
    '--out',
    tracesPaths.spansFile,
  ];
}

export function traceReceiverPid() {
  return livePid(tracesPaths.pidFile, receiverScript);
}

export async function traceReceiverAnswers(timeoutMs = 2000) {
  try {
    return (await httpRequest(`${tracesUrl}/healthz`, { timeoutMs })).status === 200;
  } catch {
    return false;
  }
}

async function startReceiver() {
  await assertPortFree(component, ports.traces, portEnvVars.traces);
  say(`traces: starting the trace receiver on ${tracesUrl}`);
  await startDetached({
    component,
    label: 'the trace receiver',
    cmd: process.execPath,
    args: receiverArgs(),
    logFile: tracesPaths.logFile,
    pidFile: tracesPaths.pidFile,
    banner: 'starting the trace receiver',
    onSpawn: (child) =>
      fs.writeFileSync(
        tracesPaths.stateFile,
        `${JSON.stringify({ pid: child.pid, startedAt: Date.now() })}\n`,
      ),
    ready: () => traceReceiverAnswers(1000),
    timeoutMs: 15000,
    intervalMs: 100,
    timeoutMessage: `the trace receiver did not answer ${tracesUrl}/healthz within 15 s`,
  });
}

function startedAt() {
  try {
    return JSON.parse(readText(tracesPaths.stateFile) ?? 'null')?.startedAt ?? 0;
  } catch {
    return 0;
  }
}

/** Why the running receiver must restart: its port, file or code changed; else null. */
function restartReason(pid) {
  if (cmdline(pid) !== [process.execPath, ...receiverArgs()].join(' ')) {
    return 'its settings changed';
  }
  const newer = receiverCode.find((file) => mtimeMs(file) > startedAt());
  return newer ? `${path.basename(newer)} is newer than the process` : null;
}

/** Starts the receiver unless it runs; restarts it when its port, file or code changed. */
export async function ensureTraceReceiver() {
  ensureDir(tracesPaths.dir);
  ensureDir(runDir);
  ensureDir(logDir);
  const pid = traceReceiverPid();
  const reason = pid ? restartReason(pid) : null;
  if (reason) {
    say(`traces: ${reason}, restarting`);
    await stopTraceReceiver();
    await startReceiver();
    return 'restarted';
  }
  if (!pid) {
    await startReceiver();
    return 'started';
  }
  try {
    await waitFor(() => traceReceiverAnswers(), { timeoutMs: 10000, what: `${tracesUrl}/healthz` });
  } catch (err) {
    throw new StackError(component, err.message, { logFile: tracesPaths.logFile });
  }
  return 'running';
}

export async function stopTraceReceiver() {
  const pid = traceReceiverPid();
  if (pid) {
    say('traces: stopping');
    await stopProcess(pid, { signal: 'SIGTERM', timeoutMs: 5000, group: true });
  }
  fs.rmSync(tracesPaths.pidFile, { force: true });
  fs.rmSync(tracesPaths.stateFile, { force: true });
}

export async function traceReceiverStatus() {
  const pid = traceReceiverPid();
  const ok = pid ? await traceReceiverAnswers() : false;
  return {
    component,
    state: ok ? 'running' : pid ? 'not answering' : 'stopped',
    pid,
    address: `${tracesUrl}/v1/traces`,
    logFile: tracesPaths.logFile,
    ok,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading: the spans by trace, and a trace as a tree

/** Every span recorded (the rotated file first), skipping lines that are not whole yet. */
export function readSpans(file = tracesPaths.spansFile) {
  const spans = [];
  for (const f of [`${file}.1`, file]) {
    let content;
    try {
      content = fs.readFileSync(f, 'utf8');
    } catch (err) {
      if (err.code === 'ENOENT') continue;
      throw err;
    }
    for (const line of content.split('\n')) {
      if (line === '') continue;
      try {
        spans.push(JSON.parse(line));
      } catch {
        // a line still being written
      }
    }
  }
  return spans;
}

/** traceId → its spans. */
export function byTrace(spans) {
  const traces = new Map();
  for (const span of spans) {
    const list = traces.get(span.traceId) ?? [];
    list.push(span);
    traces.set(span.traceId, list);
  }
  return traces;
}

const startOf = (spans) =>
  spans.reduce((min, s) => {
    const t = BigInt(s.startTimeUnixNano);
    return min === null || t < min ? t : min;
  }, null);
const endOf = (spans) =>
  spans.reduce((max, s) => {
    const t = BigInt(s.endTimeUnixNano);
    return max === null || t > max ? t : max;
  }, null);

/**
 * The traces with a span linking to a span of `traceId`: a batch carrying the work of several
 * traces (an outbox relay's publish, the events service's batch transaction) is a trace of its
 * own, linked to each; one carrying a single trace's is a child in that trace instead.
 */
function linkedFrom(traces, traceId) {
  const out = [];
  for (const [id, spans] of traces) {
    if (id === traceId) continue;
    if (spans.some((s) => (s.links ?? []).some((l) => l.traceId === traceId))) out.push(id);
  }
  return out.sort((a, b) => Number(startOf(traces.get(a)) - startOf(traces.get(b))));
}

/**
 * The trace `id` names: the whole id, or a prefix of at least 4 hex digits that only one trace
 * has. Without an id, the newest trace that does not merely continue another one through a link.
 */
export function pickTrace(traces, id) {
  if (id) {
    const wanted = id.toLowerCase();
    if (traces.has(wanted)) return wanted;
    if (!/^[0-9a-f]{4,32}$/.test(wanted)) {
      throw new StackError(
        component,
        `${id} is not a trace id (32 hex digits, or 4 or more of them)`,
      );
    }
    const matches = [...traces.keys()].filter((t) => t.startsWith(wanted));
    if (matches.length === 1) return matches[0];
    if (matches.length > 1) {
      throw new StackError(
        component,
        `${id} is the start of ${matches.length} trace ids; give more of it`,
      );
    }
    return null;
  }
  const recorded = new Set(traces.keys());
  let newest = null;
  let newestStart = null;
  for (const [traceId, spans] of traces) {
    const continues = spans.some((s) =>
      (s.links ?? []).some((l) => l.traceId !== traceId && recorded.has(l.traceId)),
    );
    if (continues) continue;
    const start = startOf(spans);
    if (newestStart === null || start > newestStart) {
      newest = traceId;
      newestStart = start;
    }
  }
  return newest;
}

export function formatDuration(ms) {
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${ms.toFixed(1)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

function spanLine(span, byId) {
  const kind = span.kind && span.kind !== 'INTERNAL' ? `, ${span.kind.toLowerCase()}` : '';
  let line = `${span.name}  [${span.service ?? '?'}${kind}]  ${formatDuration(span.durationMs)}`;
  if (span.status?.code === 'ERROR')
    line += `  ERROR${span.status.message ? ` ${span.status.message}` : ''}`;
  if (span.parentSpanId && !byId.has(span.parentSpanId)) {
    line += `  (parent ${span.parentSpanId} not recorded)`;
  }
  for (const link of span.links ?? []) {
    if (link.traceId !== span.traceId) {
      line += `  ⇢ link ${link.traceId}/${link.spanId}`;
    } else if (link.spanId !== span.parentSpanId) {
      // A batch's link to another span of its own trace, named; the one to its parent goes
      // without saying.
      const name = byId.get(link.spanId)?.name;
      line += `  ⇢ link ${link.spanId}${name ? ` (${name})` : ''}`;
    }
  }
  return line;
}

/** One trace as an indented tree: each span's name, [service, kind], duration; children by start. */
export function traceTree(spans) {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const children = new Map();
  const roots = [];
  for (const span of spans) {
    if (span.parentSpanId && byId.has(span.parentSpanId)) {
      const list = children.get(span.parentSpanId) ?? [];
      list.push(span);
      children.set(span.parentSpanId, list);
    } else roots.push(span);
  }
  const byStart = (a, b) => {
    const d = BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano);
    return d < 0n ? -1 : d > 0n ? 1 : 0;
  };
  const lines = [];
  const walk = (span, prefix, childPrefix) => {
    lines.push(`${prefix}${spanLine(span, byId)}`);
    const kids = (children.get(span.spanId) ?? []).sort(byStart);
    kids.forEach((kid, i) => {
      const last = i === kids.length - 1;
      walk(kid, `${childPrefix}${last ? '└─ ' : '├─ '}`, `${childPrefix}${last ? '   ' : '│  '}`);
    });
  };
  for (const root of roots.sort(byStart)) walk(root, '', '');
  return lines.join('\n');
}

function traceHeading(traceId, spans) {
  const start = startOf(spans);
  const ms = Number(endOf(spans) - start) / 1e6;
  const services = [...new Set(spans.map((s) => s.service))].join(', ');
  const at = new Date(Number(start / 1000000n)).toISOString();
  return `trace ${traceId}  ${at}  ${spans.length} span${spans.length === 1 ? '' : 's'}  ${formatDuration(ms)}  (${services})`;
}

/** A trace's tree, then those of the traces linked to it (batches shared with other traces). */
export function formatTrace(traces, traceId) {
  const parts = [
    `${traceHeading(traceId, traces.get(traceId))}\n${traceTree(traces.get(traceId))}`,
  ];
  const seen = new Set([traceId]);
  const queue = linkedFrom(traces, traceId).map((id) => [id, traceId]);
  while (queue.length > 0) {
    const [id, from] = queue.shift();
    if (seen.has(id)) continue;
    seen.add(id);
    parts.push(
      `linked to ${from}:\n${traceHeading(id, traces.get(id))}\n${traceTree(traces.get(id))}`,
    );
    for (const next of linkedFrom(traces, id)) queue.push([next, id]);
  }
  return parts.join('\n\n');
}

/** The newest `count` traces, one line each. */
export function formatTraceList(traces, count) {
  const rows = [...traces]
    .map(([id, spans]) => ({ id, spans, start: startOf(spans) }))
    .sort((a, b) => (a.start < b.start ? 1 : a.start > b.start ? -1 : 0))
    .slice(0, count)
    .reverse();
  return rows
    .map(({ id, spans, start }) => {
      const root =
        spans.find((s) => !s.parentSpanId || !spans.some((p) => p.spanId === s.parentSpanId)) ??
        spans[0];
      const at = new Date(Number(start / 1000000n)).toISOString();
      const ms = Number(endOf(spans) - start) / 1e6;
      return `${at}  ${id}  ${String(spans.length).padStart(4)} spans  ${formatDuration(ms).padStart(9)}  ${root.name} [${root.service}]`;
    })
    .join('\n');
}
