// A small web server that tells Herald what its users do, with the SDK's batching tracker: a
// request handler calls `tracker.track()`, which queues the Event and returns at once; the
// tracker sends the queue in batches (every `flushAt` Events or `flushIntervalMs`), and
// `tracker.close()` sends what is left when the server shuts down.
//
//   HERALD_URL=http://localhost:8080 HERALD_CLIENT_ID=ck_… HERALD_SECRET=sk_… node server.mjs
//
// Routes (PORT, default 3000):
//   PUT  /users/{userId}     {"email": "…", "name": "…"}  upserts the Contact, tracks "Signed Up"
//   POST /orders?user={id}   {"total": 42}               tracks "Order Completed"
//   GET  /{anything}?user={id}                            tracks "Page Viewed"
import http from 'node:http';
import { HeraldClient, HeraldError } from '@herald/client';

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set (see README.md)`);
    process.exit(1);
  }
  return value;
}

// A secret key: it stays on the server. The SDK exchanges it for access tokens by itself.
const herald = new HeraldClient({
  baseUrl: process.env.HERALD_URL || 'http://localhost:8080',
  clientId: required('HERALD_CLIENT_ID'),
  secret: required('HERALD_SECRET'),
});

const tracker = herald.tracker({
  flushAt: 50, // Events per request
  flushIntervalMs: 2_000, // the longest an Event waits in the queue
  onError(error, events, route) {
    // Called once the SDK gave up on a batch (its resends used up, or a final answer).
    console.error(`[herald] ${events.length} Event(s) for ${route} not recorded: ${error.message}`);
  },
});

/** Queues an Event about the user with this externalId; answers its dedupKey. */
function track(userId, eventName, properties) {
  const dedupKey = tracker.track('by-external-id', {
    contactExternalId: userId,
    eventName,
    properties,
  });
  console.log(`tracked ${eventName} for ${userId} (${dedupKey})`);
  return dedupKey;
}

async function readJson(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : {};
}

function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://localhost');
  const user = url.searchParams.get('user');
  try {
    const signup = /^\/users\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'PUT' && signup) {
      const userId = decodeURIComponent(signup[1]);
      const { email, name } = await readJson(req);
      // Awaited, not queued: the Events that follow must name a Contact that exists.
      const { contact, created } = await herald.contacts.upsert(userId, { email, name });
      if (created) track(userId, 'Signed Up');
      return reply(res, created ? 201 : 200, { contactId: contact.id });
    }
    if (!user) return reply(res, 400, { error: 'add ?user=<userId>' });
    if (req.method === 'POST' && url.pathname === '/orders') {
      const { total } = await readJson(req);
      const dedupKey = track(user, 'Order Completed', { total });
      return reply(res, 201, { dedupKey });
    }
    if (req.method === 'GET') {
      const dedupKey = track(user, 'Page Viewed', { path: url.pathname });
      return reply(res, 200, { dedupKey });
    }
    reply(res, 405, { error: 'method not allowed' });
  } catch (error) {
    if (error instanceof HeraldError) {
      // e.g. 409 conflict: the email belongs to another Contact
      return reply(res, error.status ?? 502, { error: error.code, message: error.message });
    }
    if (error instanceof SyntaxError) return reply(res, 400, { error: 'the body is not JSON' });
    console.error(error);
    reply(res, 500, { error: 'internal error' });
  }
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});

// On shutdown: stop taking requests, send what the tracker still holds, then exit.
let stopping = false;
async function shutdown(signal) {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: sending ${tracker.size} queued Event(s)`);
  server.close();
  server.closeIdleConnections();
  await tracker.close(); // never rejects: failures went to onError
  console.log('done');
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
