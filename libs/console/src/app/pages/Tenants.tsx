import { useEffect, useState } from 'preact/hooks';
import { api, enc } from '../api.js';
import { ErrorNote, useAction, when } from '../components.js';
import { tenantHref } from '../router.js';
import type { Tenant, TenantPage } from '../types.js';

/** Every Tenant, newest first, searched by name or id, a page at a time; and a new one. */
export function Tenants() {
  const [search, setSearch] = useState('');
  const [shown, setShown] = useState<{ search: string; page: TenantPage } | null>(null);
  const list = useAction();
  const [name, setName] = useState('');
  const create = useAction();

  const load = (query: string, after?: TenantPage) =>
    list.run(async () => {
      const params = new URLSearchParams({ limit: '25' });
      if (query) params.set('search', query);
      if (after?.nextCursor) params.set('cursor', after.nextCursor);
      const page = await api<TenantPage>('GET', `/tenants?${params.toString()}`);
      setShown({
        search: query,
        page: after ? { ...page, tenants: [...after.tenants, ...page.tenants] } : page,
      });
    });
  useEffect(() => {
    void load('');
  }, []);

  return (
    <main>
      <h1>Tenants</h1>
      <form
        class="inline"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void load(search.trim());
        }}
      >
        <label>
          Search by name or id
          <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary">
          Search
        </button>
      </form>
      <ErrorNote error={list.error} />
      {shown && (
        <table>
          <caption>
            {shown.page.tenants.length} tenant{shown.page.tenants.length === 1 ? '' : 's'}
            {shown.search ? ` matching “${shown.search}”` : ''}
            {shown.page.nextCursor ? ' (more below)' : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {shown.page.tenants.map((t: Tenant) => (
              <tr key={t.id}>
                <td>
                  <a href={tenantHref(t.id)}>{t.name}</a>
                </td>
                <td>
                  <code>{t.id}</code>
                </td>
                <td>{when(t.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {shown?.page.nextCursor && (
        <button
          type="button"
          disabled={list.busy}
          onClick={() => void load(shown.search, shown.page)}
        >
          Load more
        </button>
      )}

      <h2>New tenant</h2>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(async () => {
            const tenant = await api<Tenant>('POST', '/tenants', { name });
            setName('');
            location.hash = tenantHref(tenant.id);
          });
        }}
      >
        <label>
          Name
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={create.busy || name.trim() === ''}>
          Create tenant
        </button>
      </form>
      <ErrorNote error={create.error} />
    </main>
  );
}

export const tenantPath = (tenantId: string) => `/tenants/${enc(tenantId)}`;
