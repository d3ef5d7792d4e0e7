// One fault under load, start to verdict, and (from table.mjs) the table of a run: shared by
// `npm run chaos` (tools/chaos/src/main.mjs) and the bounded version in `npm test`
// (tests/resilience/test/chaos.test.ts).
import pg from 'pg';
import { status } from '@herald/stack/index.mjs';
import { newTenant } from './api.mjs';
import { createDriver } from './driver.mjs';
import {
  bringBack,
  faultNames,
  faults,
  restart,
  restoreStack,
  testedFaultNames,
} from './faults.mjs';
import { suiteRelayNames } from './relays.mjs';
import { alertsResolved, holdWatchingAlerts, quietAlerts } from './alerts.mjs';
import {
  PUBLISH_DEADLINE_MS,
  allPublished,
  eventsDatabaseUrl,
  judge,
  kafkaClient,
  openReader,
  storedEvents,
  topicEnd,
} from './oracle.mjs';

export { faultNames, restoreStack, testedFaultNames };
export { formatTable, writeResults } from './table.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * How long each part of a fault lasts. `short`: one fault cycle in about 15 to 25 s of load
 * (what `npm test` runs). `minutes(n)`: n minutes of load per fault, the fault injected again
 * every `steadyMs` while time is left.
 */
export const profiles = {
  short: { name: 'short', leadInMs: 3_000, tailMs: 4_000, loadMs: 0, steadyMs: 0 },
  /** @param {number} n */
  minutes: (n) => ({
    name: `${n} min`,
    leadInMs: 10_000,
    tailMs: 10_000,
    loadMs: n * 60_000,
    steadyMs: 20_000,
  }),
};

/** Polls a probe Event until it is answered 202: the stack records again. */
async function waitRecording(driver, withinMs = 120_000) {
  const deadline = Date.now() + withinMs;
  while (!(await driver.probe())) {
    if (Date.now() > deadline) throw new Error(`no Event answered 202 within ${withinMs / 1000} s`);
    await sleep(250);
  }
}

/**
 * Components other than the one hit that stopped answering because of the fault (a crash),
 * after giving them `graceMs` to reconnect: ['events-relay stopped', ...], the suite's second
 * relay included. The stack is then brought back whole, so the fault's oracle and the next
 * faults run on a complete stack.
 */
async function collateralDamage(graceMs = 20_000) {
  const deadline = Date.now() + graceMs;
  const relays = suiteRelayNames();
  for (;;) {
    const rows = await status();
    const bad = [
      ...rows
        .filter((r) => (r.expected || relays.includes(r.component)) && !r.ok)
        .map((r) => `${r.component} ${r.state}`),
      ...relays.filter((n) => !rows.some((r) => r.component === n)).map((n) => `${n} stopped`),
    ];
    if (bad.length === 0) return [];
    if (Date.now() > deadline) {
      await restart();
      return bad;
    }
    await sleep(1_000);
  }
}

/**
 * @typedef {import('./faults.mjs').Fault} Fault
 * @typedef {ReturnType<typeof createDriver>} Driver
 * @typedef {ReturnType<typeof judge>} Verdict
 * @typedef {(typeof profiles)['short']} Profile
 * @typedef {{injectedAt: number, recoveredAt: number, recoveryMs: number}} FaultWindow
 *
 * @typedef {object} RowBase
 * @property {string} fault
 * @property {string} title
 * @property {string} profile
 * @property {string[]} notes
 * @property {FaultWindow[]} windows  one per injection
 * @property {string[]} collateral    other components that went down with the fault
 * @property {string} [error]         why the fault could not be carried out
 * @property {number | null} [recoveryMs]
 * @property {number} [seconds]
 * @property {boolean} [ok]
 * @property {import('./alerts.mjs').AlertCheck[]} [alerts]  the alerts it must raise, as seen
 *
 * One line of the table, with the verdict and its details.
 * @typedef {RowBase & Partial<ReturnType<typeof summarize>>} Row
 */

/**
 * Notes and records the components other than the one hit that went down with it.
 * @param {Row} row
 * @param {(text: string) => void} say
 */
async function checkCollateral(row, say) {
  const damage = await collateralDamage();
  for (const d of damage) {
    const note = `after recovery, ${d}: started again for the rest of the run`;
    say(note);
    row.notes.push(note);
  }
  row.collateral.push(...damage);
}

/**
 * The fault under the running load, once, or again after every `steadyMs` while `loadEnd` (ms
 * since the epoch) leaves time for another cycle: inject, hold, recover, wait until Events are
 * recorded again. Each injection is noted in `row`.
 * @param {{fault: Fault, profile: Profile, driver: Driver, ctx: import('./faults.mjs').FaultContext,
 *   row: Row, say: (text: string) => void}} run
 * @param {number} loadEnd
 */
async function injectCycles({ fault, profile, driver, ctx, row, say }, loadEnd) {
  for (;;) {
    driver.mark('fault');
    const injectedAt = Date.now();
    const note = await fault.inject(ctx);
    say(note);
    row.notes.push(note);
    await holdWatchingAlerts(fault.holdMs, row.alerts, injectedAt, say);
    driver.mark('recovery');
    const recoveryStartedAt = Date.now();
    await (fault.recover ? fault.recover() : bringBack(fault.component));
    await waitRecording(driver);
    const recoveredAt = Date.now();
    row.windows.push({ injectedAt, recoveredAt, recoveryMs: recoveredAt - recoveryStartedAt });
    say(`recovered in ${((recoveredAt - recoveryStartedAt) / 1000).toFixed(1)} s`);
    driver.mark('after');
    const cycleMs = Date.now() - injectedAt + profile.tailMs + profile.steadyMs;
    if (Date.now() + cycleMs > loadEnd) break;
    await sleep(profile.steadyMs);
    await checkCollateral(row, say);
  }
}

/**
 * The oracle's verdict once the load has stopped: what PostgreSQL holds of the Tenant and what
 * reached Kafka, against the driver's ledger.
 * @param {Driver} driver
 * @param {Awaited<ReturnType<typeof openReader>>} reader
 * @param {string} tenantId
 * @param {Row} row
 */
async function readVerdict(driver, reader, tenantId, row) {
  let lastAck = 0;
  for (const ackAt of driver.ledger.acked.values()) lastAck = Math.max(lastAck, ackAt);
  // Every stored Event must reach Kafka: wait for all of them, at most until the publishing
  // deadline after recovery (or after the last 202).
  const lastRecovery = Math.max(...row.windows.map((w) => w.recoveredAt));
  const deadline = Math.max(lastRecovery, lastAck) + PUBLISH_DEADLINE_MS;
  /** @param {Awaited<ReturnType<typeof storedEvents>>} s */
  const ids = (s) => new Set([...s.byKey.values()].flat().map((r) => r.id));
  const first = await storedEvents(tenantId);
  await reader.waitFor({ enough: allPublished(ids(first)), deadline });
  // A request the load gave up on may still have been recorded meanwhile: read again, and
  // wait for Kafka again if PostgreSQL holds more than what was waited for.
  const stored = await storedEvents(tenantId);
  if (stored.rows > first.rows) {
    row.notes.push(`${stored.rows - first.rows} Event(s) stored after the load stopped`);
    await reader.waitFor({
      enough: allPublished(ids(stored)),
      deadline: Math.max(deadline, Date.now() + PUBLISH_DEADLINE_MS),
    });
  }
  const messages = reader.messages;
  return judge({ ledger: driver.ledger, stored, messages, windows: row.windows });
}

/**
 * Runs one fault: a fresh Tenant, the load, the fault (once, or in cycles for a long profile),
 * recovery, then the oracle. Resolves the row of the table (with the verdict and its details);
 * a fault that could not be carried out resolves a row with `error`.
 * @param {string} name one of faultNames
 * @param {{profile?: Profile, lanes?: number, ratePerSecond?: number,
 *   log?: (line: string) => void, checkAlerts?: boolean}} [options]  `checkAlerts`: false skips
 *   the check of the fault's alerts in Prometheus (quiet before, raised, resolved after)
 * @returns {Promise<Row>}
 */
export async function runFault(name, options = {}) {
  const fault = faults.find((f) => f.name === name);
  if (!fault) throw new Error(`unknown fault ${name}; one of: ${faultNames.join(', ')}`);
  const { profile = profiles.short, lanes = 4, ratePerSecond = 8 } = options;
  const { log = () => {}, checkAlerts = true } = options;
  /** @param {string} text */
  const say = (text) => log(`[${name}] ${text}`);
  /** @type {Row} */
  const row = {
    fault: name,
    title: fault.title,
    profile: profile.name,
    notes: [],
    windows: [],
    collateral: [],
  };
  const startedAt = Date.now();
  let driver;
  let opening;
  let reader;
  const db = new pg.Pool({
    connectionString: eventsDatabaseUrl(),
    application_name: 'herald-chaos',
    max: 2,
  });
  db.on('error', () => {}); // PostgreSQL restarts under it
  try {
    // Whatever a previous fault left down, and services older than their build, start afresh.
    await restart();
    await fault.prepare?.();
    // What the SRE sees; minutes of waiting for alerts to clear, which `npm test` leaves out.
    if (fault.alerts && checkAlerts) row.alerts = await quietAlerts(fault.alerts, say);
    const tenant = await newTenant(`Chaos: ${name}`);
    const kafka = kafkaClient();
    const start = await topicEnd(kafka);
    driver = createDriver({ tenant, lanes, ratePerSecond });
    await driver.seed();
    driver.mark('lead-in');
    driver.start();
    say(`load started (Tenant ${tenant.tenantId})`);
    await sleep(profile.leadInMs);
    const ctx = { driver, tenant, db };
    await injectCycles({ fault, profile, driver, ctx, row, say }, startedAt + profile.loadMs);
    // The oracle's Kafka reader joins its group while the load goes on.
    opening = openReader(kafka, tenant.tenantId, start);
    opening.catch(() => {});
    await sleep(profile.tailMs);
    await checkCollateral(row, say);
    driver.mark('drain');
    await driver.stop();
    reader = await opening;
    say('load stopped; reading PostgreSQL and Kafka');
    const loadStoppedAt = Date.now();
    const verdict = await readVerdict(driver, reader, tenant.tenantId, row);
    Object.assign(row, summarize(driver, verdict, fault));
    if (row.alerts) await alertsResolved(row.alerts, loadStoppedAt, say);
  } catch (err) {
    row.error = err instanceof Error ? err.message : String(err);
    say(`failed: ${row.error}`);
    if (driver) {
      await driver.stop();
      Object.assign(row, summarize(driver, null, fault));
    }
  } finally {
    await (reader ?? (await opening?.catch(() => null)))?.close();
    await db.end().catch(() => {});
    try {
      await fault.cleanup?.();
    } catch (err) {
      row.error ??= `cleanup: ${err.message}`;
    }
  }
  row.recoveryMs = row.windows.length ? Math.max(...row.windows.map((w) => w.recoveryMs)) : null;
  row.seconds = Math.round((Date.now() - startedAt) / 1000);
  row.ok = isGood(row);
  say(`${row.ok ? 'ok' : 'FAILED'} in ${row.seconds} s`);
  return row;
}

/**
 * What the load saw, with the oracle's verdict (null when the fault could not be carried out).
 * @param {Driver} driver
 * @param {Verdict | null} verdict
 * @param {Fault} fault
 */
function summarize(driver, verdict, fault) {
  const { totals, windows, anomalies } = driver;
  const during = ['fault', 'recovery'].map((w) => windows.get(w)).filter(Boolean);
  const after = windows.get('after');
  const failOpen = {
    servedWithoutBudgetDuringFault: during.reduce((n, w) => n + w.servedWithoutBudget, 0),
    servedWithBudgetAfterRecovery: after?.servedWithBudget ?? 0,
    servedWithoutBudgetAfterRecovery: after?.servedWithoutBudget ?? 0,
  };
  return {
    requests: totals.requests,
    answered202: totals.answers[202] ?? 0,
    eventsAcked: driver.ledger.acked.size,
    clientErrors: totals.errors,
    errorsDuringFault: Object.fromEntries(
      during
        .flatMap((w) => Object.entries(w.errors))
        .reduce((m, [k, v]) => {
          m.set(k, (m.get(k) ?? 0) + v);
          return m;
        }, new Map()),
    ),
    errorsByKind: totals.errorsByKind,
    refusedAsMeant: totals.refusedAsMeant,
    operations: totals.operations,
    eventsSent: totals.eventsSent,
    failOpen: fault.expectFailOpen ? failOpen : undefined,
    // What a customer must never see while a connection is slow, cut or reset: a 500, or no
    // answer within the load's attempt timeout (the answer deadline answers 503 before it).
    customerFailures: fault.network
      ? (totals.errors[500] ?? 0) + (totals.errors.timeout ?? 0)
      : undefined,
    anomalies,
    verdict,
  };
}

/**
 * No lost, no doubled, nothing of a refused request anywhere, every duplicate droppable.
 * @param {Row} row
 */
export function isGood(row) {
  const v = row.verdict;
  return (
    !row.error &&
    row.collateral.length === 0 &&
    !row.customerFailures &&
    (row.alerts ?? []).every(
      (a) => a.quietBefore && a.state !== null && a.resolvedAfterS !== null,
    ) &&
    Boolean(v) &&
    v.lost === 0 &&
    v.doubled === 0 &&
    v.rejectedPresent === 0 &&
    v.duplicatesWithOtherId === 0 &&
    v.badMessageIds === 0 &&
    v.publishedNotStored === 0 &&
    v.storedNotPublished === 0
  );
}
