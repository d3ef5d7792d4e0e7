import { useEffect, useRef, useState } from 'preact/hooks';
import { api, enc } from '../api.js';
import { ErrorNote, TypedConfirm, useAction, when } from '../components.js';
import { PUBLISHABLE_SCOPES, SCOPES, type Scope } from '../scopes.js';
import type { ApiKey, CreatedKey, CreateKeyBody } from '../types.js';
import { tenantPath } from './Tenants.js';

/** A Tenant's keys: the list, a new key (its secret shown once), revoking one. */
export function Keys({ tenantId }: { tenantId: string }) {
  const base = `${tenantPath(tenantId)}/api-keys`;
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const load = useAction();
  const refresh = () =>
    load.run(async () => setKeys((await api<{ apiKeys: ApiKey[] }>('GET', base)).apiKeys));
  useEffect(() => {
    void refresh();
  }, [base]);

  return (
    <>
      <h2>API keys</h2>
      <ErrorNote error={load.error} />
      {keys && keys.length === 0 && <p>No keys yet.</p>}
      {keys && keys.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Client id</th>
              <th scope="col">Kind</th>
              <th scope="col">Name</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.clientId}>
                <td>
                  <code>{key.clientId}</code>
                </td>
                <td>{key.kind}</td>
                <td>{key.name ?? ''}</td>
                <td>{key.scopes.join(', ')}</td>
                <td>{when(key.createdAt)}</td>
                <td>
                  {key.revokedAt ? (
                    `revoked ${when(key.revokedAt)}`
                  ) : (
                    <button type="button" class="danger" onClick={() => setRevoking(key)}>
                      Revoke…
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <NewKey
        base={base}
        onCreated={(key) => {
          setCreated(key);
          void refresh();
        }}
      />
      {created?.secret && <SecretShown created={created} onClose={() => setCreated(null)} />}
      {revoking && (
        <TypedConfirm
          title="Revoke this key?"
          expected={revoking.clientId}
          action="Revoke key"
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            await api('POST', `${base}/${enc(revoking.clientId)}/revoke`);
            setRevoking(null);
            await refresh();
          }}
        >
          <p>New token exchanges fail at once; tokens already issued stop within 5 seconds.</p>
        </TypedConfirm>
      )}
    </>
  );
}

function NewKey({ base, onCreated }: { base: string; onCreated: (key: CreatedKey) => void }) {
  const [kind, setKind] = useState<'secret' | 'publishable'>('secret');
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>([...SCOPES]);
  const [origins, setOrigins] = useState('');
  const create = useAction();
  const offered: readonly Scope[] = kind === 'secret' ? SCOPES : PUBLISHABLE_SCOPES;
  return (
    <>
      <h2>New key</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void create.run(async () => {
            const allowedOrigins = origins.split(/[\s,]+/).filter(Boolean);
            const body: CreateKeyBody = {
              kind,
              scopes: scopes.filter((s) => offered.includes(s)),
              ...(name.trim() ? { name: name.trim() } : {}),
              ...(kind === 'publishable' && allowedOrigins.length ? { allowedOrigins } : {}),
            };
            const key = await api<CreatedKey>('POST', base, body);
            setName('');
            onCreated(key);
          });
        }}
      >
        <fieldset>
          <legend>Kind</legend>
          {(['secret', 'publishable'] as const).map((k) => (
            <label key={k} class="choice">
              <input type="radio" name="kind" checked={kind === k} onChange={() => setKind(k)} />
              {k === 'secret' ? 'Secret (servers)' : 'Publishable (browsers: records events only)'}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Scopes</legend>
          {offered.map((scope) => (
            <label key={scope} class="choice">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) =>
                  setScopes(
                    e.currentTarget.checked
                      ? [...scopes, scope]
                      : scopes.filter((s) => s !== scope),
                  )
                }
              />
              <code>{scope}</code>
            </label>
          ))}
        </fieldset>
        <label>
          Name (optional)
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        {kind === 'publishable' && (
          <label>
            Allowed origins (optional, e.g. https://shop.example.com)
            <input value={origins} onInput={(e) => setOrigins(e.currentTarget.value)} />
          </label>
        )}
        <button type="submit" class="primary" disabled={create.busy}>
          Create key
        </button>
      </form>
      <ErrorNote error={create.error} />
    </>
  );
}

/** A new secret key: its secret, once, with a copy button. */
function SecretShown({ created, onClose }: { created: CreatedKey; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [copied, setCopied] = useState<string>('');
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="secret-title" onClose={onClose}>
      <h2 id="secret-title">Key created</h2>
      <p>
        Client id: <code>{created.clientId}</code>
      </p>
      <p class="warning">
        <strong>Copy the secret now: you will not see it again.</strong> Herald keeps only its hash.
      </p>
      <p>
        <label>
          Secret
          <input
            readOnly
            value={created.secret}
            class="secret"
            onFocus={(e) => e.currentTarget.select()}
          />
        </label>
      </p>
      <div class="actions">
        <button
          type="button"
          class="primary"
          onClick={() =>
            void navigator.clipboard.writeText(created.secret ?? '').then(
              () => setCopied('Copied to the clipboard.'),
              () => setCopied('Copying failed: select the secret and copy it.'),
            )
          }
        >
          Copy secret
        </button>
        <button type="button" onClick={() => dialog.current?.close()}>
          I have stored it
        </button>
      </div>
      <p role="status">{copied}</p>
    </dialog>
  );
}
