import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, TypedConfirm, useAction, when } from '../components.js';
import type { Billing, Retention, Tenant } from '../types.js';
import { tenantPath } from './Tenants.js';

/** The most failed payments "Suspend" records; the installation suspends after 3 by default. */
const MAX_FAILURES = 10;

/** Subscription state, Event retention, and deleting the Tenant. */
export function Overview({ tenant }: { tenant: Tenant }) {
  const base = tenantPath(tenant.id);
  const [billing, setBilling] = useState<Billing | null>(null);
  const [retention, setRetention] = useState<Retention | null>(null);
  const [days, setDays] = useState('');
  const [deleting, setDeleting] = useState(false);
  const load = useAction();
  const billingAction = useAction();
  const retentionAction = useAction();

  useEffect(() => {
    void load.run(async () => {
      const [b, r] = await Promise.all([
        api<Billing>('GET', `${base}/billing`),
        api<Retention>('GET', `${base}/event-retention`),
      ]);
      setBilling(b);
      setRetention(r);
      setDays(r.source === 'tenant' ? String(r.days) : '');
    });
  }, [base]);

  return (
    <>
      <p>Created {when(tenant.createdAt)}.</p>
      <ErrorNote error={load.error} />

      <h2>Subscription</h2>
      {billing && (
        <p>
          State: <strong class={`state-${billing.state}`}>{billing.state}</strong>, consecutive
          failed payments: {billing.consecutiveFailures}.
        </p>
      )}
      <div class="actions">
        <button
          type="button"
          disabled={billingAction.busy || billing?.state === 'suspended'}
          onClick={() =>
            void billingAction.run(async () => {
              // Billing suspends after its own number of failed payments: record them until it does.
              let state = billing;
              for (let i = 0; i < MAX_FAILURES && state?.state !== 'suspended'; i += 1) {
                state = await api<Billing>('POST', `${base}/billing/payment-failures`);
              }
              setBilling(state);
              if (state?.state !== 'suspended') {
                throw new Error(
                  `Still active after ${MAX_FAILURES} failed payments: billing was not suspended.`,
                );
              }
            })
          }
        >
          Suspend (record failed payments)
        </button>
        <button
          type="button"
          disabled={billingAction.busy || billing?.state === 'active'}
          onClick={() =>
            void billingAction.run(async () =>
              setBilling(await api<Billing>('POST', `${base}/billing/payment-details`)),
            )
          }
        >
          Reactivate (payment details updated)
        </button>
      </div>
      <ErrorNote error={billingAction.error} />

      <h2>Event retention</h2>
      {retention && (
        <p>
          Events are kept {retention.days} days (
          {retention.source === 'tenant'
            ? 'set for this tenant'
            : `the installation default, ${retention.defaultDays} days`}
          ).
        </p>
      )}
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void retentionAction.run(async () => {
            const set = await api<Retention>('PUT', `${base}/event-retention`, {
              days: days.trim() === '' ? null : Number(days),
            });
            setRetention(set);
          });
        }}
      >
        <label>
          Days (empty: the default)
          <input
            inputMode="numeric"
            pattern="[0-9]*"
            value={days}
            onInput={(e) => setDays(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={retentionAction.busy}>
          Set retention
        </button>
      </form>
      <ErrorNote error={retentionAction.error} />

      <h2>Delete</h2>
      <p>Deletes the tenant with its keys, contacts, events and organizations, for good.</p>
      <button type="button" class="danger" onClick={() => setDeleting(true)}>
        Delete tenant…
      </button>
      {deleting && (
        <TypedConfirm
          title={`Delete ${tenant.name}?`}
          expected={tenant.name}
          action="Delete tenant"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api('DELETE', `${base}?confirm=${encodeURIComponent(tenant.id)}`);
            location.hash = '#/';
          }}
        >
          <p>Its keys stop working at once; everything it holds is deleted in the background.</p>
        </TypedConfirm>
      )}
    </>
  );
}
