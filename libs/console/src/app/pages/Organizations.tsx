import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, useAction, when } from '../components.js';
import type { Organization, OrganizationPage } from '../types.js';
import { tenantPath } from './Tenants.js';

/** A Tenant's organizations by externalId, a page at a time; and a new one. */
export function Organizations({ tenantId }: { tenantId: string }) {
  const base = `${tenantPath(tenantId)}/organizations`;
  const [page, setPage] = useState<OrganizationPage | null>(null);
  const [externalId, setExternalId] = useState('');
  const [name, setName] = useState('');
  const list = useAction();
  const create = useAction();
  const load = (after?: OrganizationPage) =>
    list.run(async () => {
      const cursor = after?.nextCursor ? `&cursor=${encodeURIComponent(after.nextCursor)}` : '';
      const next = await api<OrganizationPage>('GET', `${base}?limit=50${cursor}`);
      setPage(
        after ? { ...next, organizations: [...after.organizations, ...next.organizations] } : next,
      );
    });
  useEffect(() => {
    void load();
  }, [base]);

  return (
    <>
      <h2>Organizations</h2>
      <ErrorNote error={list.error} />
      {page && page.organizations.length === 0 && <p>No organizations yet.</p>}
      {page && page.organizations.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">External id</th>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {page.organizations.map((o: Organization) => (
              <tr key={o.externalId}>
                <td>
                  <code>{o.externalId}</code>
                </td>
                <td>{o.name ?? ''}</td>
                <td>{when(o.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page?.nextCursor && (
        <button type="button" disabled={list.busy} onClick={() => void load(page)}>
          Load more
        </button>
      )}
      <h2>New organization</h2>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(async () => {
            await api('POST', base, { externalId, ...(name.trim() ? { name: name.trim() } : {}) });
            setExternalId('');
            setName('');
            await load();
          });
        }}
      >
        <label>
          External id
          <input
            required
            value={externalId}
            onInput={(e) => setExternalId(e.currentTarget.value)}
          />
        </label>
        <label>
          Name (optional)
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={create.busy || externalId === ''}>
          Create organization
        </button>
      </form>
      <ErrorNote error={create.error} />
    </>
  );
}
