/**
 * @module Starts the boot services on the provisioning network from the config: boot HTTP (iPXE
 * scripts, boot assets, the ramdisk and its callback endpoints), DHCP (full, proxy or off),
 * DHCPv6 (full or off, `boot-services6.ts`) and TFTP, all answering from one StoreBootLookup (over the provisioner's boot intents) and feeding
 * one flight recorder. Stops them in
 * reverse order.
 */
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Router } from 'express';
import type { BootLookup } from '../../bootsvc/index.js';
import {
  TurnBudget, checkBootAssets, familyUrls, formatBootAssetReport, isGeneratedRoute, renderBootFile, routeBootPath, startBootHttpServer, startDhcpServer, startTftpServer,
  toTftpBootEvent,
} from '../../bootsvc/index.js';
import { bootHttpBaseUrl6, startDhcp6 } from './boot-services6.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { EventLog, HostReader, LeaseSublevel } from '../store/types.js';
import type { BootIntentSource } from './boot-intent.js';
import { createStoreBootLookup } from './boot-lookup.js';
import { createFlightRecorder } from './flight-recorder.js';
import { createLeaseStore } from './lease-store.js';
import { tftpMountsOf } from './tftp-mounts.js';
import { bootAssetsDir } from './assets-dir.js';
import { baseUrlOf, bootHttpsListener, publicHost } from './boot-https.js';
import { UKI_MOUNT, UnifiedImages, withUnifiedImages } from './unified-images.js';
import type { RamdiskDefaults } from './host-boot-plan.js';
import { HEAD_NODE_ARCH, RAMDISK_ARCHES, ramdiskSubdir, UKI_STUB_X64 } from '../../images/index.js';

/** Running boot services. */
export interface BootServices {
  /** Base URL of boot HTTP as hosts reach it. */
  httpBaseUrl: string;
  /** What each service reports (for /metrics and the status page). */
  stats(): Record<string, unknown>;
  stop(): Promise<void>;
}

/** What the boot services need from the rest of the agent. */
export interface BootServicesOptions {
  config: Config;
  store: HostReader & EventLog & LeaseSublevel;
  logger: Logger;
  /** The ramdisk callback endpoints (the local provisioner's). */
  ramdiskRouter: Router;
  /** What each host boots and with which ramdisk token (the provisioner's, boot-intent.ts). */
  intents: BootIntentSource;
  /** More directories served by boot HTTP (prefix → directory, created when missing): OS images, config drives. */
  mounts?: Readonly<Record<string, string>>;
  /** Most file body bytes per second boot HTTP sends (the boot governor's HTTP budget); none: no limit. */
  httpBytesPerSecond?: number;
  /**
   * With `dhcp.unknownHosts: discover`: what unknown MACs boot (agent/discovery/discovery-boot.ts)
   * and the discovery report route. DHCP, boot HTTP and TFTP all ask the same lookup.
   */
  discovery?: { lookup: BootLookup; routes: Router };
}

/** The ramdisk every network boot gets (kernel, initrd, agent URL, extra kernel parameters). */
export function ramdiskDefaultsOf(config: Config): RamdiskDefaults {
  return {
    kernel: '/ramdisk/vmlinuz', initrds: ['/ramdisk/initrd'], agentUrl: bootHttpBaseUrl(config),
    // Other architectures' ramdisks lie beside the head node's (`ramdisk/arm64/`: images/debian-arch.ts ramdiskSubdir).
    byArch: Object.fromEntries(RAMDISK_ARCHES.filter((a) => a !== HEAD_NODE_ARCH).map((a) => [a, { kernel: `/${ramdiskSubdir(a, HEAD_NODE_ARCH)}/vmlinuz`, initrds: [`/${ramdiskSubdir(a, HEAD_NODE_ARCH)}/initrd`] }])),
    ...(config.images.ramdisk.kernelParams !== undefined ? { extraKernelParams: config.images.ramdisk.kernelParams } : {}),
  };
}

/** Returns boot HTTP's base URL as hosts reach it (`http://<provisioning address>:<http port>`). */
export function bootHttpBaseUrl(config: Config): string {
  return baseUrlOf('http', publicHost(config), config.http.listen.port);
}

/** Starts boot HTTP, then DHCP; a failure part-way stops what was started. */
export async function startBootServices(options: BootServicesOptions): Promise<BootServices> {
  const { config, store, logger } = options;
  const log = logger.child({ component: 'bootsvc' });
  const httpBaseUrl = bootHttpBaseUrl(config);
  const httpBaseUrl6 = bootHttpBaseUrl6(config);
  const ramdiskDir = join(config.images.cacheDir, 'ramdisk');
  await mkdir(ramdiskDir, { recursive: true, mode: 0o755 });
  for (const dir of Object.values(options.mounts ?? {})) await mkdir(dir, { recursive: true, mode: 0o755 });
  const assets = await checkBootAssets({ assetsDir: bootAssetsDir(config) });
  if (!assets.ok) log.warn(formatBootAssetReport(assets));
  const lookup = createStoreBootLookup({
    hosts: store,
    intents: options.intents,
    httpBaseUrl,
    ramdisk: ramdiskDefaultsOf(config),
  });
  const discoveryLookup = config.dhcp.unknownHosts === 'discover' ? options.discovery?.lookup : undefined;
  if (config.dhcp.unknownHosts === 'discover' && discoveryLookup === undefined) log.warn('dhcp.unknownHosts is discover but this provisioner cannot discover hosts: unknown MACs get nothing to boot');
  const recorder = createFlightRecorder({ store, logger: log });
  const stops: (() => Promise<void>)[] = [
    () => recorder.close(),
  ];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => { log.warn({ err }, 'stopping a boot service failed'); });
  };
  const ukiDir = join(config.images.cacheDir, UKI_MOUNT);
  if (config.http.tlsBoot === 'on') {
    await mkdir(ukiDir, { recursive: true, mode: 0o755 });
    if (!(await access(UKI_STUB_X64).then(() => true, () => false))) log.warn({ stub: UKI_STUB_X64 }, 'http.tlsBoot is on but the systemd-boot stub is missing (apt-get install systemd-boot-efi): hosts boot through iPXE');
  }
  const httpMounts = { ...options.mounts, ramdisk: ramdiskDir, ...(config.http.tlsBoot === 'on' ? { [UKI_MOUNT]: ukiDir } : {}) };
  // One handling budget per event-loop turn over DHCP, TFTP and boot HTTP: a rack powering on
  // at once is answered over several turns, so timers and the management API keep their turns.
  const turnBudget = new TurnBudget();
  try {
    const https = await bootHttpsListener(config);
    if (https !== undefined) log.info({ url: https.publicUrl, certificate: https.source }, 'boot HTTPS listener configured');
    // http.tlsBoot: the firmware's own UEFI HTTP boot requests of x64 hosts get the host's unified
    // image (unified-images.ts), whose ramdisk calls back over this listener, trusting `https.trustPem`.
    const dhcpLookup = config.http.tlsBoot === 'on' && https !== undefined
      ? withUnifiedImages(lookup, new UnifiedImages({
        dir: ukiDir, ramdiskDir, tls: { agentUrl: https.publicUrl, caPem: https.trustPem },
        onError: (mac, err) => { log.warn({ err, mac }, 'boot HTTPS: cannot build the host\'s unified kernel image; it boots through iPXE'); },
      }))
      : lookup;
    const http = await startBootHttpServer({
      ...(https === undefined ? {} : { tls: { cert: https.cert, key: https.key, port: https.port, host: https.host, publicUrl: https.publicUrl } }),
      host: config.http.listen.host,
      port: config.http.listen.port,
      publicUrl: httpBaseUrl,
      ...(httpBaseUrl6 === undefined ? {} : { publicUrl6: httpBaseUrl6 }),
      ...(options.httpBytesPerSecond !== undefined ? { maxBytesPerSecond: options.httpBytesPerSecond } : {}),
      ...(config.http.root !== undefined ? { root: config.http.root } : {}),
      mounts: httpMounts,
      sendfile: config.http.sendfile === 'on' ? {} : false,
      assets: assets.assets,
      plans: lookup,
      unknownHosts: config.dhcp.unknownHosts,
      ...(discoveryLookup === undefined ? {} : { discoveryLookup }),
      onEvent: (event) => {
        recorder.record(event);
      },
      extraRoutes: (app) => {
        app.use(options.ramdiskRouter);
        if (options.discovery !== undefined) app.use(options.discovery.routes);
      },
      turnBudget,
    });
    stops.push(() => http.stop());
    const dhcpConfig = config.dhcp;
    const provisioning = config.provisioning;
    let dhcpStats: () => unknown = () => ({ mode: 'off' });
    if (dhcpConfig.mode !== 'off' && provisioning.interface !== undefined && provisioning.address !== undefined) {
      const dhcp = await startDhcpServer({
        mode: dhcpConfig.mode,
        interface: provisioning.interface,
        serverAddress: provisioning.address,
        ranges: dhcpConfig.ranges.map((r) => ({ subnet: r.subnet, first: r.first, last: r.last, ...(r.router !== undefined ? { router: r.router } : {}), dns: r.dns })),
        leaseSeconds: dhcpConfig.leaseSeconds,
        unknownHosts: dhcpConfig.unknownHosts,
        bootLookup: dhcpLookup,
        ...(discoveryLookup === undefined ? {} : { discoveryLookup }),
        bootFiles: { httpBaseUrl, ...(https === undefined ? {} : { httpsBaseUrl: https.publicUrl }) },
        leaseStore: createLeaseStore(store.leases),
        onEvent: (event) => {
          recorder.record(event);
        },
        log: (level, message, fields) => {
          log[level]({ ...fields, component: 'bootsvc:dhcp' }, message);
        },
        turnBudget,
      });
      stops.push(() => dhcp.stop());
      dhcpStats = () => dhcp.stats();
    }
    const dhcp6 = await startDhcp6({
      config, leases: store.leases, lookup, ...(discoveryLookup === undefined ? {} : { discoveryLookup }), turnBudget,
      onEvent: (event) => { recorder.record(event); },
      log: (level, message, fields) => { log[level]({ ...fields, component: 'bootsvc:dhcp6' }, message); },
    });
    if (dhcp6 !== undefined) stops.push(() => dhcp6.stop());
    // TFTP serves the first stage (iPXE, shim, GRUB) and per-MAC GRUB configs to firmware that
    // network-boots without an iPXE ROM. It runs on a configured provisioning network only.
    let tftpStats: () => unknown = () => ({ running: false });
    if (provisioning.interface !== undefined) {
      const assetNames = new Set(assets.assets.keys());
      const tftp = await startTftpServer({
        listen: config.tftp.listen,
        roots: config.tftp.root === undefined ? [] : [config.tftp.root],
        maxTransfers: config.tftp.maxTransfers,
        transferThread: config.tftp.transferThread === 'on',
        turnBudget,
        // GRUB (Secure Boot, arm64) loads the ramdisk kernel and initrd over TFTP: streamed by the server.
        mounts: tftpMountsOf(httpMounts),
        resolve: async (path, client) => {
          const route = routeBootPath(path, { assetNames, percentEncoded: false });
          if (route.kind === 'asset') {
            // Streamed from the file, its chunks shared by every client fetching it (a PXE storm).
            const file = assets.assets.get(route.name);
            return file === undefined ? undefined : { file };
          }
          if (isGeneratedRoute(route)) {
            // A GRUB config fetched over IPv6 names the IPv6 callback URL (docs/ipv6.md).
            const rendered = await renderBootFile(route, {
              plans: lookup, unknownHosts: config.dhcp.unknownHosts, ...(discoveryLookup === undefined ? {} : { discoveryLookup }),
              ...familyUrls(client.address, httpBaseUrl, httpBaseUrl6),
            });
            return Buffer.from(rendered.body);
          }
          // The ramdisk mount, then the root; probes (shim's revocations_*.efi …) and unknown names get a fast "file not found".
          return undefined;
        },
        onEvent: (event) => {
          // Listener-level failures belong to no client's timeline: they go to the log (and a Warning event).
          if (event.type === 'server-error') {
            log.warn({ component: 'bootsvc:tftp', error: event.message }, 'TFTP server error');
            void store.appendEvents([{ time: new Date(event.atMs).toISOString(), type: 'Warning', reason: 'TftpServerError', message: event.message, source: 'bootsvc:tftp' }]).catch(() => undefined);
            return;
          }
          const bootEvent = toTftpBootEvent(event);
          if (bootEvent !== undefined) recorder.record(bootEvent);
        },
      });
      stops.push(() => tftp.stop());
      tftpStats = () => tftp.stats();
    }
    log.info({ httpBaseUrl, ...(http.tlsUrl === undefined ? {} : { httpsBaseUrl: http.tlsUrl }), dhcp: dhcpConfig.mode, interface: provisioning.interface }, 'boot services started');
    return {
      httpBaseUrl,
      stats: () => ({ http: http.stats(), dhcp: dhcpStats(), dhcp6: dhcp6?.stats() ?? { mode: 'off' }, tftp: tftpStats(), recorder: recorder.stats(), turnBudget: turnBudget.stats() }),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
