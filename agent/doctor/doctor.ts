/**
 * @module `rackside doctor`'s run: calls the probes (injected as {@link DoctorProbes} so the
 * order and the fallbacks are tested without a machine), hands each result to its check, and
 * returns the table lines in a fixed order. The slow probes (the DHCP listen window, the
 * controller, the BMCs) run while the local ones do.
 */
import { bootAssetsDir } from '../boot/assets-dir.js';
import type { Config } from '../config.js';
import { checkConfig, checkDhcpReceiveBuffer, checkDhcpServers, checkInterface, checkPort, isRacksideHolder, portsToCheck, type PortNeed } from './checks.js';
import { checkInterface6 } from './checks-ipv6.js';
import { checkDhcp6Servers } from './checks-dhcp6.js';
import { duidLlHex } from '../../bootsvc/index.js';
import { checkAssets, checkBmcs, checkBusybox, checkClock, checkController, checkEraseKey, checkEventLoopPriority, checkKernel, checkRamdiskBuild, checkStateDir } from './checks-host.js';
import { checkUnusedSections } from './checks-config.js';
import { checkBootHttps } from './checks-https.js';
import { publicHost } from '../boot/boot-https.js';
import type {
  AssetProbe, BmcProbe, BootHttpsProbe, CheckResult, ConfigProbe, ControllerProbe, Dhcp6Probe, DhcpProbe, EraseKeyProbe, FileProbe, InterfaceProbe, PortProbe, RamdiskBuildProbe, StateDirProbe,
} from './types.js';

/** Everything the doctor observes. probes.ts and probe-net.ts provide the real ones ({@link createSystemProbes}). */
export interface DoctorProbes {
  config(path: string): Promise<ConfigProbe>;
  /** The config the other checks use when the file is missing or invalid. */
  defaultConfig(): Config;
  iface(name: string): Promise<InterfaceProbe>;
  port(need: PortNeed): Promise<PortProbe>;
  dhcp(iface: InterfaceProbe, listenMs: number): Promise<DhcpProbe>;
  /** The DHCPv6 rogue-server probe (run when `provisioning.address` has an IPv6 entry); absent: not probed. */
  dhcp6?(iface: InterfaceProbe, listenMs: number): Promise<Dhcp6Probe>;
  assets(assetsDir: string): Promise<AssetProbe[]>;
  kernel(config: Config): Promise<FileProbe>;
  busybox(config: Config): Promise<FileProbe>;
  /** The agent's background ramdisk build (status file and manifest). */
  ramdiskBuild(config: Config): Promise<RamdiskBuildProbe>;
  /** Boot HTTPS's certificate and stub (undefined without `http.tls`); absent: not probed. */
  bootHttps?(config: Config, bootHost: string): Promise<BootHttpsProbe | undefined>;
  stateDir(path: string): Promise<StateDirProbe>;
  /** The erase record signing key in the state directory. */
  eraseKey(stateDir: string): Promise<EraseKeyProbe>;
  controller(config: Config): Promise<ControllerProbe>;
  bmcs(config: Config): Promise<BmcProbe>;
  /** `net.core.rmem_max` in bytes, or undefined when it cannot be read. */
  rmemMax(): Promise<number | undefined>;
  /** The nice value of thread `pid` (the running agent's event loop), or undefined when it cannot be read. */
  threadNice(pid: number): Promise<number | undefined>;
  nowMs(): number;
}

/** What to examine. */
export interface DoctorOptions {
  configPath: string;
  /** How long to listen for DHCP offers (default 3000 ms). */
  dhcpListenMs?: number;
}

/** Where rackside looks for unpacked boot assets: `<stateDir>/boot-assets` (bootsvc DEFAULT_ASSETS_DIR under the default state dir). */
export function assetsDirOf(config: Config): string {
  return bootAssetsDir(config);
}

/** The boot-service lines (interface, ports, DHCP servers, receive buffer, event loop, assets, ramdisk) of the local provisioner. */
async function bootServiceChecks(config: Config, options: DoctorOptions, probes: DoctorProbes): Promise<CheckResult[]> {
  if (config.provisioner !== 'local') {
    // agent/provisioner/backends.ts: only the local provisioner starts boot services and builds a ramdisk.
    return [{ check: 'boot services', status: 'skip', detail: `the ${config.provisioner} provisioner runs no DHCP, TFTP, boot HTTP or ramdisk: their checks are skipped`, fix: '' }];
  }
  const ifaceName = config.provisioning.interface;
  const iface = ifaceName === undefined ? undefined : await probes.iface(ifaceName);
  const dhcpPromise: Promise<DhcpProbe> = iface === undefined
    ? Promise.resolve({ state: 'not-run', reason: 'no provisioning.interface configured' })
    : probes.dhcp(iface, options.dhcpListenMs ?? 3000);
  const dhcp6Promise: Promise<Dhcp6Probe> = iface === undefined || config.provisioning.address6 === undefined || probes.dhcp6 === undefined
    ? Promise.resolve({ state: 'not-run', reason: 'no provisioning.interface with an IPv6 address configured' })
    : probes.dhcp6(iface, options.dhcpListenMs ?? 3000);
  const ports: CheckResult[] = [];
  let agentPid: number | undefined;
  for (const need of portsToCheck(config)) {
    const probe = await probes.port(need);
    agentPid ??= probe.holders.find((holder) => isRacksideHolder(holder) && holder.pid !== undefined)?.pid;
    ports.push(checkPort(need, probe, ifaceName));
  }
  const assets = checkAssets(await probes.assets(assetsDirOf(config)), assetsDirOf(config));
  const ours = [...(iface?.addresses.map((a) => a.address) ?? []), ...(config.provisioning.address === undefined ? [] : [config.provisioning.address])];
  return [
    checkInterface(config, iface),
    ...[checkInterface6(config, iface)].filter((line) => line !== undefined),
    ...ports,
    checkDhcpServers(config, await dhcpPromise, ours),
    ...[checkDhcp6Servers(config, await dhcp6Promise, iface?.mac === undefined ? undefined : duidLlHex(iface.mac))].filter((line) => line !== undefined),
    checkDhcpReceiveBuffer(config, await probes.rmemMax()),
    checkEventLoopPriority(agentPid, agentPid === undefined ? undefined : await probes.threadNice(agentPid)),
    ...assets,
    checkKernel(config, await probes.kernel(config)),
    checkBusybox(await probes.busybox(config)),
    checkRamdiskBuild(await probes.ramdiskBuild(config)),
    ...checkBootHttps(config, await probes.bootHttps?.(config, publicHost(config)), publicHost(config)),
  ];
}

/** Runs every check; resolves to the table lines in display order. Never throws for a failed probe. */
export async function runDoctor(options: DoctorOptions, probes: DoctorProbes): Promise<CheckResult[]> {
  const configProbe = await probes.config(options.configPath);
  const config = configProbe.state === 'ok' ? configProbe.config : probes.defaultConfig();
  const controllerPromise = probes.controller(config);
  const bmcPromise = probes.bmcs(config);
  const boot = await bootServiceChecks(config, options, probes);
  const stateProbe = await probes.stateDir(config.agent.stateDir);
  return [
    checkConfig(configProbe),
    ...(configProbe.state === 'ok' ? checkUnusedSections(config) : []),
    ...boot,
    checkStateDir(stateProbe),
    checkClock(probes.nowMs(), stateProbe),
    checkEraseKey(await probes.eraseKey(config.agent.stateDir)),
    checkController(await controllerPromise),
    ...checkBmcs(await bmcPromise),
  ];
}
