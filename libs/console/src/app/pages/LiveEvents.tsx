import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { ErrorNote, when } from '../components.js';
import { followLiveEvents } from '../live.js';
import type { LiveEvent } from '../types.js';

/** The most Events the view keeps: older ones leave as new ones come. */
const KEPT = 200;
const RECONNECT_MS = 3_000;

/** A Tenant's Events as they are recorded; pausing stops reading (nothing is queued meanwhile). */
export function LiveEvents({ tenantId }: { tenantId: string }) {
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [skipped, setSkipped] = useState(0);
  const [paused, setPaused] = useState(false);
  const [state, setState] = useState<'connecting' | 'live' | 'reconnecting' | 'stopped'>(
    'connecting',
  );
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    if (paused) return undefined;
    const stop = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    // A stream that ends (a restarted service) or fails opens again in a few seconds; a refused
    // token does not (the app signs out).
    const again = () => {
      setState('reconnecting');
      retry = setTimeout(connect, RECONNECT_MS);
    };
    const connect = () => {
      setState('connecting');
      followLiveEvents(
        tenantId,
        {
          open: () => {
            setState('live');
            setError(null);
          },
          event: (event) => setEvents((shown) => [event, ...shown].slice(0, KEPT)),
          skipped: (count) => setSkipped((n) => n + count),
        },
        stop.signal,
      ).then(
        () => !stop.signal.aborted && again(),
        (e: unknown) => {
          if (stop.signal.aborted) return;
          setError(e);
          if (e instanceof ApiError && (e.status === 401 || e.status === 404)) setState('stopped');
          else again();
        },
      );
    };
    connect();
    return () => {
      stop.abort();
      clearTimeout(retry);
    };
  }, [tenantId, paused]);

  const said = paused
    ? 'Paused.'
    : {
        connecting: 'Connecting…',
        live: 'Showing events as they are recorded.',
        reconnecting: `The stream ended: connecting again in ${RECONNECT_MS / 1000} s…`,
        stopped: 'Stopped.',
      }[state];

  return (
    <>
      <h2>Live events</h2>
      <p role="status" class={`live-${paused ? 'paused' : state}`}>
        {said}
      </p>
      {/* outside the status region: a changing count is not announced again and again */}
      {skipped > 0 && <p>{skipped} events not shown (more than 20 a second).</p>}
      <div class="actions">
        <button type="button" onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <button
          type="button"
          onClick={() => {
            setEvents([]);
            setSkipped(0);
          }}
        >
          Clear
        </button>
      </div>
      <ErrorNote error={error} />
      <table class="live">
        <caption>Newest first, the last {KEPT} kept</caption>
        <thead>
          <tr>
            <th scope="col">Received</th>
            <th scope="col">Event</th>
            <th scope="col">Contact</th>
            <th scope="col">Properties</th>
          </tr>
        </thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.id}>
              <td>{when(e.receivedAt)}</td>
              <td>{e.eventName}</td>
              <td>
                <code>{e.contactId ?? e.organizationExternalId ?? ''}</code>
              </td>
              <td>
                <code class="properties">{e.properties ?? ''}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
