// The command line of each process of the cluster, from its paths, binaries and node address.
// Pure: unit tested.
import path from 'node:path';
import { CLUSTER_DOMAIN, NODE_NAME, SERVICE_CIDR, ports } from './config.mjs';

/**
 * @typedef {ReturnType<typeof import('./config.mjs').clusterPaths>} ClusterPaths
 * @typedef {{ cmd: string, args: string[] }} ProcessSpec
 * @typedef {{ paths: ClusterPaths, nodeIp: string, bins: Record<string, string> }} Inputs
 */

const etcdClient = `http://127.0.0.1:${ports.etcdClient}`;
const etcdPeer = `http://127.0.0.1:${ports.etcdPeer}`;

/**
 * Each process of the cluster: its command line, from the paths, binaries and node address.
 * @param {Inputs} inputs
 * @returns {Record<string, ProcessSpec>}
 */
export function processArgs({ paths, nodeIp, bins }) {
  /** @param {string} f */
  const cfg = (f) => path.join(paths.config, f);
  return {
    containerd: {
      cmd: bins.containerd,
      args: ['--config', cfg('containerd.toml')],
    },
    etcd: { cmd: bins.etcd, args: etcdArgs(paths) },
    'kube-apiserver': { cmd: bins['kube-apiserver'], args: apiserverArgs(paths, nodeIp) },
    'kube-controller-manager': {
      cmd: bins['kube-controller-manager'],
      args: controllerManagerArgs(paths),
    },
    'kube-scheduler': {
      cmd: bins['kube-scheduler'],
      args: [
        ...delegated(cfg('scheduler.kubeconfig')),
        '--bind-address=127.0.0.1',
        `--secure-port=${ports.scheduler}`,
        '--leader-elect=false',
        '--profiling=false',
      ],
    },
    kubelet: {
      cmd: bins.kubelet,
      args: [
        `--config=${cfg('kubelet.json')}`,
        `--kubeconfig=${cfg('kubelet.kubeconfig')}`,
        `--node-ip=${nodeIp}`,
        `--hostname-override=${NODE_NAME}`,
        `--root-dir=${paths.kubeletRoot}`,
      ],
    },
    'kube-proxy': {
      cmd: bins['kube-proxy'],
      args: [`--config=${cfg('kube-proxy.json')}`],
    },
  };
}

/**
 * A component that authenticates and authorizes its own clients through the apiserver.
 * @param {string} kubeconfigFile
 */
function delegated(kubeconfigFile) {
  return [
    `--kubeconfig=${kubeconfigFile}`,
    `--authentication-kubeconfig=${kubeconfigFile}`,
    `--authorization-kubeconfig=${kubeconfigFile}`,
  ];
}

/** @param {ClusterPaths} paths */
function etcdArgs(paths) {
  return [
    '--name=herald-cluster',
    `--data-dir=${paths.etcd}`,
    `--listen-client-urls=${etcdClient}`,
    `--advertise-client-urls=${etcdClient}`,
    `--listen-peer-urls=${etcdPeer}`,
    `--initial-advertise-peer-urls=${etcdPeer}`,
    `--initial-cluster=herald-cluster=${etcdPeer}`,
    '--initial-cluster-state=new',
    '--logger=zap',
    '--log-outputs=stderr',
  ];
}

/**
 * @param {ClusterPaths} paths
 * @param {string} nodeIp
 */
function apiserverArgs(paths, nodeIp) {
  /** @param {string} f */
  const pki = (f) => path.join(paths.pki, f);
  return [
    `--advertise-address=${nodeIp}`,
    `--bind-address=${nodeIp}`,
    `--secure-port=${ports.apiserver}`,
    `--etcd-servers=${etcdClient}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    `--token-auth-file=${pki('tokens.csv')}`,
    `--client-ca-file=${pki('ca.crt')}`,
    `--tls-cert-file=${pki('apiserver.crt')}`,
    `--tls-private-key-file=${pki('apiserver.key')}`,
    `--kubelet-client-certificate=${pki('apiserver-kubelet-client.crt')}`,
    `--kubelet-client-key=${pki('apiserver-kubelet-client.key')}`,
    `--kubelet-certificate-authority=${pki('ca.crt')}`,
    '--kubelet-preferred-address-types=InternalIP,Hostname',
    `--service-account-issuer=https://kubernetes.default.svc.${CLUSTER_DOMAIN}`,
    `--service-account-key-file=${pki('sa.pub')}`,
    `--service-account-signing-key-file=${pki('sa.key')}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction,PodSecurity',
    '--profiling=false',
  ];
}

/** @param {ClusterPaths} paths */
function controllerManagerArgs(paths) {
  /** @param {string} f */
  const pki = (f) => path.join(paths.pki, f);
  return [
    ...delegated(path.join(paths.config, 'controller-manager.kubeconfig')),
    '--bind-address=127.0.0.1',
    `--secure-port=${ports.controllerManager}`,
    // the kubelet's config names its podCIDR; nothing allocates node ranges
    '--controllers=*,-nodeipam',
    `--service-account-private-key-file=${pki('sa.key')}`,
    `--root-ca-file=${pki('ca.crt')}`,
    '--use-service-account-credentials=true',
    `--cluster-signing-cert-file=${pki('ca.crt')}`,
    `--cluster-signing-key-file=${pki('ca.key')}`,
    '--leader-elect=false',
    '--profiling=false',
  ];
}
