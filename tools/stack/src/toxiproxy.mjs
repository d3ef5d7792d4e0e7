// The fault proxy of the fault suite: Toxiproxy (built from its Go module, go-tools.mjs) on
// 127.0.0.1:27400, with one link for every connection a process of the stack makes: each
// service and relay to PostgreSQL, to Redis and to every other service, and every Kafka client to
// the broker. A fault is a "toxic" on one link (latency, a partition that drops data without
// closing connections, resets, a trickle of bandwidth), so it hits that one connection and
// nothing else.
//
// The links are used only while HERALD_FAULT_PROXY=1 is set in the environment of whoever runs
// `up` (the fault suite sets it): each process's variables then name the link's port in place of
// the real one (`linkedVariables`), and `up` restarts the processes whose variables changed.
// `npm start` never sets it, so the normal stack pays nothing for the proxy.
import path from 'node:path';
import { dataDir, host, kafkaLinkPort, logDir, ports, runDir, stackServices } from './config.mjs';
import { services as registry } from './services.mjs';
import { ensureDir } from './files.mjs';
import { ensureGoTool } from './go-tools.mjs';
import { httpRequest } from './net.mjs';
import { livePid, startDetached, stopProcess } from './processes.mjs';
import { StackError, say } from './output.mjs';

const component = 'toxiproxy';
export const toxiproxyUrl = `http://${host}:${ports.toxiproxy}`;
const paths = {
  pidFile: path.join(runDir, 'toxiproxy.pid'),
  logFile: path.join(logDir, 'toxiproxy.log'),
};

/** Whether the processes the stack starts now reach their dependencies through the links. */
export function faultProxyOn(env = process.env) {
  return env.HERALD_FAULT_PROXY === '1';
}

/** The link every Kafka client shares (to the broker's LINKED listener). */
export const KAFKA_LINK = 'kafka';
/** A link's name: `events-to-postgres`, `events-to-contacts`. */
export const linkName = (caller, upstream) => `${caller}-to-${upstream}`;

// Each caller has a block of ports after the API and the Kafka link, one per upstream: the
// registry's processes in its order, then the relays a tool adds (events-relay-2 … -8).
const PORTS_PER_CALLER = 16;
const CALLABLE = registry.filter((s) => !s.replicaOf && s.name !== 'events-relay');
const UPSTREAMS = ['postgres', 'redis', ...CALLABLE.map((s) => s.name)];
const RELAY_REPLICA = /^events-relay-(\d+)$/;

function callerIndex(caller) {
  const i = registry.findIndex((s) => s.name === caller);
  if (i >= 0) return i;
  const replica = RELAY_REPLICA.exec(caller);
  if (replica) return registry.length + Number(replica[1]) - 2;
  throw new Error(`toxiproxy: no links for ${JSON.stringify(caller)}`);
}

/** The port the link from `caller` to `upstream` listens on. */
export function linkPort(caller, upstream) {
  const u = UPSTREAMS.indexOf(upstream);
  if (u < 0) throw new Error(`toxiproxy: no link to ${JSON.stringify(upstream)}`);
  return kafkaLinkPort + 1 + callerIndex(caller) * PORTS_PER_CALLER + u;
}

/** Where a link leads. */
function upstreamAddress(upstream) {
  if (upstream === 'postgres') return `${host}:${ports.postgres}`;
  if (upstream === 'redis') return `${host}:${ports.redis}`;
  const s = stackServices.find((x) => x.name === upstream);
  return `${host}:${new URL(s.url).port}`;
}

/** Every link of the processes `callers` (default: the stack's, and 8 relays), for /populate. */
export function allLinks(callers = linkCallers()) {
  const links = [
    {
      name: KAFKA_LINK,
      listen: `${host}:${kafkaLinkPort}`,
      upstream: `${host}:${ports.kafkaLinked}`,
    },
  ];
  for (const caller of callers) {
    for (const upstream of UPSTREAMS) {
      if (upstream === caller) continue;
      links.push({
        name: linkName(caller, upstream),
        listen: `${host}:${linkPort(caller, upstream)}`,
        upstream: upstreamAddress(upstream),
      });
    }
  }
  return links.map((l) => ({ ...l, enabled: true }));
}

function linkCallers() {
  const relays = Array.from({ length: 7 }, (_, i) => `events-relay-${i + 2}`);
  return [...registry.map((s) => s.name), ...relays];
}

/** `url` with its port (and host) replaced by the link's. */
function throughLink(url, caller, upstream) {
  const u = new URL(url);
  u.hostname = host;
  u.port = String(linkPort(caller, upstream));
  // URL keeps a trailing slash on an origin; the stack's variables have none.
  return u.href.replace(/\/$/, url.endsWith('/') ? '/' : '');
}

/**
 * The variables linkedVariables rewrites: while the links are on they win over the caller's own
 * (the test runner sets REDIS_URL and KAFKA_BROKERS for its tests, which the processes would
 * otherwise take, straight past the proxy).
 * @param {string} key
 */
export function isLinkedVariable(key) {
  return (
    [
      'DATABASE_URL',
      'REDIS_URL',
      'KAFKA_BROKERS',
      'AUTH_JWKS_URL',
      'CONTACT_DATA_SERVICES',
    ].includes(key) || key.startsWith('SERVICE_URL_')
  );
}

/**
 * A process's stack variables with every connection routed through its links: DATABASE_URL,
 * REDIS_URL, KAFKA_BROKERS, the SERVICE_URL_* of the services it calls, AUTH_JWKS_URL and
 * CONTACT_DATA_SERVICES.
 * @param {string} caller
 * @param {Record<string, string>} vars
 */
export function linkedVariables(caller, vars) {
  const out = { ...vars };
  const byUrl = new Map(CALLABLE.map((s) => [serviceOrigin(s.name), s.name]));
  const viaLink = (url) => {
    const target = byUrl.get(new URL(url).origin);
    return target && target !== caller ? throughLink(url, caller, target) : url;
  };
  if (out.DATABASE_URL) out.DATABASE_URL = throughLink(out.DATABASE_URL, caller, 'postgres');
  if (out.REDIS_URL) out.REDIS_URL = throughLink(out.REDIS_URL, caller, 'redis');
  if (out.KAFKA_BROKERS) out.KAFKA_BROKERS = `${host}:${kafkaLinkPort}`;
  for (const key of Object.keys(out)) {
    if (key.startsWith('SERVICE_URL_') || key === 'AUTH_JWKS_URL') out[key] = viaLink(out[key]);
  }
  if (out.CONTACT_DATA_SERVICES) {
    out.CONTACT_DATA_SERVICES = out.CONTACT_DATA_SERVICES.split(',')
      .filter(Boolean)
      .map(viaLink)
      .join(',');
  }
  return out;
}

function serviceOrigin(name) {
  return new URL(stackServices.find((s) => s.name === name).url).origin;
}

// ---------------------------------------------------------------------------------------------
// The server and its API

export function toxiproxyPid() {
  return livePid(paths.pidFile, 'toxiproxy-server');
}

async function api(method, route, body) {
  const res = await httpRequest(`${toxiproxyUrl}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    timeoutMs: 5000,
  });
  if (res.status >= 300) {
    throw new StackError(component, `${method} ${route} answered ${res.status}: ${res.body}`);
  }
  return res.body ? JSON.parse(res.body) : null;
}

async function answers() {
  try {
    return (await httpRequest(`${toxiproxyUrl}/version`, { timeoutMs: 1000 })).status === 200;
  } catch {
    return false;
  }
}

/** Starts the proxy unless it runs, and creates (or re-enables, without toxics) every link. */
export async function ensureToxiproxy() {
  if (!toxiproxyPid()) {
    ensureDir(runDir);
    ensureDir(logDir);
    ensureDir(dataDir);
    const binary = ensureGoTool('toxiproxy');
    say(`toxiproxy: starting on ${toxiproxyUrl}`);
    await startDetached({
      component,
      label: 'Toxiproxy',
      cmd: binary,
      args: ['-host', host, '-port', String(ports.toxiproxy)],
      logFile: paths.logFile,
      pidFile: paths.pidFile,
      banner: 'starting Toxiproxy',
      ready: answers,
      timeoutMs: 15000,
      timeoutMessage: `Toxiproxy did not answer ${toxiproxyUrl}/version within 15 s`,
    });
  }
  await api('POST', '/reset');
  await api('POST', '/populate', allLinks());
}

export async function stopToxiproxy() {
  const pid = toxiproxyPid();
  return pid ? stopProcess(pid) : 'not running';
}

/**
 * Puts a toxic on a link (Toxiproxy's types: latency, timeout, reset_peer, bandwidth, …), on
 * the data towards the upstream and back unless `stream` names one. Returns its names.
 * @param {string} link
 * @param {{type: string, attributes?: Record<string, number>, stream?: 'upstream'|'downstream', toxicity?: number}} toxic
 */
export async function addToxic(link, { type, attributes = {}, stream, toxicity = 1 }) {
  const streams = stream ? [stream] : ['downstream', 'upstream'];
  const names = [];
  for (const s of streams) {
    const name = `${type}-${s}`;
    await api('POST', `/proxies/${encodeURIComponent(link)}/toxics`, {
      name,
      type,
      stream: s,
      toxicity,
      attributes,
    });
    names.push(name);
  }
  return names;
}

/** Every link without toxics again, and enabled. */
export async function healLinks() {
  await api('POST', '/reset');
}

/** Disables (true: closes its connections and refuses new ones) or enables a link. */
export async function setLinkDown(link, down) {
  await api('POST', `/proxies/${encodeURIComponent(link)}`, { enabled: !down });
}
