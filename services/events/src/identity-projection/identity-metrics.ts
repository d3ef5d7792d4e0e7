import { meter, type Histogram } from '@herald/telemetry';

/** Where a request's identities were looked up: the local projection, or the contacts service. */
export type IdentitySource = 'projection' | 'contacts';

/** Seconds: a local lookup takes a millisecond, a call to contacts may take up to its timeout. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

let duration: Histogram | undefined;

/**
 * Times one lookup in `events.identity.resolution.duration` (its count is the number of calls),
 * by `source` and `outcome` (ok or error). Never by Tenant or by anything looked up.
 */
export async function timedLookup<T>(source: IdentitySource, lookup: () => Promise<T>): Promise<T> {
  duration ??= meter('herald.events').createHistogram('events.identity.resolution.duration', {
    unit: 's',
    description:
      'Identity lookups of Event requests and how long they took, by source (projection: the local copy; contacts: a call to the contacts service) and outcome',
    advice: { explicitBucketBoundaries: BUCKETS },
  });
  const histogram = duration;
  const started = performance.now();
  try {
    const result = await lookup();
    histogram.record((performance.now() - started) / 1000, { source, outcome: 'ok' });
    return result;
  } catch (err) {
    histogram.record((performance.now() - started) / 1000, { source, outcome: 'error' });
    throw err;
  }
}
