import { randomUUID } from 'node:crypto';

/** RFC 3339 in UTC with milliseconds, as every time in the API. */
export const API_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A UUID in lower case, as every id in the API. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A unique email per call, so tests never collide. */
export const uniqueEmail = (label = 'person') => `${label}-${randomUUID().slice(0, 8)}@example.com`;
