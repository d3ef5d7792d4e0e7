// The install test's reading of what it installed: `node --test tools/k8s-lab/src/install-test/release.test.mjs`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { publishedEvents } from './release.mjs';

test("a relay pod's published count is the events outbox's, over its topics, and nothing else", () => {
  const exposition = [
    '# HELP outbox_published_total Outbox messages published to Kafka (and deleted from the outbox)',
    '# TYPE outbox_published_total counter',
    'outbox_published_total{outbox_name="events",messaging_destination_name="herald.events.recorded"} 1234',
    'outbox_published_total{outbox_name="events",messaging_destination_name="herald.other"} 6',
    'outbox_published_total{outbox_name="contacts",messaging_destination_name="herald.contacts.changed"} 99',
    'outbox_publish_lag_count{outbox_name="events",messaging_destination_name="herald.events.recorded"} 77',
    '',
  ].join('\n');
  assert.equal(publishedEvents(exposition), 1240);
  assert.equal(publishedEvents('# nothing published yet\n'), 0);
});
