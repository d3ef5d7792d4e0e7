// The cluster's pure parts: the go.mod rewrite, configuration files, process flags, manifests,
// the iptables cleanup plan and the DNS message codec. No cluster, root or network needed:
// node --test tools/k8s-lab/src/cluster/config.unit.test.mjs
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kubeLdflags, rewriteGoMod } from './build.mjs';
import {
  API_SERVICE_IP,
  BRIDGE,
  POD_CIDR,
  apiServerNames,
  certExtensions,
  clusterPaths,
  cniConflist,
  containerdConfig,
  registryHostsToml,
  kubeProxyConfig,
  kubeconfig,
  kubeletConfig,
  pickNodeIp,
  ports,
  tokenFile,
} from './config.mjs';
import { decodeResponse, encodeQuery } from './dns.mjs';
import { GUARD_CHAIN, mountsBelow, planIptablesCleanup, splitRule } from './host.mjs';
import { normalizedRef } from './images.mjs';
import { LOOKUP_SCRIPT, checkObjects, corednsObjects, corefile, lookupPod } from './manifests.mjs';
import { processArgs } from './process-args.mjs';

const paths = clusterPaths('/data/cluster');

describe('rewriteGoMod', () => {
  const goMod = `module k8s.io/kubernetes

go 1.25.0

require (
	github.com/foo/bar v1.2.3
	k8s.io/api v0.0.0
	k8s.io/kubelet v0.0.0 // indirect
	k8s.io/utils v0.0.0-20250604170112-4c0f3b243397
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/kubelet => ./staging/src/k8s.io/kubelet
)
`;
  it('drops the staging replaces and pins the published staging releases', () => {
    const { text, stagingModules } = rewriteGoMod(goMod, 'v1.35.4');
    assert.deepEqual(stagingModules, ['k8s.io/api', 'k8s.io/kubelet']);
    assert.doesNotMatch(text, /=>/);
    assert.doesNotMatch(text, /replace/);
    assert.match(text, /\tk8s\.io\/api v0\.35\.4\n/);
    assert.match(text, /\tk8s\.io\/kubelet v0\.35\.4 \/\/ indirect\n/);
    // a pseudo-version of a module that is not staged stays as it is
    assert.match(text, /k8s\.io\/utils v0\.0\.0-20250604170112-4c0f3b243397/);
    assert.match(text, /github\.com\/foo\/bar v1\.2\.3/);
  });
  it('keeps replaces that do not point into staging', () => {
    const { text } = rewriteGoMod(`${goMod}\nreplace example.com/x => example.com/y v1.0.0\n`);
    assert.match(text, /replace example\.com\/x => example\.com\/y v1\.0\.0/);
  });
  it('stamps the version the way the release build does', () => {
    assert.match(kubeLdflags('v1.35.4'), /version\.gitVersion=v1\.35\.4/);
    assert.match(kubeLdflags('v1.35.4'), /version\.gitMajor=1 .*version\.gitMinor=35/);
  });
});

describe('identities and kubeconfigs', () => {
  const tokens = {
    admin: 'a'.repeat(48),
    node: 'b'.repeat(48),
    controllerManager: 'c'.repeat(48),
    scheduler: 'd'.repeat(48),
    kubeProxy: 'e'.repeat(48),
  };
  it('puts the admin in system:masters and the node in system:nodes', () => {
    const lines = tokenFile(tokens).trim().split('\n');
    assert.equal(lines.length, 5);
    assert.equal(lines[0], `${tokens.admin},herald-admin,herald-admin,"system:masters"`);
    assert.equal(
      lines[1],
      `${tokens.node},system:node:herald-node,system:node:herald-node,"system:nodes"`,
    );
    assert.ok(lines.includes(`${tokens.kubeProxy},system:kube-proxy,system:kube-proxy`));
  });
  it('refuses a missing token', () => {
    assert.throws(() => tokenFile({ ...tokens, node: undefined }), /no token for node/);
  });
  it('writes a kubeconfig with the CA embedded', () => {
    const config = JSON.parse(
      kubeconfig({ server: 'https://192.0.2.2:46443', caPem: 'PEM', user: 'u', token: 't' }),
    );
    assert.equal(config.clusters[0].cluster.server, 'https://192.0.2.2:46443');
    assert.equal(config.clusters[0].cluster['certificate-authority-data'], 'UEVN');
    assert.deepEqual(config.users[0], { name: 'u', user: { token: 't' } });
    assert.equal(config['current-context'], config.contexts[0].name);
  });
  it('names the node, loopback and the kubernetes Service in the apiserver certificate', () => {
    const ext = certExtensions({ server: apiServerNames('192.0.2.2') });
    assert.match(ext, /IP:192\.0\.2\.2/);
    assert.match(ext, new RegExp(`IP:${API_SERVICE_IP.replaceAll('.', '\\.')}`));
    assert.match(ext, /DNS:kubernetes\.default\.svc\.cluster\.local/);
    assert.match(ext, /extendedKeyUsage = serverAuth\n/);
    assert.match(certExtensions({ client: true }), /extendedKeyUsage = clientAuth\n/);
    assert.doesNotMatch(certExtensions({ client: true }), /subjectAltName/);
  });
});

describe('configuration files', () => {
  it('gives containerd its own root, state and socket, and caps OOM scores', () => {
    const toml = containerdConfig(paths);
    assert.match(toml, /^root = "\/data\/cluster\/containerd\/root"$/m);
    assert.match(toml, /^state = "\/data\/cluster\/containerd\/state"$/m);
    assert.match(toml, /address = "\/data\/cluster\/containerd\/containerd\.sock"/);
    assert.match(toml, /restrict_oom_score_adj = true/);
    assert.match(toml, /sandbox_image = "registry\.k8s\.io\/pause:3\.10"/);
    assert.match(toml, /netns_mounts_under_state_dir = true/);
    assert.match(toml, /config_path = "\/data\/cluster\/containerd\/certs\.d"/);
    assert.match(toml, /SystemdCgroup = false/);
    assert.match(toml, /Root = "\/data\/cluster\/containerd\/state\/runc"/);
    assert.match(toml, /conf_dir = "\/data\/cluster\/cni\/net\.d"/);
  });
  it('puts pods on a bridge of their own, without masquerading', () => {
    const conflist = JSON.parse(cniConflist(paths));
    const [bridge, portmap] = conflist.plugins;
    assert.equal(bridge.type, 'bridge');
    assert.equal(bridge.bridge, BRIDGE);
    assert.equal(bridge.ipMasq, false);
    assert.deepEqual(bridge.ipam.ranges, [[{ subnet: POD_CIDR }]]);
    assert.equal(bridge.ipam.dataDir, '/data/cluster/cni/ipam');
    assert.equal(portmap.type, 'portmap');
  });
  it('configures the kubelet for cgroup v1 with cgroupfs and no host resolver', () => {
    const config = JSON.parse(kubeletConfig({ paths, nodeIp: '192.0.2.2' }));
    assert.equal(config.failCgroupV1, false);
    assert.equal(config.cgroupDriver, 'cgroupfs');
    assert.equal(config.failSwapOn, false);
    assert.equal(
      config.containerRuntimeEndpoint,
      'unix:///data/cluster/containerd/containerd.sock',
    );
    assert.equal(config.podCIDR, POD_CIDR);
    assert.equal(config.address, '192.0.2.2');
    assert.equal(config.port, ports.kubelet);
    assert.equal(config.readOnlyPort, 0);
    assert.equal(config.authentication.anonymous.enabled, false);
    assert.equal(config.authorization.mode, 'Webhook');
    assert.equal(config.resolvConf, '');
  });
  it('evicts on GiB left on the shared disk, not on its share, and never collects imported images', () => {
    const config = JSON.parse(kubeletConfig({ paths, nodeIp: '192.0.2.2' }));
    assert.equal(config.evictionHard['nodefs.available'], '2Gi');
    assert.equal(config.evictionHard['imagefs.available'], '2Gi');
    assert.equal(config.imageGCHighThresholdPercent, 100);
    assert.ok(config.imageGCLowThresholdPercent < config.imageGCHighThresholdPercent);
  });
  it('runs kube-proxy in iptables mode without touching conntrack sysctls', () => {
    const config = JSON.parse(kubeProxyConfig({ paths, nodeIp: '192.0.2.2' }));
    assert.equal(config.mode, 'iptables');
    assert.equal(config.conntrack.maxPerCore, 0);
    assert.equal(config.iptables.localhostNodePorts, false);
    assert.deepEqual(config.nodePortAddresses, ['192.0.2.2/32']);
  });
  it('starts the control plane with RBAC, PodSecurity and NodeRestriction', () => {
    const bins = new Proxy({}, { get: (_, name) => `/bin/${String(name)}` });
    const args = processArgs({ paths, nodeIp: '192.0.2.2', bins });
    const api = args['kube-apiserver'].args;
    assert.ok(api.includes('--authorization-mode=Node,RBAC'));
    assert.ok(api.includes('--enable-admission-plugins=NodeRestriction,PodSecurity'));
    assert.ok(api.includes(`--secure-port=${ports.apiserver}`));
    assert.ok(api.includes('--bind-address=192.0.2.2'));
    assert.ok(api.includes(`--etcd-servers=http://127.0.0.1:${ports.etcdClient}`));
    const kcm = args['kube-controller-manager'].args;
    assert.ok(kcm.includes('--controllers=*,-nodeipam'));
    assert.ok(kcm.some((a) => a.startsWith('--service-account-private-key-file=')));
    assert.ok(kcm.some((a) => a.startsWith('--root-ca-file=')));
    assert.ok(args.kubelet.args.includes('--node-ip=192.0.2.2'));
    const etcd = args.etcd.args;
    assert.ok(etcd.every((a) => !a.includes('://') || a.includes('127.0.0.1')));
  });
  it('picks the default route interface address, never loopback', () => {
    const interfaces = {
      lo: [{ family: 'IPv4', address: '127.0.0.1', internal: true }],
      eth1: [{ family: 'IPv4', address: '198.51.100.7', internal: false }],
      eth0: [
        { family: 'IPv6', address: 'fd00::2', internal: false },
        { family: 'IPv4', address: '192.0.2.2', internal: false },
      ],
    };
    assert.equal(pickNodeIp(interfaces, 'default via 192.0.2.1 dev eth0 \n'), '192.0.2.2');
    assert.equal(pickNodeIp({ lo: interfaces.lo }, ''), null);
  });
});

describe('manifests', () => {
  const restricted = (container) => {
    const sc = container.securityContext;
    assert.equal(sc.runAsNonRoot, true);
    assert.equal(sc.allowPrivilegeEscalation, false);
    assert.deepEqual(sc.capabilities.drop, ['ALL']);
    assert.equal(sc.seccompProfile.type, 'RuntimeDefault');
    assert.ok(sc.runAsUser > 0);
    assert.equal(container.imagePullPolicy, 'Never');
  };
  it('runs CoreDNS unprivileged, answering only for the cluster domain', () => {
    const objects = corednsObjects();
    const deployment = objects.find((o) => o.kind === 'Deployment');
    restricted(deployment.spec.template.spec.containers[0]);
    const service = objects.find((o) => o.kind === 'Service');
    assert.equal(service.spec.clusterIP, '10.96.0.10');
    assert.ok(service.spec.ports.every((p) => p.port === 53 && p.targetPort === 1053));
    assert.doesNotMatch(corefile(), /forward/);
    assert.match(corefile(), /kubernetes cluster\.local in-addr\.arpa ip6\.arpa/);
  });
  it('checks with 2 restricted pods in a namespace that enforces restricted', () => {
    const [namespace, deployment, service] = checkObjects();
    assert.equal(namespace.metadata.labels['pod-security.kubernetes.io/enforce'], 'restricted');
    assert.equal(deployment.spec.replicas, 2);
    restricted(deployment.spec.template.spec.containers[0]);
    assert.equal(service.spec.type, 'ClusterIP');
  });
  it('looks the Service up from a restricted pod, by its short name', () => {
    const pod = lookupPod('docker.io/herald/auth:0.1.0');
    restricted(pod.spec.containers[0]);
    assert.equal(pod.spec.restartPolicy, 'Never');
    assert.deepEqual(pod.spec.containers[0].command.slice(0, 2), ['node', '-e']);
    assert.match(LOOKUP_SCRIPT, /dns\.lookup\('sleeper'\)/);
    // the script is valid JavaScript
    assert.doesNotThrow(() => new Function('require', LOOKUP_SCRIPT));
  });
});

describe('iptables cleanup', () => {
  const save = `# Generated by iptables-nft-save v1.8.9
*nat
:PREROUTING ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:CNI-HOSTPORT-DNAT - [0:0]
:CNI-0123abcd - [0:0]
:CNI-ffff0000 - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT
-A POSTROUTING -s 10.244.0.5/32 -m comment --comment "name: \\"herald-cluster\\" id: \\"abc\\"" -j CNI-0123abcd
-A POSTROUTING -s 10.88.0.5/32 -m comment --comment "name: \\"podman\\" id: \\"def\\"" -j CNI-ffff0000
-A CNI-0123abcd -d 10.244.0.0/24 -m comment --comment "name: \\"herald-cluster\\" id: \\"abc\\"" -j ACCEPT
-A CNI-ffff0000 -d 10.88.0.0/16 -j ACCEPT
COMMIT
*filter
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:${GUARD_CHAIN} - [0:0]
-A FORWARD -j ${GUARD_CHAIN}
-A OUTPUT -j ${GUARD_CHAIN}
-A ${GUARD_CHAIN} -d 10.96.0.0/16 -j REJECT
COMMIT
`;
  it('splits quoted comments the way iptables wants them back', () => {
    assert.deepEqual(splitRule('-A X -m comment --comment "name: \\"a b\\"" -j Y'), [
      '-A',
      'X',
      '-m',
      'comment',
      '--comment',
      'name: "a b"',
      '-j',
      'Y',
    ]);
  });
  it("removes the cluster's chains and the jumps to them, and leaves other CNI users alone", () => {
    const plan = planIptablesCleanup(save).map((c) => c.join(' '));
    assert.deepEqual(plan, [
      '-t nat -D PREROUTING -m comment --comment kubernetes service portals -j KUBE-SERVICES',
      '-t nat -D POSTROUTING -s 10.244.0.5/32 -m comment --comment name: "herald-cluster" id: "abc" -j CNI-0123abcd',
      '-t nat -F KUBE-SERVICES',
      '-t nat -F CNI-0123abcd',
      '-t nat -X KUBE-SERVICES',
      '-t nat -X CNI-0123abcd',
      `-t filter -D FORWARD -j ${GUARD_CHAIN}`,
      `-t filter -D OUTPUT -j ${GUARD_CHAIN}`,
      `-t filter -F ${GUARD_CHAIN}`,
      `-t filter -X ${GUARD_CHAIN}`,
    ]);
  });
  it('plans nothing on a machine without the cluster', () => {
    assert.deepEqual(planIptablesCleanup('*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n'), []);
  });
});

describe('mountsBelow', () => {
  it('lists mounts under the folder, deepest first, octal escapes decoded', () => {
    const mountinfo = [
      '22 1 8:1 / / rw - ext4 /dev/vda rw',
      '90 22 0:50 / /data/cluster/containerd/state/x/rootfs rw - overlay overlay rw',
      '91 22 0:51 / /data/cluster/kubelet/pods/a/volumes/kube-api-access rw - tmpfs tmpfs rw',
      '92 90 0:52 / /data/cluster/containerd/state/x/rootfs/dev rw - tmpfs tmpfs rw',
      '93 22 0:53 / /data/cluster-other/y rw - tmpfs tmpfs rw',
      '94 22 0:54 / /data/cluster/with\\040space rw - tmpfs tmpfs rw',
    ].join('\n');
    assert.deepEqual(mountsBelow('/data/cluster', mountinfo), [
      '/data/cluster/kubelet/pods/a/volumes/kube-api-access',
      '/data/cluster/containerd/state/x/rootfs/dev',
      '/data/cluster/containerd/state/x/rootfs',
      '/data/cluster/with space',
    ]);
  });
});

describe('DNS messages', () => {
  it('encodes an A query', () => {
    const query = encodeQuery('a.bc.', 0x1234);
    assert.deepEqual(
      [...query],
      [0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 97, 2, 98, 99, 0, 0, 1, 0, 1],
    );
  });
  it('decodes the A records of an answer with name compression', () => {
    const query = encodeQuery('svc.local', 7);
    const header = Buffer.from(query.subarray(0, 12));
    header[2] = 0x81;
    header[3] = 0x80;
    header.writeUInt16BE(2, 6);
    const answer = (ip) =>
      Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, ...ip.split('.').map(Number)]);
    const message = Buffer.concat([
      header,
      query.subarray(12),
      answer('10.96.12.34'),
      answer('10.96.12.35'),
    ]);
    assert.deepEqual(decodeResponse(message), {
      id: 7,
      rcode: 'NOERROR',
      addresses: ['10.96.12.34', '10.96.12.35'],
    });
  });
  it('reports NXDOMAIN', () => {
    const message = Buffer.from(encodeQuery('nope.local', 9));
    message[3] = 0x83;
    assert.equal(decodeResponse(message).rcode, 'NXDOMAIN');
  });
});

describe('normalizedRef', () => {
  it('names images the way the kubelet asks containerd for them', () => {
    assert.equal(normalizedRef('herald/auth:0.1.0'), 'docker.io/herald/auth:0.1.0');
    assert.equal(normalizedRef('busybox'), 'docker.io/library/busybox:latest');
    assert.equal(normalizedRef('registry.k8s.io/pause:3.10'), 'registry.k8s.io/pause:3.10');
    assert.equal(
      normalizedRef('localhost/herald-cluster/coredns:v1.15.0'),
      'localhost/herald-cluster/coredns:v1.15.0',
    );
    assert.equal(normalizedRef('127.0.0.1:5000/x/y'), '127.0.0.1:5000/x/y:latest');
    assert.equal(
      normalizedRef('docker.io/herald/auth@sha256:ab'),
      'docker.io/herald/auth@sha256:ab',
    );
  });
});

describe('the local registry', () => {
  it('is pulled from over plain HTTP, by containerd on the loopback', () => {
    const toml = registryHostsToml('127.0.0.1:25000');
    assert.match(toml, /^server = "http:\/\/127\.0\.0\.1:25000"$/m);
    assert.match(
      toml,
      /^\[host\."http:\/\/127\.0\.0\.1:25000"\]\n {2}capabilities = \["pull", "resolve"\]$/m,
    );
  });
});
