// The test lifecycle every scenario shares: setup() once, then one flow of the mix per iteration.
import exec from 'k6/execution';
import { adoptTokens, exchangeAll } from './auth.js';
import { keys, organizationExternalId, seedContacts } from './config.js';
import { ContactPool, newPerson, newRunId } from './data.js';
import { flowFor, requestsPerIteration } from './mix.js';
import { upsert } from '../flows/contacts.js';

export { handleSummary } from './summary.js';

/** Per-key rate budgets, refill per second (docs/api-reference.md#rate-limits). */
const BUDGET = { writes: 100, reads: 100 };

/** Warns when the scenario's busiest rate needs more of a key's budget than it has. */
function checkBudgets() {
  const peak = Math.max(
    ...Object.values(exec.test.options.scenarios).map((s) =>
      Math.max(s.rate ?? 0, ...(s.stages ?? []).map((st) => st.target)),
    ),
  );
  const perIteration = requestsPerIteration();
  for (const budget of ['writes', 'reads']) {
    const perKey = (peak * perIteration[budget]) / keys.length;
    if (perKey > BUDGET[budget]) {
      console.warn(
        `at its peak (${peak} iterations/s) this scenario sends ${perKey.toFixed(0)} ${budget}/s ` +
          `per key, over the budget of ${BUDGET[budget]}/s: expect 429s (give more keys to avoid them)`,
      );
    }
  }
}

/** Exchanges every key once, and upserts the seed Contacts that the VUs' Events are about. */
export function setup() {
  const runId = newRunId();
  const tokens = exchangeAll();
  adoptTokens(tokens);
  checkBudgets();
  if (seedContacts < 1) throw new Error('SEED_CONTACTS must be at least 1');
  const ctx = { runId, key: 0 };
  const seed = [];
  for (let i = 0; i < seedContacts; i += 1) {
    ctx.key = i % keys.length; // every key is used once before the load starts
    const contact = upsert(ctx, newPerson(ctx), [201]);
    if (contact) seed.push(contact);
  }
  if (seed.length === 0) throw new Error('setup() could not create any Contact');
  console.log(
    `run ${runId}: ${keys.length} key(s), ${seed.length} seed Contacts, ` +
      `organization Events ${organizationExternalId ? 'on' : 'off (ORGANIZATION_EXTERNAL_ID unset)'}`,
  );
  return { runId, tokens, seed };
}

let ctx = null; // this VU's state

export default function iteration(data) {
  if (ctx === null) {
    adoptTokens(data.tokens);
    ctx = { runId: data.runId, key: 0, organizationExternalId, pool: new ContactPool(data.seed) };
  }
  ctx.key = Math.floor(Math.random() * keys.length);
  flowFor(exec.scenario.iterationInTest).run(ctx);
}
