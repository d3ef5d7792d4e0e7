// Kafka: one KRaft node (broker + controller) on 127.0.0.1:59092 / :59093, run from the jars of
// infra/kafka/pom.xml that Maven copies into .herald/kafka/libs. The readiness check and the
// topic listing speak Kafka's wire protocol (a Metadata request, kafka-metadata.mjs) from Node,
// so a second `up` starts no JVM.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
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
  stackServices,
} from './config.mjs';
import { javaMajor } from './system-packages.mjs';
import { StackError, say } from './output.mjs';
import { ensureDir, exists, readText, renderTemplate, sha256, writeIfChanged } from './files.mjs';
import { livePid, run, sleep, startDetached, stopProcess } from './processes.mjs';
import { assertPortFree } from './net.mjs';
import { kafkaAnswers, kafkaMetadata } from './kafka-metadata.mjs';

const component = 'kafka';
const base = path.join(dataDir, 'kafka');
export const kafkaPaths = {
  base,
  pom: path.join(infraDir, 'kafka', 'pom.xml'),
  libs: path.join(base, 'libs'),
  libsStamp: path.join(base, 'libs', '.pom.sha256'),
  data: path.join(base, 'data'),
  properties: path.join(base, 'server.properties'),
  clusterIdFile: path.join(base, 'cluster-id'),
  pidFile: path.join(runDir, 'kafka.pid'),
  logFile: path.join(logDir, 'kafka.log'),
  log4j: path.join(infraDir, 'kafka', 'log4j2.properties'),
  jmxExporterConfig: path.join(infraDir, 'kafka', 'jmx-exporter.yaml'),
  toolsLog4j: path.join(infraDir, 'kafka', 'tools-log4j2.properties'),
};
const MAIN_CLASS = 'kafka.Kafka';

// ---------------------------------------------------------------------------------------------
// Jars, config, storage

function javaArgs(extra, log4j) {
  return [...extra, `-Dlog4j2.configurationFile=${log4j}`, '-cp', `${kafkaPaths.libs}/*`];
}

/** The JMX exporter agent among the jars (infra/kafka/pom.xml). */
function jmxExporterJar() {
  const jar = fs
    .readdirSync(kafkaPaths.libs)
    .find((f) => f.startsWith('jmx_prometheus_javaagent-'));
  if (!jar)
    throw new StackError(component, `no jmx_prometheus_javaagent jar in ${kafkaPaths.libs}`);
  return path.join(kafkaPaths.libs, jar);
}

/** Copies Kafka's runtime classpath into .herald/kafka/libs when missing or the pom changed. */
async function ensureLibs(bins) {
  const pomHash = sha256(fs.readFileSync(kafkaPaths.pom));
  if (readText(kafkaPaths.libsStamp)?.trim() === pomHash) return false;
  if (!bins.mvn)
    throw new StackError(component, 'mvn is needed to fetch Kafka (Debian package maven)');
  say('kafka: fetching jars with Maven (infra/kafka/pom.xml)');
  const tmp = `${kafkaPaths.libs}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    await run(
      bins.mvn,
      [
        '-B',
        '-q',
        '-f',
        kafkaPaths.pom,
        'dependency:copy-dependencies',
        `-DoutputDirectory=${tmp}`,
        '-DincludeScope=runtime',
      ],
      {
        timeoutMs: 15 * 60000,
        // Maven's local repository follows $HOME (Java alone would take the passwd entry's home).
        env: {
          ...process.env,
          MAVEN_OPTS: `${process.env.MAVEN_OPTS ?? ''} -Duser.home=${os.homedir()}`.trim(),
        },
      },
    );
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new StackError(component, `Maven could not fetch Kafka's jars: ${err.message}`);
  }
  fs.writeFileSync(path.join(tmp, '.pom.sha256'), `${pomHash}\n`);
  fs.rmSync(kafkaPaths.libs, { recursive: true, force: true });
  fs.renameSync(tmp, kafkaPaths.libs);
  return true;
}

function renderProperties() {
  return renderTemplate(path.join(infraDir, 'kafka', 'server.properties.template'), {
    HOST: host,
    PORT: ports.kafka,
    LINKED_PORT: ports.kafkaLinked,
    LINK_PORT: kafkaLinkPort,
    CONTROLLER_PORT: ports.kafkaController,
    DATA_DIR: kafkaPaths.data,
  });
}

function clusterId() {
  let id = readText(kafkaPaths.clusterIdFile)?.trim();
  if (!id) {
    // Kafka's Uuid text form: 16 random bytes, base64url; never starting with '-'.
    do id = randomBytes(16).toString('base64url');
    while (id.startsWith('-'));
    fs.writeFileSync(kafkaPaths.clusterIdFile, `${id}\n`);
  }
  return id;
}

async function formatStorage(bins) {
  if (exists(path.join(kafkaPaths.data, 'meta.properties'))) return;
  ensureDir(kafkaPaths.data);
  say('kafka: formatting storage (first start)');
  try {
    await run(
      bins.java,
      [
        ...javaArgs(['-Xmx256m'], kafkaPaths.toolsLog4j),
        'kafka.tools.StorageTool',
        'format',
        '-t',
        clusterId(),
        '-c',
        kafkaPaths.properties,
        '--ignore-formatted',
      ],
      { appendTo: kafkaPaths.logFile, timeoutMs: 120000 },
    );
  } catch (err) {
    throw new StackError(component, `formatting storage failed: ${err.message}`, {
      logFile: kafkaPaths.logFile,
    });
  }
}

export function kafkaPid() {
  return livePid(kafkaPaths.pidFile, MAIN_CLASS);
}

async function startBroker(bins) {
  await assertPortFree(component, ports.kafka, portEnvVars.kafka);
  await assertPortFree(component, ports.kafkaController, portEnvVars.kafkaController);
  await assertPortFree(component, ports.kafkaLinked, portEnvVars.kafkaLinked);
  await assertPortFree(component, ports.kafkaExporter, portEnvVars.kafkaExporter);
  const major = await javaMajor(bins.java);
  if (major < 17) {
    throw new StackError(
      component,
      `Kafka 4 needs Java 17 or newer; ${bins.java} is Java ${major}. Set JAVA_HOME.`,
    );
  }
  await formatStorage(bins);
  say(`kafka: starting on ${kafkaBrokers} (controller ${host}:${ports.kafkaController})`);
  const heap = (process.env.HERALD_KAFKA_HEAP_OPTS || '-Xms256m -Xmx768m')
    .split(/\s+/)
    .filter(Boolean);
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
    `-Dkafka.logs.dir=${logDir}`,
    // The broker's metrics for Prometheus (infra/kafka/jmx-exporter.yaml), the stack's `kafka` job.
    `-javaagent:${jmxExporterJar()}=${host}:${ports.kafkaExporter}:${kafkaPaths.jmxExporterConfig}`,
    ...extra,
  ];
  const start = () =>
    startDetached({
      component,
      label: 'Kafka',
      cmd: bins.java,
      args: [...javaArgs(jvm, kafkaPaths.log4j), MAIN_CLASS, kafkaPaths.properties],
      cwd: base,
      logFile: kafkaPaths.logFile,
      pidFile: kafkaPaths.pidFile,
      banner: 'starting Kafka',
      ready: () => kafkaAnswers(1000),
      timeoutMs: 180000,
      intervalMs: 300,
      timeoutMessage: 'Kafka did not answer a Metadata request within 180 s',
    });
  const logStart = fs.existsSync(kafkaPaths.logFile) ? fs.statSync(kafkaPaths.logFile).size : 0;
  try {
    await start();
  } catch (error) {
    // The stack's ports lie in Linux's ephemeral range: an outgoing connection (Kafka's own, to
    // its controller) can hold the broker's port for a moment. Once is chance: start again.
    const log = fs.existsSync(kafkaPaths.logFile)
      ? fs.readFileSync(kafkaPaths.logFile, 'utf8').slice(logStart)
      : '';
    if (!/failed to bind to .*Address already in use/.test(log)) throw error;
    say('kafka: its port was taken for a moment (an outgoing connection); starting again');
    await sleep(2000);
    await assertPortFree(component, ports.kafka, portEnvVars.kafka);
    await start();
  }
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
  const propsChanged = writeIfChanged(kafkaPaths.properties, renderProperties());
  let pid = kafkaPid();
  let result = 'running';
  if (pid && (libsChanged || propsChanged)) {
    say('kafka: jars or settings changed, restarting');
    await stopKafka();
    pid = null;
    result = 'restarted';
  }
  if (!pid) {
    await startBroker(bins);
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

/** Topics wanted by the registry (`topics: [{name, partitions?, config?}]` on any service). */
export function registryTopics() {
  const byName = new Map();
  for (const s of stackServices) {
    for (const t of s.topics) {
      const prev = byName.get(t.name);
      byName.set(t.name, {
        ...prev,
        ...t,
        partitions: Math.max(prev?.partitions ?? 0, t.partitions ?? 0) || undefined,
      });
    }
  }
  return [...byName.values()];
}

/** Creates the topics that do not exist yet (with Kafka's TopicCommand). Returns the names created. */
export async function ensureKafkaTopics(bins, topics) {
  if (!topics.length) return [];
  const existing = new Set((await kafkaMetadata()).topics.map((t) => t.name));
  const created = [];
  for (const t of topics) {
    if (!/^[A-Za-z0-9._-]{1,249}$/.test(t.name ?? '')) {
      throw new StackError(component, `bad topic name in the registry: ${JSON.stringify(t.name)}`);
    }
    if (existing.has(t.name)) continue;
    say(`kafka: creating topic ${t.name}`);
    const args = [
      ...javaArgs(['-Xmx256m'], kafkaPaths.toolsLog4j),
      'org.apache.kafka.tools.TopicCommand',
      '--bootstrap-server',
      kafkaBrokers,
      '--create',
      '--if-not-exists',
      '--topic',
      t.name,
      '--replication-factor',
      '1',
    ];
    if (t.partitions) args.push('--partitions', String(t.partitions));
    for (const [k, v] of Object.entries(t.config ?? {})) args.push('--config', `${k}=${v}`);
    try {
      await run(bins.java, args, { timeoutMs: 120000 });
    } catch (err) {
      throw new StackError(component, `creating topic ${t.name} failed: ${err.message}`, {
        logFile: kafkaPaths.logFile,
      });
    }
    created.push(t.name);
  }
  return created;
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
