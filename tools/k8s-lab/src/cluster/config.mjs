// The single-node cluster's fixed facts (versions, ports, addresses, paths) and the pure functions
// that write its configuration files. Nothing here touches the machine, so it is unit tested.
import os from 'node:os';
import path from 'node:path';
import { dataDir, portFromEnv, repoRoot } from '@herald/stack/config.mjs';

export const KUBERNETES_VERSION = 'v1.35.4';
export const COREDNS_VERSION = 'v1.15.0';
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
export const COREDNS_IMAGE = `localhost/herald-cluster/coredns:${COREDNS_VERSION}`;

export const NODE_NAME = 'herald-node';
export const CLUSTER_DOMAIN = 'cluster.local';
/** All pods' addresses; this node's pods take the first /24 (podCIDR). */
export const CLUSTER_CIDR = '10.244.0.0/16';
export const POD_CIDR = '10.244.0.0/24';
export const SERVICE_CIDR = '10.96.0.0/16';
/** The `kubernetes` Service's address, which the apiserver's certificate must name. */
export const API_SERVICE_IP = '10.96.0.1';
export const DNS_SERVICE_IP = '10.96.0.10';
/** A bridge name of its own, so that nothing else's bridge (cni0, podman's) is touched. */
export const BRIDGE = 'herald-br0';
export const CNI_NETWORK = 'herald-cluster';

/**
 * Every port the cluster listens on, away from the components' defaults (10250, 2379, 6443…) so
 * that another Kubernetes or etcd on the machine never clashes; only the apiserver and the
 * kubelet listen on the node's address, everything else on loopback.
 */
export const ports = Object.freeze({
  apiserver: portFromEnv('HERALD_CLUSTER_API_PORT', 46443),
  etcdClient: 42379,
  etcdPeer: 42380,
  kubelet: 40250,
  kubeletHealthz: 40248,
  controllerManager: 40257,
  scheduler: 40259,
  kubeProxyMetrics: 40249,
  kubeProxyHealthz: 40256,
});

export function toolsDirs(root = repoRoot) {
  const tools = path.join(root, '.herald', 'tools');
  const kube = path.join(tools, `kubernetes-${KUBERNETES_VERSION}`);
  return {
    kube,
    coredns: path.join(tools, `coredns-${COREDNS_VERSION}`),
    stamp: path.join(kube, 'build.stamp'),
  };
}

/** Where the cluster keeps everything it writes; `rm -rf` of it (after `down`) resets it. */
export function clusterPaths(base = path.join(dataDir, 'cluster')) {
  const p = (...parts) => path.join(base, ...parts);
  return {
    base,
    pki: p('pki'),
    logs: p('logs'),
    run: p('run'),
    etcd: p('etcd'),
    config: p('config'),
    images: p('images'),
    kubeconfig: p('kubeconfig'),
    containerdRoot: p('containerd', 'root'),
    containerdState: p('containerd', 'state'),
    containerdSocket: p('containerd', 'containerd.sock'),
    cniConfDir: p('cni', 'net.d'),
    cniIpam: p('cni', 'ipam'),
    registryHosts: p('containerd', 'certs.d'),
    kubeletRoot: p('kubelet'),
    podLogs: p('pod-logs'),
    state: p('host-state.json'),
  };
}

/**
 * The first IPv4 address of the interface that holds the default route (not loopback).
 * @param {NodeJS.Dict<{ family: string, address: string, internal: boolean }[]>} [interfaces]
 * @param {string} [routeText] the output of `ip -4 route show default`
 */
export function pickNodeIp(interfaces = os.networkInterfaces(), routeText = '') {
  const defaultDev = /^default via \S+ dev (\S+)/m.exec(routeText)?.[1];
  const candidates = Object.entries(interfaces)
    .filter(([name]) => name !== 'lo' && !name.startsWith(BRIDGE))
    .sort(([a], [b]) => (a === defaultDev ? -1 : b === defaultDev ? 1 : 0));
  for (const [, addrs] of candidates) {
    const v4 = (addrs ?? []).find((a) => a.family === 'IPv4' && !a.internal);
    if (v4) return v4.address;
  }
  return null;
}

/** One line per identity of the apiserver's static token file: admin, node and components. */
export const IDENTITIES = Object.freeze({
  admin: { user: 'herald-admin', groups: ['system:masters'] },
  node: { user: `system:node:${NODE_NAME}`, groups: ['system:nodes'] },
  controllerManager: { user: 'system:kube-controller-manager', groups: [] },
  scheduler: { user: 'system:kube-scheduler', groups: [] },
  kubeProxy: { user: 'system:kube-proxy', groups: [] },
});

/** The apiserver's --token-auth-file: `token,user,uid,"group1,group2"`. */
export function tokenFile(tokens) {
  return Object.entries(IDENTITIES)
    .map(([key, { user, groups }]) => {
      if (!/^[0-9a-f]{32,}$/.test(tokens[key] ?? '')) {
        throw new Error(`tokenFile: no token for ${key}`);
      }
      const groupField = groups.length > 0 ? `,"${groups.join(',')}"` : '';
      return `${tokens[key]},${user},${user}${groupField}`;
    })
    .join('\n')
    .concat('\n');
}

/** A kubeconfig (JSON, which every client reads as YAML) for one token identity. */
export function kubeconfig({ server, caPem, user, token }) {
  const cluster = 'herald-cluster';
  return `${JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: cluster,
          cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') },
        },
      ],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: cluster, context: { cluster, user } }],
      'current-context': cluster,
    },
    null,
    2,
  )}\n`;
}

export function apiServerUrl(nodeIp) {
  return `https://${nodeIp}:${ports.apiserver}`;
}

/**
 * openssl x509 extensions of one certificate: `server` names go in subjectAltName (IP addresses
 * recognised by shape), `client` adds clientAuth.
 */
export function certExtensions({ server = [], client = false }) {
  const usages = [...(server.length > 0 ? ['serverAuth'] : []), ...(client ? ['clientAuth'] : [])];
  const lines = [
    '[v3]',
    'basicConstraints = critical, CA:FALSE',
    'keyUsage = critical, digitalSignature, keyEncipherment',
    `extendedKeyUsage = ${usages.join(', ')}`,
  ];
  if (server.length > 0) {
    const alt = server.map((n) => (/^\d+\.\d+\.\d+\.\d+$/.test(n) ? `IP:${n}` : `DNS:${n}`));
    lines.push(`subjectAltName = ${alt.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The names the apiserver answers to: in-cluster DNS names, loopback, the node and the Service. */
export function apiServerNames(nodeIp) {
  const svc = 'kubernetes.default.svc';
  return [
    'kubernetes',
    'kubernetes.default',
    svc,
    `${svc}.${CLUSTER_DOMAIN}`,
    'localhost',
    '127.0.0.1',
    nodeIp,
    API_SERVICE_IP,
  ];
}

/** containerd's own configuration: its own root, state and socket beside the machine's. */
export function containerdConfig(paths) {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `# written by tools/k8s-lab/src/cluster: containerd of the local cluster only
version = 2
root = ${JSON.stringify(paths.containerdRoot)}
state = ${JSON.stringify(paths.containerdState)}
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = ${JSON.stringify(paths.containerdSocket)}

[${cri}]
  sandbox_image = ${JSON.stringify(PAUSE_IMAGE)}
  # the VM refuses the kubelet's -998 OOM score (no CAP_SYS_RESOURCE): runc would fail with
  # "can't get final child's PID from pipe: EOF" unless containerd caps it at its own
  restrict_oom_score_adj = true
  # pods' network namespaces below the state folder, not among the machine's /var/run/netns
  netns_mounts_under_state_dir = true
  enable_selinux = false
  disable_apparmor = true

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  # runc's container state beside containerd's, not in the machine's /run/containerd
  Root = ${JSON.stringify(path.join(paths.containerdState, 'runc'))}

[${cri}.registry]
  # registries by host (hosts.toml), the release's local one among them (registryHosts)
  config_path = ${JSON.stringify(paths.registryHosts)}

[${cri}.cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = ${JSON.stringify(paths.cniConfDir)}
  max_conf_num = 1

[plugins."io.containerd.internal.v1.opt"]
  path = ${JSON.stringify(path.join(paths.containerdRoot, 'opt'))}
`;
}

/**
 * containerd's hosts.toml for the release's local OCI registry (tools/stack/src/registry.mjs):
 * plain HTTP, reached by containerd itself on the machine's loopback.
 * @param {string} registryHost  host:port
 */
export function registryHostsToml(registryHost) {
  return `# written by tools/k8s-lab/src/cluster: the local OCI registry, plain HTTP on loopback
server = "http://${registryHost}"

[host."http://${registryHost}"]
  capabilities = ["pull", "resolve"]
`;
}

/**
 * The pod network: a bridge of its own with host-local addresses from this node's podCIDR, and
 * portmap for hostPorts. No masquerading: pods reach each other and the node, nothing beyond.
 */
export function cniConflist(paths) {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: false,
          // a pod reaching itself through its Service's address comes back over the bridge
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: POD_CIDR }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: paths.cniIpam,
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

export function kubeletConfig({ paths, nodeIp }) {
  return `${JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: nodeIp,
      port: ports.kubelet,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: ports.kubeletHealthz,
      tlsCertFile: path.join(paths.pki, 'kubelet.crt'),
      tlsPrivateKeyFile: path.join(paths.pki, 'kubelet.key'),
      authentication: {
        anonymous: { enabled: false },
        webhook: { enabled: true },
        x509: { clientCAFile: path.join(paths.pki, 'ca.crt') },
      },
      authorization: { mode: 'Webhook' },
      // this machine: cgroup v1 without systemd, and swap is not the kubelet's business here
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      failSwapOn: false,
      containerRuntimeEndpoint: `unix://${paths.containerdSocket}`,
      podCIDR: POD_CIDR,
      clusterDNS: [DNS_SERVICE_IP],
      clusterDomain: CLUSTER_DOMAIN,
      // no host resolver for pods: names outside the cluster are not looked up anywhere
      resolvConf: '',
      podLogsDir: paths.podLogs,
      // The node's disk is the machine's, shared with everything else on it: the default
      // thresholds are shares of it (evict below 15 % free, collect images above 85 % used),
      // which a large, busy disk with tens of GiB free can cross. Evict below a few GiB free
      // instead, and never collect images: they are imported, not pulled, so one collected
      // could not come back.
      evictionHard: {
        'memory.available': '100Mi',
        'nodefs.available': '2Gi',
        'imagefs.available': '2Gi',
        'nodefs.inodesFree': '5%',
      },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      rotateCertificates: false,
      serverTLSBootstrap: false,
    },
    null,
    2,
  )}\n`;
}

export function kubeProxyConfig({ paths, nodeIp }) {
  return `${JSON.stringify(
    {
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      mode: 'iptables',
      clusterCIDR: CLUSTER_CIDR,
      hostnameOverride: NODE_NAME,
      bindAddress: nodeIp,
      clientConnection: { kubeconfig: path.join(paths.config, 'kube-proxy.kubeconfig') },
      metricsBindAddress: `127.0.0.1:${ports.kubeProxyMetrics}`,
      healthzBindAddress: `127.0.0.1:${ports.kubeProxyHealthz}`,
      nodePortAddresses: [`${nodeIp}/32`],
      // leave the machine's conntrack and route_localnet sysctls as they are
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      iptables: { localhostNodePorts: false, syncPeriod: '30s', minSyncPeriod: '1s' },
    },
    null,
    2,
  )}\n`;
}

/** Start order; `down` stops in reverse. */
export const COMPONENTS = Object.freeze([
  'containerd',
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  // the kubelet first: kube-proxy waits for its Node object. Until kube-proxy has its rules, the
  // guard chain refuses pods' packets to Service addresses.
  'kubelet',
  'kube-proxy',
]);
