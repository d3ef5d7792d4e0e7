// Kafka: one KRaft node (broker + controller) on 127.0.0.1:59092 / :59093, run from the jars of
// infra/kafka/pom.xml that Maven copies into .herald/kafka/libs. The readiness check and the
// topic listing speak Kafka's wire protocol (a Metadata request, kafka-metadata.mjs) from Node,
// so a second `up` starts no JVM.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  dataDir,
  host,
  infraDir,
  kafkaBrokers,
  kafkaLinkPort,
  logDir,
  portEnvVars,
  ports,
  runDir,
} from './config.mjs';
import { findBinaries, javaMajor } from './system-packages.mjs';
import { StackError, say } from './output.mjs';
import { ensureDir, exists, readText, renderTemplate, writeIfChanged } from './files.mjs';
import { livePid, run, sleep, startDetached, stopProcess } from './processes.mjs';
import { assertPortFree } from './net.mjs';
import { kafkaAnswers } from './kafka-metadata.mjs';
import { ensureLibs, javaArgs, jmxExporterJar, kafkaJars } from './kafka-jars.mjs';
import { ensureKafkaTopics, registryTopics } from './kafka-topics.mjs';

export { ensureKafkaTopics, registryTopics };

const component = 'kafka';
const base = path.join(dataDir, 'kafka');
export const kafkaPaths = {
  base,
  ...kafkaJars,
  data: path.join(base, 'data'),
  properties: path.join(base, 'server.properties'),
  clusterIdFile: path.join(base, 'cluster-id'),
  pidFile: path.join(runDir, 'kafka.pid'),
  logFile: path.join(logDir, 'kafka.log'),
  log4j: path.join(infraDir, 'kafka', 'log4j2.properties'),
  jmxExporterConfig: path.join(infraDir, 'kafka', 'jmx-exporter.yaml'),
};

/**
 * One Kafka node: where it keeps its files and the ports it listens on. The stack runs one
 * (`stackNode`); a drill may run another of its own on a filesystem made for it.
 * @typedef {object} KafkaNode
 * @property {string} base            its working folder (settings, cluster id)
 * @property {string} data            log.dirs
 * @property {string} properties      the rendered server.properties
 * @property {string} clusterIdFile
 * @property {string} pidFile
 * @property {string} logFile
 * @property {string} heapOpts        the JVM's heap options
 * @property {{ client: number, controller: number, linked: number, link: number,
 *   exporter: number | null }} ports  `exporter`: the JMX exporter's, or none
 */

/** @type {KafkaNode} */
const stackNode = {
  base,
  data: kafkaPaths.data,
  properties: kafkaPaths.properties,
  clusterIdFile: kafkaPaths.clusterIdFile,
  pidFile: kafkaPaths.pidFile,
  logFile: kafkaPaths.logFile,
  heapOpts: process.env.HERALD_KAFKA_HEAP_OPTS || '-Xms256m -Xmx768m',
  ports: {
    client: ports.kafka,
    controller: ports.kafkaController,
    linked: ports.kafkaLinked,
    link: kafkaLinkPort,
    exporter: ports.kafkaExporter,
  },
};
const MAIN_CLASS = 'kafka.Kafka';

// ---------------------------------------------------------------------------------------------
// Config, storage

/** @param {KafkaNode} node */
function renderProperties(node) {
  return renderTemplate(path.join(infraDir, 'kafka', 'server.properties.template'), {
    HOST: host,
    PORT: node.ports.client,
    LINKED_PORT: node.ports.linked,
    LINK_PORT: node.ports.link,
    CONTROLLER_PORT: node.ports.controller,
    DATA_DIR: node.data,
  });
}

/** @param {KafkaNode} node */
function clusterId(node) {
  let id = readText(node.clusterIdFile)?.trim();
  if (!id) {
    // Kafka's Uuid text form: 16 random bytes, base64url; never starting with '-'.
    do id = randomBytes(16).toString('base64url');
    while (id.startsWith('-'));
    fs.writeFileSync(node.clusterIdFile, `${id}\n`);
  }
  return id;
}

/** @param {KafkaNode} node */
async function formatStorage(bins, node) {
  if (exists(path.join(node.data, 'meta.properties'))) return;
  ensureDir(node.data);
  say('kafka: formatting storage (first start)');
  try {
    await run(
      bins.java,
      [
        ...javaArgs(['-Xmx256m'], kafkaJars.toolsLog4j),
        'kafka.tools.StorageTool',
        'format',
        '-t',
        clusterId(node),
        '-c',
        node.properties,
        '--ignore-formatted',
      ],
      { appendTo: node.logFile, timeoutMs: 120000 },
    );
  } catch (err) {
    throw new StackError(component, `formatting storage failed: ${err.message}`, {
      logFile: node.logFile,
    });
  }
}

export function kafkaPid() {
  return livePid(kafkaPaths.pidFile, MAIN_CLASS);
}

/** The stack's ports are checked by their variables' names, so a clash names what to change. */
async function assertStackPortsFree() {
  await assertPortFree(component, ports.kafka, portEnvVars.kafka);
  await assertPortFree(component, ports.kafkaController, portEnvVars.kafkaController);
  await assertPortFree(component, ports.kafkaLinked, portEnvVars.kafkaLinked);
  await assertPortFree(component, ports.kafkaExporter, portEnvVars.kafkaExporter);
}

/**
 * Formats the node's storage on its first start and starts it; resolves once it answers.
 * @param {{ java: string }} bins
 * @param {KafkaNode} node
 * @param {() => Promise<void>} [assertPortsFree]
 */
async function startBroker(bins, node, assertPortsFree = async () => {}) {
  await assertPortsFree();
  const major = await javaMajor(bins.java);
  if (major < 17) {
    throw new StackError(
      component,
      `Kafka 4 needs Java 17 or newer; ${bins.java} is Java ${major}. Set JAVA_HOME.`,
    );
  }
  await formatStorage(bins, node);
  say(
    `kafka: starting on ${host}:${node.ports.client} (controller ${host}:${node.ports.controller})`,
  );
  const heap = node.heapOpts.split(/\s+/).filter(Boolean);
  const extra = (process.env.HERALD_KAFKA_JAVA_OPTS || '').split(/\s+/).filter(Boolean);
  const jvm = [
    ...heap,
    '-server',
    '-XX:+UseG1GC',
    // 4 MiB regions: G1 allocates an object of half a region or more (a humongous object) in
    // the old generation and starts a concurrent marking cycle for it. A produce request is read
    // into one buffer as large as the request, and the relays send up to 768 KiB at once: with
    // the 1 MiB regions of this heap size nearly every request did so, and marking took a
    // quarter of the broker's CPU under Event load.
    '-XX:G1HeapRegionSize=4m',
    '-XX:MaxGCPauseMillis=20',
    '-XX:InitiatingHeapOccupancyPercent=35',
    '-XX:+ExplicitGCInvokesConcurrent',
    '-XX:+ExitOnOutOfMemoryError',
    '-Djava.awt.headless=true',
    // Keep logging through Kafka's own shutdown hook (its last lines would be lost otherwise).
    '-Dlog4j2.shutdownHookEnabled=false',
    `-Dkafka.logs.dir=${path.dirname(node.logFile)}`,
    // The broker's metrics for Prometheus (infra/kafka/jmx-exporter.yaml), the stack's `kafka` job.
    ...(node.ports.exporter === null
      ? []
      : [
          `-javaagent:${jmxExporterJar()}=${host}:${node.ports.exporter}:${kafkaPaths.jmxExporterConfig}`,
        ]),
    ...extra,
  ];
  const start = () =>
    startDetached({
      component,
      label: 'Kafka',
      cmd: bins.java,
      args: [...javaArgs(jvm, kafkaPaths.log4j), MAIN_CLASS, node.properties],
      cwd: node.base,
      logFile: node.logFile,
      pidFile: node.pidFile,
      banner: 'starting Kafka',
      ready: () => kafkaAnswers(1000, node.ports.client),
      timeoutMs: 180000,
      intervalMs: 300,
      timeoutMessage: 'Kafka did not answer a Metadata request within 180 s',
    });
  const logStart = fs.existsSync(node.logFile) ? fs.statSync(node.logFile).size : 0;
  try {
    await start();
  } catch (error) {
    // The stack's ports lie in Linux's ephemeral range: an outgoing connection (Kafka's own, to
    // its controller) can hold the broker's port for a moment. Once is chance: start again.
    const log = fs.existsSync(node.logFile)
      ? fs.readFileSync(node.logFile, 'utf8').slice(logStart)
      : '';
    if (!/failed to bind to .*Address already in use/.test(log)) throw error;
    say('kafka: its port was taken for a moment (an outgoing connection); starting again');
    await sleep(2000);
    await assertPortsFree();
    await start();
  }
}

/**
 * A Kafka node of the caller's own (a drill's): writes its settings into `node.base`, formats
 * `node.data` on its first start, starts it and creates the registry's topics on it. Stopping
 * it is the caller's (its pid file). The jars must be there (the stack's `up` fetches them).
 * @param {KafkaNode} node
 */
export async function startKafkaNode(node) {
  const java = findBinaries().java;
  if (!java) throw new StackError(component, 'Java is not installed: `npm start` installs it');
  const bins = { java };
  ensureDir(node.base);
  fs.writeFileSync(node.properties, renderProperties(node));
  await startBroker(bins, node);
  await ensureKafkaTopics(bins, registryTopics(), node.ports.client);
}

/**
 * Fetches the jars if needed, writes server.properties, formats storage on first start, starts
 * the broker and waits until it answers. Returns 'started', 'restarted' or 'running'.
 */
export async function ensureKafka(bins) {
  ensureDir(base);
  ensureDir(runDir);
  ensureDir(logDir);
  const libsChanged = await ensureLibs(bins);
  const propsChanged = writeIfChanged(kafkaPaths.properties, renderProperties(stackNode));
  let pid = kafkaPid();
  let result = 'running';
  if (pid && (libsChanged || propsChanged)) {
    say('kafka: jars or settings changed, restarting');
    await stopKafka();
    pid = null;
    result = 'restarted';
  }
  if (!pid) {
    await startBroker(bins, stackNode, assertStackPortsFree);
    if (result === 'running') result = 'started';
  } else if (!(await kafkaAnswers(5000))) {
    // Ours and alive, but not answering yet (e.g. still recovering): give it time.
    const deadline = Date.now() + 120000;
    while (!(await kafkaAnswers(1000))) {
      if (Date.now() > deadline) {
        throw new StackError(
          component,
          `Kafka (pid ${pid}) is running but does not answer on ${kafkaBrokers}`,
          {
            logFile: kafkaPaths.logFile,
          },
        );
      }
      await sleep(500);
    }
  }
  await ensureKafkaTopics(bins, registryTopics());
  return result;
}

export async function stopKafka() {
  const pid = kafkaPid();
  if (!pid) {
    fs.rmSync(kafkaPaths.pidFile, { force: true });
    return 'not running';
  }
  say('kafka: stopping');
  const r = await stopProcess(pid, { signal: 'SIGTERM', timeoutMs: 30000, group: true });
  fs.rmSync(kafkaPaths.pidFile, { force: true });
  return r;
}

export async function kafkaStatus() {
  const pid = kafkaPid();
  const ok = pid ? await kafkaAnswers() : false;
  return {
    component,
    state: ok ? 'running' : pid ? 'not answering' : 'stopped',
    pid,
    address: `${kafkaBrokers} (controller :${ports.kafkaController})`,
    logFile: kafkaPaths.logFile,
    ok,
  };
}
