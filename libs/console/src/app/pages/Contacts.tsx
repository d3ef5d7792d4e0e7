import { useEffect, useState } from 'preact/hooks';
import { api, enc, request } from '../api.js';
import { ErrorNote, TypedConfirm, useAction, when } from '../components.js';
import type { Contact, ContactSearch } from '../types.js';
import { tenantPath } from './Tenants.js';

/** A person's Contacts found by an identity; each one's GDPR export, or its erasure. */
export function Contacts({ tenantId }: { tenantId: string }) {
  const base = `${tenantPath(tenantId)}/contacts`;
  const [identity, setIdentity] = useState('');
  const [found, setFound] = useState<Contact[] | null>(null);
  const [erased, setErased] = useState('');
  const find = useAction();

  return (
    <>
      <h2>Find a contact</h2>
      <form
        class="inline"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void find.run(async () => {
            setFound(null);
            setErased('');
            const search = await api<ContactSearch>(
              'GET',
              `${base}?identity=${enc(identity.trim())}`,
            );
            setFound(search.contacts);
          });
        }}
      >
        <label>
          External id, email or contact id
          <input required value={identity} onInput={(e) => setIdentity(e.currentTarget.value)} />
        </label>
        <button type="submit" class="primary" disabled={find.busy || identity.trim() === ''}>
          Find
        </button>
      </form>
      <ErrorNote error={find.error} />
      {erased && <p role="status">{erased}</p>}
      {found?.length === 0 && <p role="status">No contact has that identity.</p>}
      {found?.map((contact) => (
        <ContactFound
          key={contact.id}
          base={base}
          contact={contact}
          onErased={() => {
            setFound((shown) => shown && shown.filter((c) => c.id !== contact.id));
            setErased(`Contact ${contact.id} and its events were erased.`);
          }}
        />
      ))}
    </>
  );
}

/** One Contact: what is held about it, its export, its erasure. */
function ContactFound(props: { base: string; contact: Contact; onErased: () => void }) {
  const { base, contact } = props;
  const [download, setDownload] = useState<{ url: string; name: string } | null>(null);
  const [erasing, setErasing] = useState(false);
  const exporting = useAction();
  // The export holds personal data: the browser lets go of it when it is replaced or the page closes.
  useEffect(() => () => download && URL.revokeObjectURL(download.url), [download]);

  return (
    <section class="contact" aria-label={`Contact ${contact.email}`}>
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
              setDownload({ url: URL.createObjectURL(blob), name: `contact-${contact.id}.ndjson` });
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
      {erasing && (
        <TypedConfirm
          title="Erase this contact?"
          expected={contact.email}
          action="Erase contact"
          onClose={() => setErasing(false)}
          onConfirm={async () => {
            await api('POST', `${base}/${enc(contact.id)}/erase`);
            setErasing(false);
            props.onErased();
          }}
        >
          <p>The contact and all its events are erased everywhere Herald keeps them, for good.</p>
        </TypedConfirm>
      )}
    </section>
  );
}
