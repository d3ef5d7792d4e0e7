// The page's script: the SDK's browser build (ES modules, no bundler needed), a publishable key,
// one Event per click about the Contact whose Herald id the page was given. A publishable key
// names Contacts by that id only: an id is a random UUID, so the key tells no visitor whether an
// email or a user id of their choosing is someone's. The SDK exchanges the key for an access token on the first call and keeps
// it; every Event gets a dedupKey, so the SDK's resends (timeouts, 429, 5xx) never record it twice.
import { HeraldClient, HeraldError } from './herald-client/index.js';

const form = document.querySelector('#record');
const status = document.querySelector('#status');

// Fill the fields from the address: ?url=…&key=pk_…&contact=…&event=…
const query = new URLSearchParams(location.search);
for (const name of ['url', 'key', 'contact', 'event']) {
  if (query.has(name)) form.elements[name].value = query.get(name);
}

/** One client per base URL and key: it holds the access token. */
const clients = new Map();
function clientFor(baseUrl, publishableKey) {
  const id = `${baseUrl} ${publishableKey}`;
  if (!clients.has(id)) clients.set(id, new HeraldClient({ baseUrl, publishableKey }));
  return clients.get(id);
}

function show(state, text) {
  status.dataset.state = state;
  status.textContent = text;
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const { url, key, contact, event: eventName } = Object.fromEntries(new FormData(form));
  show('sending', 'Sending…');
  try {
    const herald = clientFor(url, key);
    const dedupKey = crypto.randomUUID();
    const { accepted } = await herald.events.byContactId({
      contactId: contact,
      eventName,
      occurredAt: new Date(),
      dedupKey,
      properties: { page: location.pathname, userAgent: navigator.userAgent },
    });
    show('recorded', `Recorded (${accepted} Event, dedupKey ${dedupKey}).`);
  } catch (error) {
    if (error instanceof HeraldError) {
      // e.g. 422 unresolved_identity: no Contact with this id; 401 invalid_client: a wrong or
      // revoked key; 403 forbidden: a page Origin the key does not allow. Quote the request id
      // when asking for support.
      show('failed', `Not recorded: ${error.code} (${error.message}) ${error.requestId ?? ''}`);
    } else {
      show('failed', `Not recorded: ${error}`);
    }
  }
});
