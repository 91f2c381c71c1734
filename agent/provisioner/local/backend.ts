/**
 * @module The local provisioner opened as a backend (../backend.ts): BMC drivers built by the
 * built-in registry with every call recorded, the node table, the per-host ISOs of
 * virtual-media hosts, the boot governor (config `governor`), the factory, the ramdisk
 * callback routes and the boot intents the boot services answer from.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DriverRegistry, registerBuiltinDrivers } from '../../../drivers/index.js';
import { BmcCallRecorder } from '../../bmc/bmc-call-recorder.js';
import { bootHttpBaseUrl } from '../../boot/boot-services.js';
import { bootHttpsBaseUrl } from '../../boot/boot-https.js';
import { BootGovernor, governorLimits, ramdiskSizesIn } from '../../boot/governor.js';
import { registerGovernorMetrics } from '../../boot/governor-metrics.js';
import { steadyNowMs } from '../../clock.js';
import type { BackendDeps, ProvisionerBackend } from '../backend.js';
import { localBootMounts, localImageDirs, openLazyImageCache } from './image-prep.js';
import { LocalFactory } from './local-provisioner.js';
import { NodeBootIntents } from './node-intents.js';
import type { ClientArch } from '../../../bootsvc/index.js';
import { NodeTable } from './node-table.js';
import { createRamdiskRouter } from './ramdisk-service.js';
import { HostIsoSource } from './vmedia-iso.js';
import { defaultNetworkDataOf } from './default-network-data.js';
import { RamdiskBuildSet } from './ramdisk-build-set.js';
import { bootsTheIso } from './ramdisk-boot.js';
import { VERSION } from '../../version.js';

/** The background ramdisk builds, one per architecture, under the config `images` (ramdisk-build-set.ts), or none when `deps.ramdiskBuild` is `off`. */
function openRamdiskBuilds(deps: BackendDeps): RamdiskBuildSet | undefined {
  if (deps.ramdiskBuild === 'off') return undefined;
  const { cacheDir, ramdisk } = deps.config.images;
  const kernel = ramdisk.kernel === undefined
    ? { kind: 'debian' as const }
    : ramdisk.modules === undefined
      ? `images.ramdisk.kernel is set (${ramdisk.kernel}) without images.ramdisk.modules, its /lib/modules/<release> tree`
      : { kind: 'tree' as const, vmlinuzPath: ramdisk.kernel, modulesDir: ramdisk.modules };
  return new RamdiskBuildSet({
    cacheDir, kernel, agentVersion: VERSION, events: deps.store, logger: deps.logger.child({ component: 'ramdisk-build' }), wake: deps.wake, nowMs: steadyNowMs,
    ...(ramdisk.kernelParams === undefined ? {} : { isoKernelArgs: ramdisk.kernelParams }),
  });
}

/** metal3's spelling of a DHCP client architecture (RFC 4578 option 93), or undefined for one no ramdisk is built for. */
function metal3ArchOf(arch: ClientArch | undefined): string | undefined {
  return arch === 'arm64' ? 'aarch64' : arch === 'x86_64' || arch === 'x86' ? 'x86_64' : undefined;
}

/** The boot governor under the configured budgets (config `governor`), or none. */
async function openGovernor(deps: BackendDeps): Promise<BootGovernor | undefined> {
  const { config, logger } = deps;
  const budgets = await governorLimits(config.governor, config.provisioning.interface);
  if (budgets?.warning !== undefined) logger.warn(budgets.warning);
  if (budgets === undefined || Object.keys(budgets.limits).length === 0) return undefined;
  const governor = new BootGovernor({
    limits: budgets.limits, nowMs: steadyNowMs, wake: deps.wake, ramdiskSizes: ramdiskSizesIn(join(config.images.cacheDir, 'ramdisk'), steadyNowMs),
  });
  logger.info({ budgets: governor.limits }, 'boot governor on');
  return governor;
}

/** Opens the local provisioner (see the module comment). */
export async function openLocalBackend(deps: BackendDeps): Promise<ProvisionerBackend> {
  const { config, store } = deps;
  const bmcCalls = new BmcCallRecorder();
  const drivers = new DriverRegistry();
  // Config `bmc.ipmi.cipherSuites`: every ipmi:// BMC's allowed suites (a host's annotation still wins).
  registerBuiltinDrivers(drivers, config.bmc.ipmi === undefined ? {} : { ipmi: { cipherSuites: config.bmc.ipmi.cipherSuites } });
  const nodes = new NodeTable(store.nodes, store.inventories);
  // The OS image cache opens on first use; its limit is 80% of the space it could use (image-prep.ts).
  const imageDirs = localImageDirs(config.images.cacheDir);
  const httpBaseUrl = bootHttpBaseUrl(config);
  const httpsBaseUrl = bootHttpsBaseUrl(config);
  // Config drives of hosts without a networkData secret on an IPv6 provisioning network (docs/ipv6.md).
  const defaultNetworkData = defaultNetworkDataOf(config);
  // Virtual-media hosts boot the ISO of `rackside images build --format iso`, beside the initrd.
  const hostIso = new HostIsoSource({ ramdiskDir: join(config.images.cacheDir, 'ramdisk'), httpBaseUrl });
  // Power-ons into network boots wait their turn under the configured budgets (config `governor`).
  const governor = await openGovernor(deps);
  // Hosts that need a ramdisk not built yet wait for the background build (config `images`).
  const ramdisk = openRamdiskBuilds(deps);
  // The boot lookup's view of each host's intent; it also remembers the DHCP client architecture.
  const intents = new NodeBootIntents(nodes);
  const factory = new LocalFactory({
    store,
    nodes,
    drivers,
    bmcCalls,
    // Deadlines, token expiry, fast-track and power-sweep ages: steady, immune to wall-clock jumps (clock.ts).
    nowMs: steadyNowMs,
    newId: randomUUID,
    powerSweep: { intervalMs: config.bmc.powerPollSeconds * 1000, concurrency: config.bmc.concurrency },
    maxBusyHosts: config.reconcile.provisioningLimit,
    // One request per power change, then the BMC is read every 0.5 s until it shows it (power-intents.ts).
    wake: deps.wake,
    ...(config.bmc.powerStateChangeTimeoutSeconds === undefined ? {} : { power: { changeTimeoutMs: config.bmc.powerStateChangeTimeoutSeconds * 1000 } }),
    images: { source: openLazyImageCache(imageDirs.osCacheDir), httpBaseUrl, configDriveDir: imageDirs.configDriveDir, ...(defaultNetworkData === undefined ? {} : { defaultNetworkData }) },
    hostIso,
    ...(governor === undefined ? {} : { governor }),
    ...(ramdisk === undefined ? {} : { ramdisk }),
    // Which architecture's ramdisk a host waits for: spec.architecture, else what its firmware told DHCP, else what inspection found.
    hostArchitecture: async (name) => {
      const host = await store.getHost(name);
      if (host === undefined) return '';
      return host.spec.architecture ?? metal3ArchOf(intents.clientArch(host.metadata.uid)) ?? host.status.hardware?.cpu.arch ?? '';
    },
  });
  const httpBytesPerSecond = governor?.limits.httpBytesPerSecond;
  return {
    factory,
    boot: {
      routes: createRamdiskRouter({
        store, nodes, nowMs: steadyNowMs, hostIso, onOperationFinished: deps.wake, recordClean: deps.recordClean,
        // A ramdisk calling over boot HTTPS fetches its image and config drive over it too.
        ...(httpsBaseUrl === undefined ? {} : { bootBases: { plain: httpBaseUrl, tls: httpsBaseUrl } }),
      }),
      // Tokens are made through the table the ramdisk API finds them in.
      intents,
      mounts: localBootMounts(config.images.cacheDir),
      ...(httpBytesPerSecond === undefined ? {} : { httpBytesPerSecond }),
    },
    status: {
      bmc: (hosts) => hosts.map((h) => ({ host: h.metadata.name, address: h.spec.bmc?.address ?? '', entry: factory.powerEntry(h.metadata.uid) })),
      images: () => factory.imageDownloads(),
      ...(ramdisk === undefined ? {} : { ramdisks: () => ramdisk.all() }),
    },
    metrics: {
      bmcCalls,
      register: (registry) => {
        if (governor !== undefined) registerGovernorMetrics(registry, () => governor.stats());
        ramdisk?.register(registry);
      },
    },
    // After a restart the hosts already inspecting, provisioning or deprovisioning hold their places.
    start: async () => {
      const hosts = await store.listHosts();
      factory.countBusyHosts(hosts);
      ramdisk?.start(hosts.some((h) => bootsTheIso(h.spec.bmc?.address ?? '')));
    },
    stop: async () => {
      await ramdisk?.stop();
      governor?.close();
      await factory.close();
    },
  };
}
