// What the cluster itself runs (CoreDNS) and what `check` applies to prove it works, as
// Kubernetes objects. Pure: unit tested.
import { CLUSTER_DOMAIN, COREDNS_IMAGE, DNS_SERVICE_IP, PAUSE_IMAGE } from './config.mjs';

/** Ports CoreDNS listens on inside its pod: above 1024, so it needs no capability. */
export const COREDNS_PORTS = Object.freeze({ dns: 1053, health: 8080, ready: 8181 });

/** A container security context the `restricted` Pod Security level accepts. */
export function restrictedContainer(user) {
  return {
    runAsNonRoot: true,
    runAsUser: user,
    runAsGroup: user,
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

/**
 * Answers for the cluster domain (and reverse lookups of its addresses) only: nothing is
 * forwarded, so no pod's query ever leaves the machine.
 */
export function corefile() {
  return `.:${COREDNS_PORTS.dns} {
    errors
    health :${COREDNS_PORTS.health}
    ready :${COREDNS_PORTS.ready}
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    cache 30
}
`;
}

/** CoreDNS in kube-system: its identity and rights, its Corefile, one pod, the kube-dns Service. */
export function corednsObjects() {
  return [...corednsRbac(), corednsConfigMap(), corednsDeployment(), corednsService()];
}

const COREDNS_NAMESPACE = 'kube-system';
const COREDNS_LABELS = { 'k8s-app': 'kube-dns' };

/** CoreDNS's ServiceAccount, allowed to watch what it answers for. */
function corednsRbac() {
  const ns = COREDNS_NAMESPACE;
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: ns } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'system:coredns' },
      rules: [
        {
          apiGroups: [''],
          resources: ['endpoints', 'services', 'pods', 'namespaces'],
          verbs: ['list', 'watch'],
        },
        {
          apiGroups: ['discovery.k8s.io'],
          resources: ['endpointslices'],
          verbs: ['list', 'watch'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:coredns' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:coredns',
      },
      subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: ns }],
    },
  ];
}

function corednsConfigMap() {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'coredns', namespace: COREDNS_NAMESPACE },
    data: { Corefile: corefile() },
  };
}

function corednsDeployment() {
  const labels = COREDNS_LABELS;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'coredns', namespace: COREDNS_NAMESPACE, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: 'coredns',
          priorityClassName: 'system-cluster-critical',
          // CoreDNS itself must not resolve through CoreDNS
          dnsPolicy: 'Default',
          securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
          containers: [corednsContainer()],
          volumes: [{ name: 'config', configMap: { name: 'coredns' } }],
        },
      },
    },
  };
}

function corednsContainer() {
  return {
    name: 'coredns',
    image: COREDNS_IMAGE,
    // built on this machine and imported into containerd: never pulled
    imagePullPolicy: 'Never',
    args: ['-conf', '/etc/coredns/Corefile'],
    ports: [
      { name: 'dns', containerPort: COREDNS_PORTS.dns, protocol: 'UDP' },
      { name: 'dns-tcp', containerPort: COREDNS_PORTS.dns, protocol: 'TCP' },
    ],
    resources: {
      requests: { cpu: '50m', memory: '40Mi' },
      limits: { memory: '128Mi' },
    },
    securityContext: restrictedContainer(65532),
    volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
    livenessProbe: {
      httpGet: { path: '/health', port: COREDNS_PORTS.health },
      periodSeconds: 10,
    },
    readinessProbe: {
      httpGet: { path: '/ready', port: COREDNS_PORTS.ready },
      periodSeconds: 2,
    },
  };
}

function corednsService() {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'kube-dns',
      namespace: COREDNS_NAMESPACE,
      labels: { ...COREDNS_LABELS, 'kubernetes.io/name': 'CoreDNS' },
    },
    spec: {
      selector: COREDNS_LABELS,
      clusterIP: DNS_SERVICE_IP,
      ports: [
        { name: 'dns', port: 53, targetPort: COREDNS_PORTS.dns, protocol: 'UDP' },
        { name: 'dns-tcp', port: 53, targetPort: COREDNS_PORTS.dns, protocol: 'TCP' },
      ],
    },
  };
}

export const CHECK_NAMESPACE = 'herald-cluster-check';
export const CHECK_APP = 'sleeper';

/**
 * The proof that the node runs pods: a namespace enforcing the `restricted` Pod Security level, a
 * 2-replica Deployment of the pause image that complies with it, and a ClusterIP Service for it.
 */
export function checkObjects() {
  const labels = { app: CHECK_APP };
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: CHECK_NAMESPACE,
        labels: {
          'pod-security.kubernetes.io/enforce': 'restricted',
          'pod-security.kubernetes.io/enforce-version': 'latest',
        },
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: CHECK_APP, namespace: CHECK_NAMESPACE, labels },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
            containers: [
              {
                name: 'pause',
                image: PAUSE_IMAGE,
                imagePullPolicy: 'Never',
                resources: { requests: { cpu: '5m', memory: '8Mi' }, limits: { memory: '16Mi' } },
                securityContext: restrictedContainer(65535),
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: CHECK_APP, namespace: CHECK_NAMESPACE, labels },
      spec: { type: 'ClusterIP', selector: labels, ports: [{ name: 'http', port: 80 }] },
    },
  ];
}

/** A `kind: List` document for `kubectl apply -f`. */
export function asList(items) {
  return `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 2)}\n`;
}

/**
 * What the lookup pod runs (with Node.js, from any of the project's images): the check Service
 * by its short name, through the pod's resolv.conf and its search path as any program would, and
 * a TCP connection to the `kubernetes` Service, through kube-proxy's rules.
 */
export const LOOKUP_SCRIPT = `
const dns = require('node:dns').promises;
const net = require('node:net');
(async () => {
  const svc = await dns.lookup('${CHECK_APP}');
  console.log('${CHECK_APP} ->', svc.address);
  const api = await dns.lookup('kubernetes.default');
  await new Promise((resolve, reject) => {
    const socket = net.connect(443, api.address, () => socket.end(resolve));
    socket.on('error', reject);
    socket.setTimeout(5000, () => reject(new Error('connect timeout')));
  });
  console.log('kubernetes.default ->', api.address, 'port 443 connected');
})().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
`;

export function lookupPod(image) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'lookup', namespace: CHECK_NAMESPACE },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'lookup',
          image,
          imagePullPolicy: 'Never',
          command: ['node', '-e', LOOKUP_SCRIPT],
          resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
          securityContext: restrictedContainer(1000),
        },
      ],
    },
  };
}
