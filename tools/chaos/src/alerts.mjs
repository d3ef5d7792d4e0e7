// What the SRE sees during a fault: Herald's alerts in the local stack's Prometheus, which
// evaluates the chart's rules every 5 s. A fault that names alerts is checked against them: quiet
// before it, pending or firing during it, resolved after it.
import { prometheusUrl } from '@herald/stack/config.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @typedef {{alertname: string} & Record<string, string>} AlertMatcher  labels an alert must have
 * @typedef {{alertname: string, state: 'pending'|'firing', labels: Record<string, string>}} ActiveAlert
 */

/** The alerts active in Prometheus now. @returns {Promise<ActiveAlert[]>} */
export async function activeAlerts() {
  const res = await fetch(`${prometheusUrl}/api/v1/alerts`, { signal: AbortSignal.timeout(5000) });
  const body = /** @type {{data: {alerts: {labels: Record<string, string>, state: any}[]}}} */ (
    await res.json()
  );
  return body.data.alerts.map((a) => ({
    alertname: a.labels.alertname,
    state: a.state,
    labels: a.labels,
  }));
}

/**
 * The active alert matching `matcher`, firing before pending, else null.
 * @param {ActiveAlert[]} alerts
 * @param {AlertMatcher} matcher
 */
export function matching(alerts, matcher) {
  const found = alerts.filter((a) =>
    Object.entries(matcher).every(
      ([k, v]) => (k === 'alertname' ? a.alertname : a.labels[k]) === v,
    ),
  );
  return found.find((a) => a.state === 'firing') ?? found[0] ?? null;
}

/** A matcher as text: `HeraldErrorBudgetBurn{slo="events"}`. @param {AlertMatcher} m */
export function describeMatcher({ alertname, ...labels }) {
  const rest = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return rest.length ? `${alertname}{${rest.join(',')}}` : alertname;
}

/**
 * Polls every 2 s until `check(alerts)` holds or `withinMs` passes; resolves the ms it took, or
 * null. Prometheus not answering counts as not holding.
 * @param {(alerts: ActiveAlert[]) => boolean} check
 */
export async function waitForAlerts(check, withinMs) {
  const started = Date.now();
  for (;;) {
    const alerts = await activeAlerts().catch(() => null);
    if (alerts && check(alerts)) return Date.now() - started;
    if (Date.now() - started > withinMs) return null;
    await sleep(2000);
  }
}

/** How long the alert check waits for an alert to be quiet before a fault, or after it. */
const ALERT_QUIET_MS = 7 * 60_000;

/**
 * @typedef {object} AlertCheck  one alert a fault must raise, as seen in the local Prometheus
 * @property {string} alert
 * @property {import('./alerts.mjs').AlertMatcher} matcher
 * @property {boolean} quietBefore      inactive when the fault was injected
 * @property {string | null} state      'pending' or 'firing' during the fault, else null
 * @property {number | null} activeAfterS   seconds from the injection to pending or firing
 * @property {number | null} resolvedAfterS seconds from the end of the load to inactive again
 */

/**
 * Holds the fault for `ms`, and meanwhile polls Prometheus for the alerts in `checks`.
 * @param {number} ms
 * @param {AlertCheck[] | undefined} checks
 * @param {number} injectedAt
 * @param {(text: string) => void} say
 */
export async function holdWatchingAlerts(ms, checks, injectedAt, say) {
  const until = Date.now() + ms;
  if (!checks?.length) return sleep(ms);
  await waitForAlerts((alerts) => {
    for (const check of checks) {
      const active = check.state === null ? matching(alerts, check.matcher) : null;
      if (active) {
        check.state = active.state;
        check.activeAfterS = Math.round((Date.now() - injectedAt) / 1000);
        say(`alert ${check.alert} ${active.state} ${check.activeAfterS} s after the fault began`);
      }
    }
    return Date.now() >= until;
  }, ms);
  await sleep(Math.max(0, until - Date.now()));
}

/**
 * Waits until none of `matchers` is active (an earlier fault may have left one firing), and
 * returns their checks, noting whether they were quiet.
 * @param {import('./alerts.mjs').AlertMatcher[]} matchers
 * @param {(text: string) => void} say
 * @returns {Promise<AlertCheck[]>}
 */
export async function quietAlerts(matchers, say) {
  const quiet = await waitForAlerts(
    (alerts) => matchers.every((m) => !matching(alerts, m)),
    ALERT_QUIET_MS,
  );
  if (quiet === null) say(`an alert is still active from before: ${matchers.map(describeMatcher)}`);
  else if (quiet > 0) say(`waited ${Math.round(quiet / 1000)} s for the alerts to be quiet`);
  return matchers.map((matcher) => ({
    alert: describeMatcher(matcher),
    matcher,
    quietBefore: quiet !== null,
    state: null,
    activeAfterS: null,
    resolvedAfterS: null,
  }));
}

/**
 * Waits until every alert that went active is inactive again, and notes when.
 * @param {AlertCheck[]} checks
 * @param {number} since
 * @param {(text: string) => void} say
 */
export async function alertsResolved(checks, since, say) {
  const raised = checks.filter((c) => c.state !== null);
  if (raised.length === 0) return;
  const resolved = await waitForAlerts(
    (alerts) => raised.every((c) => !matching(alerts, c.matcher)),
    ALERT_QUIET_MS,
  );
  for (const check of raised) {
    check.resolvedAfterS = resolved === null ? null : Math.round((Date.now() - since) / 1000);
  }
  say(
    resolved === null
      ? `alerts still active ${ALERT_QUIET_MS / 60_000} min after the load stopped`
      : `alerts resolved ${Math.round((Date.now() - since) / 1000)} s after the load stopped`,
  );
}
