// `down`: stops every component and removes what pods leave on the machine (mounts, the bridge,
// iptables chains, pod cgroups, CNI leases), restoring the kernel settings `up` changed; the
// cluster's data stays. Idempotent.
import fs from 'node:fs';
import { StackError, say } from '@herald/stack/output.mjs';
import { cmdline, isRoot, run, sleep, stopProcess } from '@herald/stack/processes.mjs';
import { CRI_RESET } from './build.mjs';
import { bins, paths, pidFile, rel, running } from './components.mjs';
import { COMPONENTS } from './config.mjs';
import {
  cleanIptables,
  podProcesses,
  removeBridge,
  removeCniCache,
  removePodCgroups,
  removeRunFolders,
  restoreKernel,
  unmountBelow,
} from './host.mjs';

/** containerd-shim processes serving our containerd (its socket is in their command line). */
function ourShims() {
  const pids = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cl = cmdline(Number(entry));
    if (cl?.includes('containerd-shim') && cl.includes(paths.containerdSocket)) {
      pids.push(Number(entry));
    }
  }
  return pids;
}

export async function down() {
  if (!isRoot) throw new StackError('cluster', 'runs as root (containerd, kubelet, iptables)');
  const stop = async (name) => {
    const pid = running(name);
    if (!pid) return;
    const how = await stopProcess(pid, { timeoutMs: 30000 });
    fs.rmSync(pidFile(name), { force: true });
    say(`cluster: ${name} ${how}`);
  };
  // the kubelet first, so that nothing restarts the pods removed next
  await stop('kubelet');
  const criReset = bins()[CRI_RESET];
  if (running('containerd') && fs.existsSync(criReset)) {
    const result = await run(criReset, [`unix://${paths.containerdSocket}`], {
      check: false,
      timeoutMs: 240000,
    });
    for (const line of `${result.stdout}${result.stderr}`.trim().split('\n').filter(Boolean)) {
      say(`cluster: ${line}`);
    }
  }
  for (const name of [...COMPONENTS].reverse()) await stop(name);
  if (fs.existsSync(bins()['kube-proxy'])) {
    await run(bins()['kube-proxy'], ['--cleanup'], { check: false, timeoutMs: 60000 });
  }
  for (const pid of ourShims()) {
    await stopProcess(pid, { timeoutMs: 5000 });
    say(`cluster: stopped leftover containerd shim ${pid}`);
  }
  const leftovers = podProcesses();
  const cgroups = removePodCgroups();
  if (leftovers.length > 0) say(`cluster: killed ${leftovers.length} leftover pod processes`);
  if (cgroups > 0) say(`cluster: removed ${cgroups} pod cgroups`);
  await sleep(200);
  const unmounted = fs.existsSync(paths.base) ? await unmountBelow(paths.base) : [];
  if (unmounted.length > 0)
    say(`cluster: unmounted ${unmounted.length} mounts below ${rel(paths.base)}`);
  if (await removeBridge()) say('cluster: removed the bridge link');
  const chains = await cleanIptables();
  if (chains.length > 0) say(`cluster: removed iptables chains ${chains.join(' ')}`);
  const otherContainerd = fs
    .readdirSync('/proc')
    .some((e) => /^\d+$/.test(e) && /(^|\/)containerd( |$)/.test(cmdline(Number(e)) ?? ''));
  const runFolders = removeRunFolders(otherContainerd);
  if (runFolders.length > 0) say(`cluster: removed empty ${runFolders.join(' ')}`);
  const cached = removeCniCache();
  if (cached > 0) say(`cluster: removed ${cached} CNI result cache entries`);
  // leases of pods that no longer exist; a lease left here would keep its address taken
  fs.rmSync(paths.cniIpam, { recursive: true, force: true });
  const restored = restoreKernel(paths.state);
  if (restored.length > 0) say(`cluster: restored ${restored.join(' ')}`);
  say('cluster: down');
}
