// The Kafka disk-full drill (docs/reliability.md#a-full-disk): a Kafka node of its own with its
// log directory on a small tmpfs, and the events service and a relay on a PostgreSQL of the
// drill's own, the relay publishing to that node. Events are recorded until Kafka's disk is full
// and it has stopped taking them, and for a while after; then space is freed and Kafka is started
// again if it stopped, as its supervisor would. Recording must go on answering 202 throughout
// (the outbox holds what cannot be published), every Event answered 202 must be stored once and
// be on Kafka, and the relay must publish the backlog without being restarted. Copies on Kafka
// beyond the first are counted. Everything it starts it stops; root only (mount).
import fs from 'node:fs';
import path from 'node:path';
import { kafkaClient, openReader, topicEnd } from '@herald/chaos/oracle.mjs';
import { host } from '@herald/stack/config.mjs';
import { kafkaAnswers } from '@herald/stack/kafka-metadata.mjs';
import { startKafkaNode } from '@herald/stack/kafka.mjs';
import { freePort } from '@herald/stack/net.mjs';
import { livePid, readPid, stopProcess } from '@herald/stack/processes.mjs';
import {
  checkStored,
  createLoad,
  drillContact,
  fillLeaving,
  mountSmallDisk,
  sleep,
  startEventsOnOwnDatabase,
} from './small-disk.mjs';
import { inScratch } from './undo.mjs';

/**
 * @typedef {object} KafkaDiskFullResult
 * @property {Record<string, number>} statuses  every answer of the drill, by status
 * @property {number} acked        Events answered 202
 * @property {number} missing      of those, not in PostgreSQL
 * @property {number} doubled      of those, in it more than once
 * @property {string} kafkaFailure what Kafka did on the full disk
 * @property {boolean} kafkaRestarted  Kafka had exited or stopped answering, and was started
 *   again
 * @property {number} backlog      Events waiting in the outbox when space was freed
 * @property {number} publishSeconds  from Kafka answering again until the outbox was empty
 * @property {number} outboxLeft   messages still unpublished at the end
 * @property {number} notOnKafka   Events answered 202 with no message on Kafka
 * @property {number} kafkaDuplicates  copies on Kafka beyond the first
 * @property {boolean} ok
 */

/** Load recorded after Kafka stopped taking Events, which the relay must publish later. */
const BACKLOG_SECONDS = 5;

/**
 * A Kafka node in `scratch` with its log directory in `dataFolder`; stopped by `undo`.
 * @param {string} scratch
 * @param {string} dataFolder
 * @param {import('./undo.mjs').Undo} undo
 */
async function startOwnKafka(scratch, dataFolder, undo) {
  const [client, controller, linked] = [await freePort(), await freePort(), await freePort()];
  /** @type {import('@herald/stack/kafka.mjs').KafkaNode} */
  const node = {
    base: path.join(scratch, 'kafka'),
    data: dataFolder,
    properties: path.join(scratch, 'kafka', 'server.properties'),
    clusterIdFile: path.join(scratch, 'kafka', 'cluster-id'),
    pidFile: path.join(scratch, 'kafka.pid'),
    logFile: path.join(scratch, 'kafka.log'),
    heapOpts: '-Xms128m -Xmx384m',
    ports: { client, controller, linked, link: linked, exporter: null },
  };
  /** Kafka's own words for a failed log directory, the first time its log has them. */
  const said = () => {
    const text = fs.existsSync(node.logFile) ? fs.readFileSync(node.logFile, 'utf8') : '';
    const line = text
      .split('\n')
      .find((l) => /No space left on device|Shutdown broker because|log dir.* failed/i.test(l));
    return line?.replace(/^.*?(ERROR|WARN|FATAL)\s*/, '').slice(0, 200) ?? '';
  };
  const stop = async () => {
    const pid = readPid(node.pidFile);
    if (pid) await stopProcess(pid, { signal: 'SIGTERM', timeoutMs: 20_000, group: true });
  };
  undo.push(stop);
  await startKafkaNode(node);
  return {
    brokers: `${host}:${client}`,
    node,
    alive: () => livePid(node.pidFile, 'kafka.Kafka') !== null,
    said,
    answers: () => kafkaAnswers(1000, client),
    stop,
    start: () => startKafkaNode(node),
  };
}

/**
 * Until Kafka has stopped taking the relay's messages (its process gone, or the outbox growing
 * for 5 s on end while Events are recorded), at most 120 s. Returns what was seen.
 * @param {{ alive: () => boolean }} kafka
 * @param {import('pg').Pool} db
 */
async function untilKafkaRefuses(kafka, db) {
  const outbox = async () => (await db.query('select count(*)::int as n from outbox')).rows[0].n;
  const deadline = Date.now() + 120_000;
  let growingSince = 0;
  let previous = await outbox();
  while (Date.now() < deadline) {
    await sleep(500);
    if (!kafka.alive()) return 'its process exited';
    const now = await outbox();
    growingSince = now > previous && now > 0 ? growingSince || Date.now() : 0;
    previous = now;
    if (growingSince && Date.now() - growingSince > 5_000) return 'it stopped taking messages';
  }
  throw new Error('Kafka took every message for 120 s: its disk never filled');
}

/**
 * The Events of `tenantId` on the drill's Kafka, read from the start of the topic: those answered
 * 202 and absent there, and the copies beyond the first.
 * @param {string} brokers
 * @param {string} tenantId
 * @param {Set<string>} acked
 */
async function checkPublished(brokers, tenantId, acked) {
  const kafka = kafkaClient('herald-drill-kafka-disk-full', brokers);
  const start = (await topicEnd(kafka)).map((p) => ({ partition: p.partition, offset: 0 }));
  const reader = await openReader(kafka, tenantId, start);
  try {
    const messages = await reader.waitFor({
      enough: (list) => new Set(list.map((m) => m.value.dedupKey)).size >= acked.size,
      deadline: Date.now() + 30_000,
    });
    const seen = new Set(messages.map((m) => m.value.dedupKey));
    const copies = new Map();
    for (const m of messages) copies.set(m.value.eventId, (copies.get(m.value.eventId) ?? 0) + 1);
    return {
      notOnKafka: [...acked].filter((k) => !seen.has(k)).length,
      kafkaDuplicates: [...copies.values()].reduce((sum, n) => sum + n - 1, 0),
    };
  } finally {
    await reader.close();
  }
}

/**
 * @param {{ sizeMb?: number, log?: (line: string) => void }} [options]  `sizeMb`: the tmpfs
 * @returns {Promise<KafkaDiskFullResult>}
 */
export async function runKafkaDiskFullDrill({ sizeMb = 96, log = () => {} } = {}) {
  return inScratch('kafka-disk-full', log, async (scratch, undo) => {
    const mount = await mountSmallDisk(scratch, sizeMb, undo);
    const kafkaData = path.join(mount, 'kafka');
    fs.mkdirSync(kafkaData);
    const kafka = await startOwnKafka(scratch, kafkaData, undo);
    const drill = await startEventsOnOwnDatabase(scratch, path.join(scratch, 'postgres'), undo, {
      env: { KAFKA_BROKERS: kafka.brokers },
    });
    log(`Kafka on a ${sizeMb} MiB tmpfs (${kafka.brokers}); events at ${drill.eventsUrl}`);
    const who = await drillContact('kafka-disk-full');

    const freeSpace = fillLeaving(mount, 12);
    // About 2 MiB of Events a second: what waits while Kafka is away must fit on its disk.
    const load = createLoad(drill.eventsUrl, who, { lanes: 1, pauseMs: 100 });
    undo.push(() => load.stop());
    const refused = await untilKafkaRefuses(kafka, drill.db);
    const kafkaFailure = [refused, kafka.said()].filter(Boolean).join('; Kafka logged: ');
    log(`Kafka's disk full: ${kafkaFailure}; ${load.acked.size} Events answered 202 so far`);
    await sleep(BACKLOG_SECONDS * 1000);

    freeSpace();
    const backlog = (await drill.db.query('select count(*)::int as n from outbox')).rows[0].n;
    // A supervisor restarts a broker that exited or stopped answering. (One that answered while
    // its log directory stayed offline would leave the outbox undrained: the check below fails.)
    await sleep(2_000);
    const kafkaRestarted = !kafka.alive() || !(await kafka.answers());
    if (kafkaRestarted) {
      log('Kafka stopped on the full disk: starting it again, as its supervisor would');
      await kafka.stop();
      await kafka.start();
    }
    const kafkaBackAt = Date.now();
    await sleep(2_000);
    await load.stop();
    log(`space freed with ${backlog} messages waiting; load stopped`);

    const { missing, doubled, outboxLeft } = await checkStored(
      drill.db,
      who.tenantId,
      load.acked,
      120_000,
    );
    const publishSeconds = (Date.now() - kafkaBackAt) / 1000;
    log(`outbox ${outboxLeft === 0 ? 'empty' : `still ${outboxLeft}`} after ${publishSeconds} s`);
    if (!kafka.alive()) throw new Error('Kafka stopped again while the backlog was published');
    const { notOnKafka, kafkaDuplicates } = await checkPublished(
      kafka.brokers,
      who.tenantId,
      load.acked,
    );
    const s = load.statuses;
    const ok =
      load.acked.size > 0 &&
      Object.keys(s).every((status) => ['202', '429'].includes(status)) &&
      missing === 0 &&
      doubled === 0 &&
      outboxLeft === 0 &&
      notOnKafka === 0;
    return {
      statuses: s,
      acked: load.acked.size,
      missing,
      doubled,
      kafkaFailure,
      kafkaRestarted,
      backlog,
      publishSeconds,
      outboxLeft,
      notOnKafka,
      kafkaDuplicates,
      ok,
    };
  });
}

/**
 * The drill's result as lines for a person.
 * @param {KafkaDiskFullResult} r
 */
export function formatKafkaDiskFull(r) {
  const answers = Object.entries(r.statuses)
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');
  return [
    `answers while Kafka's disk filled and after: ${answers}`,
    `Kafka on the full disk: ${r.kafkaFailure}` +
      (r.kafkaRestarted ? '; started again once space was freed' : ''),
    `answered 202: ${r.acked}; missing ${r.missing}, doubled ${r.doubled} in PostgreSQL`,
    `backlog of ${r.backlog} messages published ${r.publishSeconds.toFixed(1)} s after Kafka answered again; outbox left ${r.outboxLeft}`,
    `on Kafka: ${r.notOnKafka} missing, ${r.kafkaDuplicates} copies beyond the first`,
    `kafka-disk-full drill: ${r.ok ? 'PASS' : 'FAIL'}`,
  ].join('\n');
}
