import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, useAction, when } from '../components.js';
import type { EventName } from '../types.js';
import { tenantPath } from './Tenants.js';

/** The event names a Tenant has recorded: what its Journeys can be triggered by. */
export function EventNames({ tenantId }: { tenantId: string }) {
  const [names, setNames] = useState<EventName[] | null>(null);
  const load = useAction();
  useEffect(() => {
    void load.run(async () =>
      setNames(
        (await api<{ eventNames: EventName[] }>('GET', `${tenantPath(tenantId)}/event-names`))
          .eventNames,
      ),
    );
  }, [tenantId]);
  return (
    <>
      <h2>Event names</h2>
      <ErrorNote error={load.error} />
      {names && names.length === 0 && <p>No events recorded yet.</p>}
      {names && names.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Event name</th>
              <th scope="col">First seen</th>
            </tr>
          </thead>
          <tbody>
            {names.map((n) => (
              <tr key={n.name}>
                <td>{n.name}</td>
                <td>{when(n.firstSeenAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
