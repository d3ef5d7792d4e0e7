// The contacts service's settings: it refuses to start without the services that hold data about
// Contacts, since an erasure would otherwise answer 204 and leave their data behind.
import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '@herald/config';
import { loadContactsConfig } from '../../src/config.js';

const SECRETS = {
  ADMIN_TOKEN: 'a'.repeat(32),
  SERVICE_TOKEN: 's'.repeat(32),
  SERVICE_CALLERS: `events:${'e'.repeat(32)}`,
};

describe('CONTACT_DATA_SERVICES', () => {
  it('when it lists base URLs, then the config holds each one', () => {
    const config = loadContactsConfig({
      ...SECRETS,
      CONTACT_DATA_SERVICES: 'http://127.0.0.1:18083, http://herald-events:80',
    });

    expect(config.CONTACT_DATA_SERVICES).toEqual([
      'http://127.0.0.1:18083',
      'http://herald-events:80',
    ]);
  });

  it.each([
    ['unset', {}, 'unset'],
    ['empty', { CONTACT_DATA_SERVICES: '' }, 'unset'],
    ['only commas and spaces', { CONTACT_DATA_SERVICES: ' , ' }, 'got a value that does not fit'],
  ])('when it is %s, then the service refuses to start naming it', (_what, env, got) => {
    let error: unknown;
    try {
      loadContactsConfig({ ...SECRETS, ...env });
    } catch (e) {
      error = e;
    }

    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      `CONTACT_DATA_SERVICES: must list the base URLs of the services holding data about Contacts (the events service); without them an erasure would leave their data behind (${got})`,
    ]);
  });

  it('when an entry is not a URL, then the service refuses to start naming it', () => {
    expect(() => loadContactsConfig({ ...SECRETS, CONTACT_DATA_SERVICES: 'events' })).toThrow(
      /^invalid configuration:\n {2}- CONTACT_DATA_SERVICES\.0: /,
    );
  });
});

describe('the access tokens', () => {
  const env = { ...SECRETS, CONTACT_DATA_SERVICES: 'http://127.0.0.1:18083' };

  it('when ADMIN_TOKEN, SERVICE_TOKEN and the callers are all different, then the config holds them', () => {
    const config = loadContactsConfig(env);

    expect(config.SERVICE_TOKEN).toBe(SECRETS.SERVICE_TOKEN);
    expect(config.SERVICE_CALLERS.names()).toEqual(['events']);
    expect(config.SERVICE_CALLERS.identify('e'.repeat(32))).toBe('events');
  });

  it('when ADMIN_TOKEN equals SERVICE_TOKEN, then the service refuses to start', () => {
    expect(() => loadContactsConfig({ ...env, SERVICE_TOKEN: SECRETS.ADMIN_TOKEN })).toThrow(
      /ADMIN_TOKEN: must differ from SERVICE_TOKEN/,
    );
  });

  it("when ADMIN_TOKEN is a caller's token, then the service refuses to start", () => {
    expect(() =>
      loadContactsConfig({ ...env, SERVICE_CALLERS: `events:${SECRETS.ADMIN_TOKEN}` }),
    ).toThrow(/ADMIN_TOKEN: must differ from every token in SERVICE_CALLERS/);
  });

  it('when two callers share a token, then the service refuses to start', () => {
    expect(() =>
      loadContactsConfig({
        ...env,
        SERVICE_CALLERS: `events:${'e'.repeat(32)},billing:${'e'.repeat(32)}`,
      }),
    ).toThrow(/SERVICE_CALLERS: entry 2: billing has the same token as events/);
  });
});
