// Where the console is: the part of the URL after `#` (`#/tenants/<id>/keys`). Only ids, never
// the token, appear there.
import { useEffect, useState } from 'preact/hooks';

export const TABS = [
  'overview',
  'keys',
  'organizations',
  'event-names',
  'contacts',
  'live',
] as const;
export type Tab = (typeof TABS)[number];

export type Route = { page: 'tenants' } | { page: 'tenant'; tenantId: string; tab: Tab };

export function parseRoute(hash: string): Route {
  const [, first, tenantId, tab] = hash.replace(/^#/, '').split('/');
  if (first === 'tenants' && tenantId) {
    const known = TABS.find((t) => t === tab);
    return { page: 'tenant', tenantId: decodeURIComponent(tenantId), tab: known ?? 'overview' };
  }
  return { page: 'tenants' };
}

export const tenantHref = (tenantId: string, tab: Tab = 'overview') =>
  `#/tenants/${encodeURIComponent(tenantId)}${tab === 'overview' ? '' : `/${tab}`}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
