import { describe, expect, it } from '@jest/globals';
import {
  MESSAGE_SCHEMAS,
  TOPIC_SETTINGS,
  TOPICS,
  contactChangedMessage,
  contactErasedMessage,
  subscriptionChangedMessage,
  tenantDeletedMessage,
} from '../src/index.js';

const contact = {
  id: '7d7a4c52-5b7e-4d8a-9a53-2b5f3c1e9d10',
  email: 'ada@example.com',
  createdAt: '2026-11-22T01:24:46.123Z',
  updatedAt: '2026-11-22T01:24:46.123Z',
};

describe('message contracts', () => {
  it('when a topic is declared, then it has settings and a schema', () => {
    for (const topic of Object.values(TOPICS)) {
      expect(TOPIC_SETTINGS[topic]).toBeDefined();
      expect(MESSAGE_SCHEMAS[topic]).toBeDefined();
    }
  });

  it('when a changed message carries a version and the contact, then it parses', () => {
    const message = {
      version: 1,
      type: 'contact.created',
      messageId: '0b8f0f38-0c2c-4a4e-9c65-5d8c1b3a2e11',
      tenantId: '1c3e5a7b-2d4f-4b6a-8c0e-9f1a3b5c7d9e',
      occurredAt: '2026-11-22T01:24:46.123Z',
      contact,
    };
    expect(contactChangedMessage.parse(message)).toEqual(message);
    expect(() => contactChangedMessage.parse({ ...message, version: 2 })).toThrow();
  });

  it('when an erased message carries personal data, then the extra fields are dropped', () => {
    const parsed = contactErasedMessage.parse({
      version: 1,
      type: 'contact.erased',
      messageId: '0b8f0f38-0c2c-4a4e-9c65-5d8c1b3a2e11',
      tenantId: '1c3e5a7b-2d4f-4b6a-8c0e-9f1a3b5c7d9e',
      contactId: contact.id,
      occurredAt: '2026-11-22T01:24:46.123Z',
      email: 'ada@example.com',
    });
    expect(JSON.stringify(parsed)).not.toContain('ada@example.com');
  });

  it('when a subscription change carries both versions, then it parses; a bad state does not', () => {
    const message = {
      schemaVersion: 1,
      type: 'subscription.changed',
      tenantId: '1c3e5a7b-2d4f-4b6a-8c0e-9f1a3b5c7d9e',
      state: 'suspended',
      consecutiveFailures: 3,
      version: 3,
      changedAt: '2026-11-22T01:24:46.123Z',
    };
    expect(subscriptionChangedMessage.parse(message)).toEqual(message);
    expect(TOPIC_SETTINGS[TOPICS.subscriptionsChanged].config['cleanup.policy']).toBe('compact');
    expect(() => subscriptionChangedMessage.parse({ ...message, state: 'cancelled' })).toThrow();
    expect(() => subscriptionChangedMessage.parse({ ...message, schemaVersion: 2 })).toThrow();
    expect(() => subscriptionChangedMessage.parse({ ...message, version: 0 })).toThrow();
  });

  it('when a Tenant deletion is announced, then the ids and times parse, on a topic that is not compacted', () => {
    const message = {
      version: 1,
      type: 'tenant.deleted',
      messageId: '0b8f0f38-0c2c-4a4e-9c65-5d8c1b3a2e11',
      tenantId: '1c3e5a7b-2d4f-4b6a-8c0e-9f1a3b5c7d9e',
      requestedAt: '2026-11-22T01:24:16.123Z',
      occurredAt: '2026-11-22T01:24:46.123Z',
    };
    expect(tenantDeletedMessage.parse(message)).toEqual(message);
    expect(TOPICS.tenantsDeleted).toBe('herald.tenants.deleted');
    expect(TOPIC_SETTINGS[TOPICS.tenantsDeleted].config['cleanup.policy']).toBe('delete');
    expect(() => tenantDeletedMessage.parse({ ...message, type: 'tenant.erased' })).toThrow();
    expect(() => tenantDeletedMessage.parse({ ...message, tenantId: 'acme' })).toThrow();
  });
});
