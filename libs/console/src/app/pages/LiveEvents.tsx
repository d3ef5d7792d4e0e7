import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote, when } from '../components.js';
import { followLiveEvents } from '../live.js';
import type { LiveEvent } from '../types.js';

/** The most Events the view keeps: older ones leave as new ones come. */
const KEPT = 200;

/** A Tenant's Events as they are recorded; pausing stops reading (nothing is queued meanwhile). */
export function LiveEvents({ tenantId }: { tenantId: string }) {
  const [events, setEvents] = useState<LiveEvent[]>([]);
  const [skipped, setSkipped] = useState(0);
  const [paused, setPaused] = useState(false);
  const [state, setState] = useState<'connecting' | 'live' | 'stopped'>('connecting');
  const [error, setError] = useState<unknown>(null);
  const generation = useRef(0);

  useEffect(() => {
    if (paused) return undefined;
    const stop = new AbortController();
    const mine = ++generation.current;
    setState('connecting');
    setError(null);
    const follow = async () => {
      setState('live');
      await followLiveEvents(
        tenantId,
        {
          event: (event) => setEvents((shown) => [event, ...shown].slice(0, KEPT)),
          skipped: (count) => setSkipped((n) => n + count),
        },
        stop.signal,
      );
    };
    follow().then(
      () => mine === generation.current && setState('stopped'),
      (e: unknown) => {
        if (stop.signal.aborted) return;
        setError(e);
        setState('stopped');
      },
    );
    return () => stop.abort();
  }, [tenantId, paused]);

  return (
    <>
      <h2>Live events</h2>
      <p role="status" class={`live-${paused ? 'paused' : state}`}>
        {paused
          ? 'Paused.'
          : state === 'live'
            ? 'Showing events as they are recorded.'
            : state === 'connecting'
              ? 'Connecting…'
              : 'Stopped.'}
        {skipped > 0 && ` ${skipped} events not shown (more than 20 a second).`}
      </p>
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
