// Reading answers without letting a malformed body throw out of a check.

/** The parsed JSON body, or null when there is none or it is not JSON. */
export function bodyJson(res) {
  if (typeof res.body !== 'string' || res.body === '') return null;
  try {
    return JSON.parse(res.body);
  } catch {
    return null;
  }
}

/** Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), else `fallback`. */
export function retryAfterSeconds(res, fallback) {
  const raw = res.headers['Retry-After'];
  if (!raw) return fallback;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? fallback : Math.max(0, (at - Date.now()) / 1000);
}
