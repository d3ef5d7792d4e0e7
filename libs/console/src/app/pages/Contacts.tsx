import { useState } from 'preact/hooks';
import { api, enc, request } from '../api.js';
import { ErrorNote, TypedConfirm, useAction, when } from '../components.js';
import type { Contact } from '../types.js';
import { tenantPath } from './Tenants.js';

const BY = { externalId: 'External id', email: 'Email', id: 'Contact id' } as const;
type By = keyof typeof BY;

/** One Contact looked up, its GDPR export downloaded, or the Contact erased. */
export function Contacts({ tenantId }: { tenantId: string }) {
  const base = `${tenantPath(tenantId)}/contacts`;
  const [by, setBy] = useState<By>('email');
  const [value, setValue] = useState('');
  const [contact, setContact] = useState<Contact | null>(null);
  const [download, setDownload] = useState<{ url: string; name: string } | null>(null);
  const [erasing, setErasing] = useState(false);
  const [erased, setErased] = useState('');
  const find = useAction();
  const exporting = useAction();

  return (
    <>
      <h2>Find a contact</h2>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void find.run(async () => {
            setContact(null);
            setErased('');
            setDownload(null);
            setContact(await api<Contact>('GET', `${base}?${by}=${enc(value.trim())}`));
          });
        }}
      >
        <label>
          By
          <select value={by} onChange={(e) => setBy(e.currentTarget.value as By)}>
            {Object.entries(BY).map(([key, label]) => (
              <option key={key} value={key}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          {BY[by]}
          <input required value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={find.busy || value.trim() === ''}>
          Find
        </button>
      </form>
      <ErrorNote error={find.error} />
      {erased && <p role="status">{erased}</p>}
      {contact && (
        <>
          <dl class="contact">
            <dt>Id</dt>
            <dd>
              <code>{contact.id}</code>
            </dd>
            {contact.externalId !== undefined && (
              <>
                <dt>External id</dt>
                <dd>
                  <code>{contact.externalId}</code>
                </dd>
              </>
            )}
            <dt>Email</dt>
            <dd>{contact.email}</dd>
            {contact.name && (
              <>
                <dt>Name</dt>
                <dd>{contact.name}</dd>
              </>
            )}
            <dt>Created</dt>
            <dd>{when(contact.createdAt)}</dd>
            <dt>Updated</dt>
            <dd>{when(contact.updatedAt)}</dd>
          </dl>
          <div class="actions">
            <button
              type="button"
              disabled={exporting.busy}
              onClick={() =>
                void exporting.run(async () => {
                  const res = await request('GET', `${base}/${enc(contact.id)}/export`);
                  const blob = await res.blob();
                  if (download) URL.revokeObjectURL(download.url);
                  setDownload({
                    url: URL.createObjectURL(blob),
                    name: `contact-${contact.id}.ndjson`,
                  });
                })
              }
            >
              Prepare GDPR export
            </button>
            {download && (
              <a class="button" href={download.url} download={download.name}>
                Download {download.name}
              </a>
            )}
            <button type="button" class="danger" onClick={() => setErasing(true)}>
              Erase…
            </button>
          </div>
          <ErrorNote error={exporting.error} />
        </>
      )}
      {erasing && contact && (
        <TypedConfirm
          title="Erase this contact?"
          expected={contact.email}
          action="Erase contact"
          onClose={() => setErasing(false)}
          onConfirm={async () => {
            await api('POST', `${base}/${enc(contact.id)}/erase`);
            setErasing(false);
            setContact(null);
            setErased(`Contact ${contact.id} and its events were erased.`);
          }}
        >
          <p>The contact and all its events are erased everywhere Herald keeps them, for good.</p>
        </TypedConfirm>
      )}
    </>
  );
}
