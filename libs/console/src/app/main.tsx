// The console: sign-in with the admin token, then the Tenants and everything about one.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { onUnauthorized } from './api.js';
import { Tenant } from './pages/Tenant.js';
import { Tenants } from './pages/Tenants.js';
import { SignIn } from './pages/SignIn.js';
import { useRoute } from './router.js';
import { currentToken, forgetToken, keepToken } from './session.js';
import './styles.css';

function App() {
  const [signedIn, setSignedIn] = useState(() => currentToken() !== '');
  const [notice, setNotice] = useState('');
  const route = useRoute();
  useEffect(
    () =>
      onUnauthorized(() => {
        setNotice('The admin token was refused: sign in again.');
        setSignedIn(false);
      }),
    [],
  );

  if (!signedIn) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(token) => {
          keepToken(token);
          setNotice('');
          setSignedIn(true);
        }}
      />
    );
  }
  return (
    <>
      <header>
        <a class="brand" href="#/">
          Herald console
        </a>
        <button
          type="button"
          onClick={() => {
            forgetToken();
            setNotice('Signed out.');
            setSignedIn(false);
          }}
        >
          Sign out
        </button>
      </header>
      {route.page === 'tenant' ? <Tenant tenantId={route.tenantId} tab={route.tab} /> : <Tenants />}
    </>
  );
}

render(<App />, document.getElementById('app')!);
