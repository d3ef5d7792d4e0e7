// Who is calling: the SDK's name and version, sent with every request so that Herald's logs can
// tell SDK versions apart. The version is the package's own (a unit test compares them).
export const SDK_VERSION = '0.1.0';

const product = `herald-client-js/${SDK_VERSION}`;
const nodeVersion = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions
  ?.node;

/**
 * `X-Herald-Client` everywhere; in Node.js the `User-Agent` too (a browser sends its own, which
 * scripts may not replace).
 */
export const CLIENT_HEADERS: Readonly<Record<string, string>> =
  nodeVersion === undefined
    ? { 'x-herald-client': product }
    : { 'x-herald-client': product, 'user-agent': `${product} node/${nodeVersion}` };
