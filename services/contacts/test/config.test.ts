// The contacts service's settings: it refuses to start without the services that hold data about
// Contacts, since an erasure would otherwise answer 204 and leave their data behind.
import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '@herald/config';
import { loadContactsConfig } from '../src/config.js';

const SECRETS = { ADMIN_TOKEN: 'a'.repeat(32), SERVICE_TOKEN: 's'.repeat(32) };

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
