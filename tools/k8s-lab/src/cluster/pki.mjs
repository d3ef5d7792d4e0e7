// The cluster's certificates, keys and tokens, made once with openssl and kept in the data folder:
// a CA, the apiserver's serving certificate, its client certificate for the kubelet, the kubelet's
// serving certificate, the service-account signing key pair, and the static tokens. Certificates
// naming the node's address are made again when that address changes.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readText } from '@herald/stack/files.mjs';
import { run } from '@herald/stack/processes.mjs';
import { IDENTITIES, NODE_NAME, apiServerNames, certExtensions, tokenFile } from './config.mjs';

const DAYS = '3650';

async function openssl(args, cwd) {
  return run('openssl', args, { cwd });
}

async function makeKey(file) {
  await openssl(['genrsa', '-out', file, '2048']);
  fs.chmodSync(file, 0o600);
}

/** A certificate signed by the cluster CA. */
async function signed(dir, name, { subject, server = [], client = false }) {
  const key = path.join(dir, `${name}.key`);
  const csr = path.join(dir, `${name}.csr`);
  const ext = path.join(dir, `${name}.ext`);
  if (!fs.existsSync(key)) await makeKey(key);
  await openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr]);
  fs.writeFileSync(ext, certExtensions({ server, client }));
  await openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    path.join(dir, 'ca.crt'),
    '-CAkey',
    path.join(dir, 'ca.key'),
    '-CAcreateserial',
    '-days',
    DAYS,
    '-extfile',
    ext,
    '-extensions',
    'v3',
    '-out',
    path.join(dir, `${name}.crt`),
  ]);
  fs.rmSync(csr, { force: true });
  fs.rmSync(ext, { force: true });
}

/** Makes what is missing; returns `{ tokens, caPem }`. */
export async function ensurePki(dir, nodeIp) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (f) => path.join(dir, f);
  if (!fs.existsSync(file('ca.crt'))) {
    await makeKey(file('ca.key'));
    await openssl([
      'req',
      '-x509',
      '-new',
      '-key',
      file('ca.key'),
      '-subj',
      '/CN=herald-cluster-ca',
      '-days',
      DAYS,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
      '-out',
      file('ca.crt'),
    ]);
  }
  const addressChanged = (readText(file('node-ip')) ?? '').trim() !== nodeIp;
  if (addressChanged || !fs.existsSync(file('apiserver.crt'))) {
    await signed(dir, 'apiserver', {
      subject: '/CN=kube-apiserver',
      server: apiServerNames(nodeIp),
    });
  }
  if (addressChanged || !fs.existsSync(file('kubelet.crt'))) {
    await signed(dir, 'kubelet', {
      subject: `/O=system:nodes/CN=system:node:${NODE_NAME}`,
      server: [NODE_NAME, nodeIp],
    });
  }
  if (!fs.existsSync(file('apiserver-kubelet-client.crt'))) {
    // the kubelet authorises the apiserver's logs/exec/port-forward calls as this identity
    await signed(dir, 'apiserver-kubelet-client', {
      subject: '/O=system:masters/CN=kube-apiserver-kubelet-client',
      client: true,
    });
  }
  fs.writeFileSync(file('node-ip'), `${nodeIp}\n`);
  if (!fs.existsSync(file('sa.key'))) {
    await makeKey(file('sa.key'));
    await openssl(['rsa', '-in', file('sa.key'), '-pubout', '-out', file('sa.pub')]);
  }
  let tokens = JSON.parse(readText(file('tokens.json')) ?? '{}');
  if (Object.keys(IDENTITIES).some((k) => !tokens[k])) {
    tokens = Object.fromEntries(
      Object.keys(IDENTITIES).map((k) => [k, tokens[k] ?? randomBytes(24).toString('hex')]),
    );
    fs.writeFileSync(file('tokens.json'), `${JSON.stringify(tokens, null, 2)}\n`, { mode: 0o600 });
  }
  fs.writeFileSync(file('tokens.csv'), tokenFile(tokens), { mode: 0o600 });
  return { tokens, caPem: fs.readFileSync(file('ca.crt'), 'utf8') };
}
