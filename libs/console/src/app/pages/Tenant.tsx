import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components.js';
import { TABS, tenantHref, type Tab } from '../router.js';
import type { Tenant as TenantType } from '../types.js';
import { Contacts } from './Contacts.js';
import { EventNames } from './EventNames.js';
import { Keys } from './Keys.js';
import { LiveEvents } from './LiveEvents.js';
import { Organizations } from './Organizations.js';
import { Overview } from './Overview.js';
import { tenantPath } from './Tenants.js';

const LABELS: Record<Tab, string> = {
  overview: 'Overview',
  keys: 'API keys',
  organizations: 'Organizations',
  'event-names': 'Event names',
  contacts: 'Contacts',
  live: 'Live events',
};

/** One Tenant: its name, and a tab for each thing the operator does with it. */
export function Tenant({ tenantId, tab }: { tenantId: string; tab: Tab }) {
  const [tenant, setTenant] = useState<TenantType | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    // An answer for a Tenant left meanwhile is dropped: the page never shows (or deletes) it
    // under another Tenant's address.
    let current = true;
    setTenant(null);
    setError(null);
    api<TenantType>('GET', tenantPath(tenantId)).then(
      (t) => current && setTenant(t),
      (e: unknown) => current && setError(e),
    );
    return () => {
      current = false;
    };
  }, [tenantId]);

  return (
    <main>
      <p>
        <a href="#/">← Tenants</a>
      </p>
      <h1>{tenant ? tenant.name : 'Tenant'}</h1>
      <p class="meta">
        <code>{tenantId}</code>
      </p>
      <ErrorNote error={error} />
      {tenant?.id === tenantId.toLowerCase() && (
        <>
          <nav aria-label="Tenant" class="tabs">
            {TABS.map((t) => (
              <a
                key={t}
                href={tenantHref(tenantId, t)}
                aria-current={t === tab ? 'page' : undefined}
              >
                {LABELS[t]}
              </a>
            ))}
          </nav>
          <section aria-label={LABELS[tab]}>
            {tab === 'overview' && <Overview tenant={tenant} />}
            {tab === 'keys' && <Keys tenantId={tenantId} />}
            {tab === 'organizations' && <Organizations tenantId={tenantId} />}
            {tab === 'event-names' && <EventNames tenantId={tenantId} />}
            {tab === 'contacts' && <Contacts tenantId={tenantId} />}
            {tab === 'live' && <LiveEvents tenantId={tenantId} />}
          </section>
        </>
      )}
    </main>
  );
}
