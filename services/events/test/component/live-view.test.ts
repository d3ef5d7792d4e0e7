// GET /admin/v1/tenants/{tenantId}/events/live: the console's live view of a Tenant's Events, as
// Server-Sent Events, read as a browser's fetch reads it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ADMIN_TOKEN, startEventsService, type TestEventsService } from '../support.js';

let svc: TestEventsService;
beforeAll(async () => {
  svc = await startEventsService({
    deps: { liveView: { pollMs: 100, maxPerSecond: 5, idleMs: 300 } },
  });
});
afterAll(() => svc.close());

interface Message {
  event: string;
  id?: string;
  data?: Record<string, unknown>;
  comment?: string;
}

/** A live view opened with the admin token; its messages as they come, and how it ended. */
async function openLiveView(tenantId: string, service: TestEventsService = svc) {
  const stop = new AbortController();
  const res = await fetch(`${service.url}/admin/v1/tenants/${tenantId}/events/live`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    signal: stop.signal,
  });
  const messages: Message[] = [];
  let buffer = '';
  let ended: 'done' | 'error' | null = null;
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const message: Message = { event: 'message' };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) message.comment = line.slice(1).trim();
            else if (line.startsWith('event: ')) message.event = line.slice(7);
            else if (line.startsWith('id: ')) message.id = line.slice(4);
            else if (line.startsWith('data: ')) message.data = JSON.parse(line.slice(6));
          }
          messages.push(message);
        }
      }
      ended = 'done';
    } catch {
      // aborted by the test, or cut
      ended = 'error';
    }
  })();
  return {
    res,
    messages,
    ended: () => ended,
    reading,
    recorded: () => messages.filter((m) => m.event === 'recorded'),
    waitFor: async (check: () => boolean, ms = 2_000) => {
      const until = Date.now() + ms;
      while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      return check();
    },
    close: async () => {
      stop.abort();
      await reading;
    },
  };
}

async function tenantWithContact() {
  const tenant = svc.newTenant();
  const contact = await svc.contacts.createContact(tenant.tenantId, { externalId: 'live-1' });
  return { ...tenant, contact };
}

const eventOf = (contactId: string, eventName: string, properties?: unknown) => ({
  contactId,
  eventName,
  occurredAt: new Date().toISOString(),
  dedupKey: randomUUID(),
  ...(properties === undefined ? {} : { properties }),
});

describe('the live view', () => {
  it("when Events are recorded in two Tenants, then A's view shows A's within 2 s, with their properties as sent, and none of B's", async () => {
    const a = await tenantWithContact();
    const b = await tenantWithContact();
    const view = await openLiveView(a.tenantId);
    try {
      expect(view.res.status).toBe(200);
      expect(view.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      expect(view.res.headers.get('cache-control')).toBe('no-store');
      expect(view.res.headers.get('x-accel-buffering')).toBe('no');

      await svc.record('by-contact-id', b.token, eventOf(b.contact.id, 'Secret Of B'));
      const sentAt = Date.now();
      const recorded = await svc.record(
        'by-contact-id',
        a.token,
        eventOf(a.contact.id, 'Order Completed', { total: 12.5, sku: 'A-1' }),
      );
      expect(recorded.status).toBe(202);

      expect(await view.waitFor(() => view.recorded().length === 1)).toBe(true);
      expect(Date.now() - sentAt).toBeLessThan(2_000);
      await svc.record('by-contact-id', b.token, eventOf(b.contact.id, 'Secret Of B'));
      await new Promise((r) => setTimeout(r, 400));

      const [message] = view.recorded();
      expect(message!.id).toBe(message!.data!.id);
      expect(message!.data).toEqual({
        id: expect.any(String),
        eventName: 'Order Completed',
        contactId: a.contact.id,
        organizationExternalId: null,
        occurredAt: expect.any(String),
        receivedAt: expect.any(String),
        properties: '{"total":12.5,"sku":"A-1"}',
      });
      expect(view.recorded()).toHaveLength(1);
      expect(JSON.stringify(view.messages)).not.toContain('Secret Of B');
    } finally {
      await view.close();
    }
  });

  it('when Events were recorded before the view opened, then it shows none of them', async () => {
    const a = await tenantWithContact();
    await svc.record('by-contact-id', a.token, eventOf(a.contact.id, 'Before'));
    const view = await openLiveView(a.tenantId);
    try {
      await new Promise((r) => setTimeout(r, 400));
      expect(view.recorded()).toEqual([]);
    } finally {
      await view.close();
    }
  });

  it('when a Tenant records faster than the cap, then at most the cap a second is sent and a skipped message counts the rest', async () => {
    const a = await tenantWithContact();
    const view = await openLiveView(a.tenantId);
    try {
      const batch = Array.from({ length: 30 }, (_, i) => eventOf(a.contact.id, `Burst ${i}`));
      expect((await svc.record('by-contact-id', a.token, batch)).status).toBe(202);
      const skippedCount = () =>
        view.messages
          .filter((m) => m.event === 'skipped')
          .reduce((n, m) => n + (m.data!.count as number), 0);
      expect(await view.waitFor(() => view.recorded().length + skippedCount() === 30)).toBe(true);
      // the cap (5 a second) and its first second's allowance
      expect(view.recorded().length).toBeLessThanOrEqual(10);
      expect(skippedCount()).toBeGreaterThanOrEqual(20);
      expect(new Set(view.recorded().map((m) => m.id)).size).toBe(view.recorded().length);
    } finally {
      await view.close();
    }
  });

  it('when nothing is recorded for a while, then a comment line keeps the stream open', async () => {
    const a = await tenantWithContact();
    const view = await openLiveView(a.tenantId);
    try {
      expect(await view.waitFor(() => view.messages.some((m) => m.comment === 'idle'))).toBe(true);
    } finally {
      await view.close();
    }
  });

  it('when the Tenant is unknown, then 404; without the admin token, 401', async () => {
    const unknown = await svc.adminGet(`/tenants/${randomUUID()}/events/live`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ code: 'not_found', message: 'no such tenant' });

    const { tenantId } = svc.newTenant();
    const anonymous = await svc.request('GET', `/admin/v1/tenants/${tenantId}/events/live`);
    expect(anonymous.status).toBe(401);
  });

  it('when 16 views are open, then a 17th is 503 until one closes', async () => {
    const { tenantId } = svc.newTenant();
    const views = await Promise.all(Array.from({ length: 16 }, () => openLiveView(tenantId)));
    try {
      expect(views.map((v) => v.res.status)).toEqual(Array(16).fill(200));
      const refused = await svc.adminGet(`/tenants/${tenantId}/events/live`);
      expect(refused.status).toBe(503);
      await views.pop()!.close();
      await new Promise((r) => setTimeout(r, 100));
      const again = await openLiveView(tenantId);
      expect(again.res.status).toBe(200);
      views.push(again);
    } finally {
      await Promise.all(views.map((v) => v.close()));
    }
  });

  it('when a caller leaves while its Tenant is being looked up, then no view stays behind it', async () => {
    const slow = await startEventsService({
      tenantExists: async () => {
        await new Promise((r) => setTimeout(r, 300));
        return true;
      },
      deps: { liveView: { pollMs: 100 } },
    });
    try {
      const { tenantId } = slow.newTenant();
      const gone = new AbortController();
      const leaving = fetch(`${slow.url}/admin/v1/tenants/${tenantId}/events/live`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        signal: gone.signal,
      }).catch(() => null);
      await new Promise((r) => setTimeout(r, 50));
      gone.abort();
      await leaving;
      await new Promise((r) => setTimeout(r, 500));
      const views = await Promise.all(
        Array.from({ length: 16 }, () => openLiveView(tenantId, slow)),
      );
      try {
        expect(views.map((v) => v.res.status)).toEqual(Array(16).fill(200));
      } finally {
        await Promise.all(views.map((v) => v.close()));
      }
    } finally {
      await slow.close();
    }
  });

  it('when the process drains, then its open views end at once, each with the end of its stream', async () => {
    const draining = await startEventsService({ deps: { liveView: { pollMs: 100 } } });
    const { tenantId } = draining.newTenant();
    const view = await openLiveView(tenantId, draining);
    expect(view.res.status).toBe(200);
    await draining.close();
    await view.reading;
    expect(view.ended()).toBe('done');
  });
});
