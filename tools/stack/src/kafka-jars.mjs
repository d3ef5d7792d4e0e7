// Kafka's jars: the runtime classpath of infra/kafka/pom.xml, which Maven copies into
// .herald/kafka/libs, and the Java command lines that run from it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataDir, infraDir } from './config.mjs';
import { StackError, say } from './output.mjs';
import { readText, sha256 } from './files.mjs';
import { run } from './processes.mjs';

const component = 'kafka';
const libs = path.join(dataDir, 'kafka', 'libs');
export const kafkaJars = {
  pom: path.join(infraDir, 'kafka', 'pom.xml'),
  libs,
  libsStamp: path.join(libs, '.pom.sha256'),
  /** Logging of Kafka's command-line tools (storage format, topic creation). */
  toolsLog4j: path.join(infraDir, 'kafka', 'tools-log4j2.properties'),
};

/** A Java command line on Kafka's classpath: `extra` JVM options, `log4j` its logging. */
export function javaArgs(extra, log4j) {
  return [...extra, `-Dlog4j2.configurationFile=${log4j}`, '-cp', `${kafkaJars.libs}/*`];
}

/** The JMX exporter agent among the jars (infra/kafka/pom.xml). */
export function jmxExporterJar() {
  const jar = fs.readdirSync(kafkaJars.libs).find((f) => f.startsWith('jmx_prometheus_javaagent-'));
  if (!jar) throw new StackError(component, `no jmx_prometheus_javaagent jar in ${kafkaJars.libs}`);
  return path.join(kafkaJars.libs, jar);
}

/** Copies Kafka's runtime classpath into .herald/kafka/libs when missing or the pom changed. */
export async function ensureLibs(bins) {
  const pomHash = sha256(fs.readFileSync(kafkaJars.pom));
  if (readText(kafkaJars.libsStamp)?.trim() === pomHash) return false;
  if (!bins.mvn)
    throw new StackError(component, 'mvn is needed to fetch Kafka (Debian package maven)');
  say('kafka: fetching jars with Maven (infra/kafka/pom.xml)');
  const tmp = `${kafkaJars.libs}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  try {
    await run(
      bins.mvn,
      [
        '-B',
        '-q',
        '-f',
        kafkaJars.pom,
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
  fs.rmSync(kafkaJars.libs, { recursive: true, force: true });
  fs.renameSync(tmp, kafkaJars.libs);
  return true;
}
