import { useState } from 'preact/hooks';
import { request } from '../api.js';
import { ErrorNote, useAction } from '../components.js';

/** The admin token, checked with one read before it is kept for this tab. */
export function SignIn({
  notice,
  onSignedIn,
}: {
  notice: string;
  onSignedIn: (token: string) => void;
}) {
  const [token, setToken] = useState('');
  const { busy, error, run } = useAction();
  return (
    <main class="sign-in">
      <h1>Herald console</h1>
      {notice && <p role="status">{notice}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await request('GET', '/tenants?limit=1', { token });
            onSignedIn(token);
          });
        }}
      >
        <label>
          Admin token
          <input
            type="password"
            name="admin-token"
            autoComplete="off"
            required
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </label>
        <p class="hint">Kept in this tab only, until you sign out or close it.</p>
        <ErrorNote error={error} />
        <button type="submit" class="primary" disabled={busy || token === ''}>
          Sign in
        </button>
      </form>
    </main>
  );
}
