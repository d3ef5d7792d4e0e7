/**
 * Where each service listens unless told otherwise (its PORT's default, the local stack's port):
 * its manifest declares its process there, and the settings of the processes that call it
 * (SERVICE_URL_<NAME>, AUTH_JWKS_URL) default to it.
 */
export const SERVICE_PORTS = {
  auth: 18081,
  contacts: 18082,
  events: 18083,
  billing: 18084,
} as const;

export type ServiceName = keyof typeof SERVICE_PORTS;

/** A service's base URL in the local stack: the default of the settings that name it. */
export function localServiceUrl(service: ServiceName): string {
  return `http://127.0.0.1:${SERVICE_PORTS[service]}`;
}
