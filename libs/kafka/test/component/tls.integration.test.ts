// Kafka over TLS with SASL, as managed offerings serve it: a throwaway KRaft broker from the
// local stack's jars (<data dir>/kafka/libs, fetched by `npm start`) with a SASL_SSL listener for
// localhost, its certificate from a CA made here. Its SCRAM users are written into its metadata
// when the storage is formatted (`kafka-storage format --add-scram`); its PLAIN user is in the
// listener's JAAS settings. The broker's own traffic uses a plain loopback listener.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  createTestPki,
  freePort,
  startProcess,
  stopProcess,
  tempDir,
  waitFor,
  type TestPki,
  type TestProcess,
} from '@herald/jest-preset/throwaway';
import {
  consumeBatches,
  createKafka,
  createProducer,
  ensureTopics,
  kafkaConnection,
  type KafkaConfig,
} from '../../src/index.js';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const libs = path.join(
  path.resolve(repoRoot, process.env.HERALD_DATA_DIR || '.herald'),
  'kafka',
  'libs',
);
const java = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';

const SCRAM = { username: 'herald-scram', password: 'scram-test-password' };
const PLAIN = { username: 'herald-plain', password: 'plain-test-password' };

let dir: string;
let pki: TestPki;
let port: number;
let broker: TestProcess | undefined;

const classpath = (log4j: string) => [
  `-Dlog4j2.configurationFile=${path.join(repoRoot, 'infra', 'kafka', log4j)}`,
  '-cp',
  `${libs}/*`,
];

function config(overrides: Partial<KafkaConfig>): KafkaConfig {
  return {
    KAFKA_BROKERS: [`localhost:${port}`],
    KAFKA_TLS: true,
    KAFKA_CA_FILE: pki.caFile,
    ...overrides,
  };
}

const scram512 = (password = SCRAM.password) =>
  config({
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
    KAFKA_SASL_USERNAME: SCRAM.username,
    KAFKA_SASL_PASSWORD: password,
  });

beforeAll(async () => {
  if (!fs.existsSync(path.join(libs, '.pom.sha256'))) {
    throw new Error(`Kafka's jars are not in ${libs}: start the local stack once (npm start)`);
  }
  dir = tempDir('kafka-tls');
  pki = await createTestPki(dir);
  const [internalPort, controllerPort] = await Promise.all([freePort(), freePort()]);
  port = await freePort();
  // A PEM keystore: the key (PKCS#8, unencrypted) and its certificate in one file.
  const keystore = path.join(dir, 'keystore.pem');
  fs.writeFileSync(
    keystore,
    fs.readFileSync(pki.serverKey, 'utf8') + fs.readFileSync(pki.serverCert, 'utf8'),
  );
  const properties = path.join(dir, 'server.properties');
  const jaas = (mechanism: string, module: string, users = '') =>
    `listener.name.sasl_ssl.${mechanism}.sasl.jaas.config=org.apache.kafka.common.security.${module} required${users};`;
  fs.writeFileSync(
    properties,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
      `listeners=SASL_SSL://localhost:${port},INTERNAL://127.0.0.1:${internalPort},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=SASL_SSL://localhost:${port},INTERNAL://127.0.0.1:${internalPort}`,
      'inter.broker.listener.name=INTERNAL',
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,SASL_SSL:SASL_SSL',
      'sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
      jaas('plain', 'plain.PlainLoginModule', ` user_${PLAIN.username}="${PLAIN.password}"`),
      jaas('scram-sha-256', 'scram.ScramLoginModule'),
      jaas('scram-sha-512', 'scram.ScramLoginModule'),
      'ssl.keystore.type=PEM',
      `ssl.keystore.location=${keystore}`,
      `log.dirs=${path.join(dir, 'data')}`,
      'auto.create.topics.enable=false',
      'num.partitions=1',
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'share.coordinator.state.topic.replication.factor=1',
      'share.coordinator.state.topic.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
      'num.network.threads=1',
      'num.io.threads=2',
      '',
    ].join('\n'),
  );
  // Kafka's id form: 16 random bytes, base64url, never starting with '-'.
  const clusterId = `A${randomBytes(16).toString('base64url').slice(1)}`;
  const scram = (mechanism: string) =>
    `${mechanism}=[name=${SCRAM.username},password=${SCRAM.password}]`;
  await run(java, [
    '-Xmx256m',
    ...classpath('tools-log4j2.properties'),
    'kafka.tools.StorageTool',
    'format',
    '-t',
    clusterId,
    '-c',
    properties,
    '--add-scram',
    scram('SCRAM-SHA-256'),
    '--add-scram',
    scram('SCRAM-SHA-512'),
  ]);
  broker = startProcess({
    command: java,
    args: [
      '-Xms128m',
      '-Xmx512m',
      '-XX:+UseSerialGC',
      // A short-lived broker: starting fast matters more than peak speed.
      '-XX:TieredStopAtLevel=1',
      `-Dkafka.logs.dir=${dir}`,
      ...classpath('log4j2.properties'),
      'kafka.Kafka',
      properties,
    ],
    cwd: dir,
    logFile: path.join(dir, 'kafka.log'),
  });
  const probe = createKafka({
    ...kafkaConnection(scram512()),
    clientId: 'kafka-tls-probe',
    retries: 0,
  });
  await waitFor(
    async () => {
      const admin = probe.admin();
      try {
        await admin.listTopics();
        return true;
      } finally {
        await admin.close();
      }
    },
    { what: 'the SASL_SSL broker to answer', child: broker, timeoutMs: 45_000 },
  );
}, 60_000);

afterAll(async () => {
  await stopProcess(broker, { timeoutMs: 15_000 });
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** The messages of an error and of every error it holds (the client nests its failures). */
function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const nested = [
    ...((err as { errors?: unknown[] }).errors ?? []),
    ...(err.cause === undefined ? [] : [err.cause]),
  ];
  return [err.message, ...nested.map(errorText)].join('\n');
}

/** What `work` rejected with, as errorText tells it. */
async function failure(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (err) {
    return errorText(err);
  }
  throw new Error('it did not fail');
}

/** Entries the client logged, for proof that no password is among them. */
function capturingLogger() {
  const lines: unknown[] = [];
  const log = (obj: object, msg?: string) => lines.push({ obj, msg });
  return { lines, logger: { error: log, warn: log, info: log, debug: log } };
}

describe('Kafka with TLS and SASL', () => {
  it('when SCRAM-SHA-512 over verified TLS, then the migrations’ admin creates a topic, a producer writes to it and a consumer reads it back', async () => {
    const kafka = createKafka({ ...kafkaConnection(scram512()), clientId: 'kafka-tls-test' });
    const topic = `test.kafka-tls.${randomUUID()}`;
    expect(
      await ensureTopics(kafka, [{ topic, numPartitions: 1, configEntries: [] }]),
    ).toMatchObject({ created: [topic] });

    const producer = createProducer(kafka);
    await producer.send({ messages: [{ topic, key: 'k', value: 'over TLS' }] });
    await producer.close();

    const consumer = kafka.consumer({ groupId: `test-${randomUUID()}`, maxWaitTime: 250 });
    try {
      const stream = await consumer.consume({ topics: [topic], mode: 'earliest' });
      let value: string | null = null;
      await consumeBatches(stream, (messages) => {
        value = messages[0]!.value;
        void stream.close();
        return Promise.resolve();
      });
      expect(value).toBe('over TLS');
    } finally {
      await consumer.close(true);
    }
  }, 30_000);

  it.each([
    ['plain', PLAIN],
    ['scram-sha-256', SCRAM],
  ] as const)(
    'when SASL %s over verified TLS, then the broker takes the user',
    async (mechanism, user) => {
      const kafka = createKafka({
        ...kafkaConnection(
          config({
            KAFKA_SASL_MECHANISM: mechanism,
            KAFKA_SASL_USERNAME: user.username,
            KAFKA_SASL_PASSWORD: user.password,
          }),
        ),
        clientId: 'kafka-tls-test',
      });
      const producer = createProducer(kafka);
      try {
        const topic = `test.kafka-tls.${randomUUID()}`;
        await ensureTopics(kafka, [{ topic, numPartitions: 1 }]);
        const { offsets } = await producer.send({ messages: [{ topic, value: mechanism }] });
        expect(offsets).toEqual([{ topic, partition: 0, offset: 0n }]);
      } finally {
        await producer.close();
      }
    },
  );

  it('when the SCRAM password is wrong, then the broker refuses it, saying so, and the logs never hold it', async () => {
    const { lines, logger } = capturingLogger();
    const kafka = createKafka({
      ...kafkaConnection(scram512('not-the-password')),
      clientId: 'kafka-tls-test',
      logger,
      retries: 0,
    });
    expect(await failure(ensureTopics(kafka, []))).toMatch(/SASL authentication failed/);
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain('not-the-password');
  });

  it('when the PLAIN password is wrong, then the broker refuses it', async () => {
    const kafka = createKafka({
      ...kafkaConnection(
        config({
          KAFKA_SASL_MECHANISM: 'plain',
          KAFKA_SASL_USERNAME: PLAIN.username,
          KAFKA_SASL_PASSWORD: 'not-the-password',
        }),
      ),
      clientId: 'kafka-tls-test',
      retries: 0,
    });
    const admin = kafka.admin();
    expect(await failure(admin.listTopics())).toMatch(/SASL authentication failed/);
    await admin.close();
  });

  it('when the CA is another one, then the broker’s certificate is refused', async () => {
    // No retries: an untrusted certificate stays untrusted (createKafka would retry for ~20 s).
    const admin = createKafka({
      ...kafkaConnection({ ...scram512(), KAFKA_CA_FILE: pki.otherCaFile }),
      clientId: 'kafka-tls-test',
      retries: 0,
    }).admin();
    expect(await failure(admin.listTopics())).toMatch(
      /self-signed certificate in certificate chain|unable to verify the first certificate/,
    );
    await admin.close();
  });
});
