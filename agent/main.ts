/**
 * @module The daemon: reads the config, opens the store, starts the management API and the
 * host reconciler, and shuts down cleanly on SIGTERM/SIGINT (finish in-flight writes, close
 * the store). The only module besides cli.ts that reads env, installs signal handlers and
 * registers built-in drivers (docs/architecture.md, rule 4).
 */
import { readFile, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { getPriority, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from './config.js';
import { ConfigError, DEFAULT_CONFIG_PATH, decodeConfig, parseConfigYaml } from './config.js';
import { HostService } from './host/service.js';
import { emptyHostStatus } from './host/validation.js';
import { Reconciler } from './host/reconciler.js';
import type { BareMetalHost } from './host/types.js';
import { createLogger, isLogLevel, setLogLevel, type Logger } from './log.js';
import { createAgentMetrics } from './metrics.js';
import { createNotifier, type NotifyEnvironment } from './sd-notify.js';
import { ValidationError } from './errors.js';
import express from 'express';
import { DEMO_HOSTS, DemoFactory } from './provisioner/demo.js';
import { Fixture } from './provisioner/fixture.js';
import type { Factory } from './provisioner/index.js';
import { openStore } from './store/index.js';
import { registerBuiltinDrivers } from '../drivers/index.js';
import { BmcCallRecorder, InstrumentedDriverRegistry } from './bmc/bmc-call-recorder.js';
import { describeClockJump, steadyNowMs, watchClockJumps } from './clock.js';
import { bootHttpBaseUrl, startBootServices, type BootServices } from './boot/boot-services.js';
import type { RamdiskTokens } from './boot/boot-lookup.js';
import { BootGovernor, governorLimits, ramdiskSizesIn } from './boot/governor.js';
import type { BudgetLimits } from './boot/governor-budget.js';
import { registerGovernorMetrics } from './boot/governor-metrics.js';
import { localBootMounts, localImageDirs, openLazyImageCache } from './provisioner/local/image-prep.js';
import { LocalFactory } from './provisioner/local/local-provisioner.js';
import { NodeTable } from './provisioner/local/node-table.js';
import { openEraseRecordBook } from './erase/open.js';
import { createEraseRecorder, type EraseRecorder } from './erase/recorder.js';
import { createEraseRecordRouter } from './erase/routes.js';
import { createRamdiskRouter } from './provisioner/local/ramdisk-service.js';
import { HostIsoSource } from './provisioner/local/vmedia-iso.js';
import { mountTimelineRoutes } from './web/boot-routes.js';
import { listenManagement } from './web/management-listener.js';
import { describeDamage } from './store/log-recovery.js';
import { createStatusPage, statusReportHandler } from './web/ui/index.js';
import { countPoolAddresses, createStatusReporter } from './status-report.js';
import { startRemoteAccess, type RemoteAccess } from './remote-access.js';
import { randomUUID } from 'node:crypto';
import type { Router } from 'express';
import { createSyncLoop, syncStatusHandler, type SyncLoop } from './sync/index.js';
import type { Change, Store } from './store/types.js';
import { createManagementApp } from './web/api.js';

/** The product version reported by `rackside version` and the API. */
export const VERSION = '0.1.0';

/** Exit codes of the daemon (the CLI documents the same numbers). */
export const ExitCode = { ok: 0, failure: 1, config: 2 } as const;

/** Options of {@link runAgent}. */
export interface RunAgentOptions {
  /** Config file; default /etc/rackside/rackside.yaml (none in demo mode). */
  configPath?: string;
  /** systemd's notify environment (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID); none in tests. */
  notifyEnv?: NotifyEnvironment;
  /** Run the embedded demo rack (demo provisioner, sample hosts, scratch state dir). */
  demo?: boolean;
}

/** A running agent. */
export interface RunningAgent {
  config: Config;
  store: Store;
  reconciler: Reconciler;
  sync: SyncLoop;
  server: Server;
  /** The bound management address (port resolved when configured as 0). */
  managementUrl: string;
  /** Stops everything in order; resolves when the store is closed. */
  stop(): Promise<void>;
}

/** Loads the config file, or the embedded demo config. */
async function loadConfig(options: RunAgentOptions): Promise<Config> {
  const defaults = { agentId: hostname().split('.')[0] ?? 'rackside' };
  if (options.demo === true && options.configPath === undefined) {
    return decodeConfig(
      {
        agent: { id: 'demo-rack', stateDir: join(tmpdir(), 'rackside-demo') },
        provisioner: 'demo',
        management: { listen: '127.0.0.1:8080' },
        reconcile: { timeScale: 0.05 },
      },
      defaults,
    );
  }
  const path = options.configPath ?? DEFAULT_CONFIG_PATH;
  const text = await readFile(path, 'utf8').catch((error: unknown) => {
    throw new ConfigError(path, [{ path: '', expected: 'a readable YAML file', got: error instanceof Error ? error.message : String(error) }]);
  });
  const config = parseConfigYaml(text, path, defaults);
  return options.demo === true ? { ...config, provisioner: 'demo' } : config;
}

/** The provisioner factory for the config, plus what the local one needs started beside it. */
function makeFactory(
  config: Config, store: Store, wakeHost: (name: string) => void, recordClean: EraseRecorder, governorBudgets?: BudgetLimits,
): { factory: Factory; ramdiskRouter?: Router; ramdiskTokens?: RamdiskTokens; bmcCalls?: BmcCallRecorder; governor?: BootGovernor; close(): Promise<void> } {
  switch (config.provisioner) {
    case 'fixture':
      return { factory: new Fixture({ delayScale: config.reconcile.timeScale }), close: () => Promise.resolve() };
    case 'demo':
      return { factory: new DemoFactory({ delayScale: config.reconcile.timeScale }), close: () => Promise.resolve() };
    case 'local': {
      const bmcCalls = new BmcCallRecorder();
      const drivers = new InstrumentedDriverRegistry(bmcCalls);
      registerBuiltinDrivers(drivers);
      const nodes = new NodeTable(store.nodes, store.inventories);
      // The OS image cache opens on first use; its limit is 80% of the space it could use (image-prep.ts).
      const imageDirs = localImageDirs(config.images.cacheDir);
      // Virtual-media hosts boot the ISO of `rackside images build --format iso`, beside the initrd.
      const hostIso = new HostIsoSource({ ramdiskDir: join(config.images.cacheDir, 'ramdisk'), httpBaseUrl: bootHttpBaseUrl(config) });
      // Power-ons into network boots wait their turn under the configured budgets (config `governor`).
      const governor = governorBudgets === undefined ? undefined : new BootGovernor({
        limits: governorBudgets, nowMs: steadyNowMs, wake: wakeHost, ramdiskSizes: ramdiskSizesIn(join(config.images.cacheDir, 'ramdisk'), steadyNowMs),
      });
      const factory = new LocalFactory({
        store,
        nodes,
        drivers,
        // Deadlines, token expiry, fast-track and power-sweep ages: steady, immune to wall-clock jumps (clock.ts).
        nowMs: steadyNowMs,
        newId: randomUUID,
        powerSweep: { intervalMs: config.bmc.powerPollSeconds * 1000, concurrency: config.bmc.concurrency },
        maxBusyHosts: config.reconcile.provisioningLimit,
        images: { source: openLazyImageCache(imageDirs.osCacheDir), httpBaseUrl: bootHttpBaseUrl(config), configDriveDir: imageDirs.configDriveDir },
        hostIso,
        ...(governor === undefined ? {} : { governor }),
      });
      const close = async (): Promise<void> => {
        governor?.close();
        await factory.close();
      };
      // The boot lookup creates ramdisk tokens through the table the ramdisk API finds them in.
      return { factory, ramdiskRouter: createRamdiskRouter({ store, nodes, nowMs: steadyNowMs, hostIso, onOperationFinished: wakeHost, recordClean }), ramdiskTokens: nodes, bmcCalls, ...(governor === undefined ? {} : { governor }), close };
    }
  }
}

/** The demo rack's sample hosts and their BMC secret, applied once into an empty store. */
async function seedDemoHosts(store: Store): Promise<void> {
  if ((await store.listHosts()).length > 0) return;
  const changes: Change[] = [
    {
      kind: 'secret',
      op: 'put',
      ifVersion: 'absent',
      object: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'demo-bmc-secret', namespace: 'default', uid: '', resourceVersion: '', generation: 0, creationTimestamp: '' },
        type: 'Opaque',
        data: { username: Buffer.from('admin').toString('base64'), password: Buffer.from('password').toString('base64') },
      },
    },
  ];
  DEMO_HOSTS.forEach((demo, i) => {
    const host: BareMetalHost = {
      apiVersion: 'metal3.io/v1alpha1',
      kind: 'BareMetalHost',
      metadata: { name: demo.name, namespace: 'default', uid: '', resourceVersion: '', generation: 1, creationTimestamp: '', annotations: { 'rackside.io/description': demo.description } },
      spec: {
        online: demo.withImage,
        bootMACAddress: `52:54:00:00:00:${(i + 1).toString(16).padStart(2, '0')}`,
        bmc: { address: `redfish+http://127.0.0.1:8000/redfish/v1/Systems/${demo.name}`, credentialsName: 'demo-bmc-secret' },
        ...(demo.withImage
          ? { image: { url: 'http://images.example/debian-12.qcow2', checksum: 'http://images.example/debian-12.qcow2.sha256sum', checksumType: 'sha256' as const, format: 'qcow2' as const } }
          : {}),
      },
      status: emptyHostStatus(),
    };
    changes.push({ kind: 'host', op: 'put', object: host, ifVersion: 'absent' });
  });
  await store.commit(changes);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** Starts the agent and returns handles to it (used by tests in-process and by {@link runAgent}). */
export async function startAgent(options: RunAgentOptions, logger?: Logger): Promise<RunningAgent> {
  const config = await loadConfig(options);
  const log = logger ?? createLogger({ level: config.log.level });
  if (options.demo === true && options.configPath === undefined) {
    await rm(config.agent.stateDir, { recursive: true, force: true });
  }
  const notifier = createNotifier(options.notifyEnv ?? {}, process.pid, (err) => {
    log.warn({ err }, 'systemd notification failed');
  });
  const store = await openStore({ stateDir: config.agent.stateDir });
  let provisioner: ReturnType<typeof makeFactory> | undefined;
  let boot: BootServices | undefined;
  try {
    // A ramdisk result wakes its host's reconcile at once (the reconciler is made below).
    let wakeHost: (name: string) => void = () => undefined;
    const budgets = await governorLimits(config.governor, config.provisioning.interface);
    if (budgets?.warning !== undefined) log.warn(budgets.warning);
    const governorBudgets = budgets === undefined || Object.keys(budgets.limits).length === 0 ? undefined : budgets.limits;
    // Every clean leaves a signed erase record (docs/erase-records.md); the key is made on first start.
    const eraseRecords = await openEraseRecordBook(store.eraseRecords, config.agent.stateDir, config.agent.id);
    const recordClean = createEraseRecorder({
      book: eraseRecords, getHost: (name) => store.getHost(name), agentId: config.agent.id, wallNowMs: Date.now, steadyNowMs,
    });
    provisioner = makeFactory(config, store, (name) => { wakeHost(name); }, recordClean, governorBudgets);
    const factory = provisioner.factory;
    if (provisioner.ramdiskRouter !== undefined) {
      boot = await startBootServices({
        config, store, logger: log, ramdiskRouter: provisioner.ramdiskRouter, mounts: localBootMounts(config.images.cacheDir),
        ...(provisioner.ramdiskTokens === undefined ? {} : { ramdiskTokens: provisioner.ramdiskTokens }),
        ...(governorBudgets?.httpBytesPerSecond !== undefined ? { httpBytesPerSecond: governorBudgets.httpBytesPerSecond } : {}),
      });
    }
    if (provisioner.governor !== undefined) log.info({ budgets: provisioner.governor.limits }, 'boot governor on');
    if (config.provisioner === 'demo') await seedDemoHosts(store);
    const service = new HostService({
      store,
      info: { version: VERSION, agentId: config.agent.id, provisioner: config.provisioner, startedAt: new Date().toISOString() },
    });
    const sync = createSyncLoop({ store, agentId: config.agent.id, controller: config.controller, logger: log.child({ component: 'sync' }) });
    const reconciler = new Reconciler({
      store,
      factory,
      logger: log.child({ component: 'reconciler' }),
      concurrency: config.reconcile.concurrency,
      timeScale: config.reconcile.timeScale,
      maxProvisioningRetries: 5,
    });
    wakeHost = (name) => { reconciler.wake(name); };
    const bootServices = boot;
    const metrics = createAgentMetrics({
      store, reconciler, sync,
      ...(bootServices !== undefined ? { boot: () => bootServices.stats() } : {}),
      ...(provisioner.bmcCalls !== undefined ? { bmc: provisioner.bmcCalls } : {}),
    });
    const governor = provisioner.governor;
    if (governor !== undefined) registerGovernorMetrics(metrics.registry, () => governor.stats());
    /** Set once the management listener is bound (the SSH server forwards to its port). */
    const remoteAccess: { current?: RemoteAccess } = {};
    const localFactory = provisioner.factory instanceof LocalFactory ? provisioner.factory : undefined;
    const reporter = createStatusReporter({
      nowMs: steadyNowMs,
      ...(bootServices === undefined
        ? {}
        : {
            boot: () => bootServices.stats(),
            bootConfig: {
              dhcpMode: config.dhcp.mode,
              dhcpInterface: config.provisioning.interface,
              dhcpAddress: config.provisioning.address,
              dhcpPoolAddresses: countPoolAddresses(config.dhcp.ranges),
              httpListen: `${config.http.listen.host}:${config.http.listen.port}`,
            },
          }),
      ...(localFactory === undefined
        ? {}
        : {
            bmc: async () =>
              (await store.listHosts()).map((h) => ({ host: h.metadata.name, address: h.spec.bmc?.address ?? '', entry: localFactory.powerEntry(h.metadata.uid) })),
            images: () => localFactory.imageDownloads(),
          }),
      ssh: () => ({ server: remoteAccess.current?.server ?? null, tunnel: remoteAccess.current?.tunnelStatus() ?? null }),
      onError: (section, err) => {
        log.warn({ err, section }, 'status report: a section is unavailable');
      },
    });
    const { host, port } = config.management.listen;
    const app = createManagementApp(service, {
      ...(config.management.token !== undefined ? { token: config.management.token } : {}),
      requireTokenForMutations: config.management.token !== undefined || !isLoopback(host),
      logger: log.child({ component: 'web' }),
      extraRoutes: (api) => {
        mountTimelineRoutes(api, store);
        api.use(createEraseRecordRouter(eraseRecords, config.agent.id));
        api.get('/ssh', (_req, res) => {
          res.json({ server: remoteAccess.current?.server ?? null, tunnel: remoteAccess.current?.tunnelStatus() ?? null });
        });
        api.get('/sync', syncStatusHandler(sync));
        api.get('/status', statusReportHandler(reporter));
        api.get('/log-level', (_req, res) => {
          res.json({ level: log.level });
        });
        api.put('/log-level', express.json(), (req, res) => {
          const level: unknown = (req.body as { level?: unknown } | undefined)?.level;
          if (typeof level !== 'string' || !isLogLevel(level)) {
            throw new ValidationError('level', 'must be one of fatal, error, warn, info, debug, trace, silent');
          }
          setLogLevel(log, level);
          res.json({ level });
        });
      },
      appRoutes: (root) => {
        root.use(createStatusPage({ logger: log.child({ component: 'ui' }) }));
        root.get('/metrics', (_req, res, next) => {
          metrics.render().then((text) => {
            res.type(metrics.registry.contentType).send(text);
          }, next);
        });
      },
    });
    const listener = await listenManagement(app, { host, port, stateDir: config.agent.stateDir, ...(config.management.tls !== undefined ? { tls: config.management.tls } : {}) });
    const { server, port: boundPort, url: managementUrl } = listener;
    if (store.damage !== undefined) log.error({ damage: store.damage }, `state store: ${describeDamage(store.damage)}`);
    await reconciler.start();
    await sync.start();
    const remote = await startRemoteAccess({
      config, store, managementUrl: managementUrl.replace('0.0.0.0', '127.0.0.1'), managementPort: boundPort, logger: log,
      ...(listener.socketPath !== undefined ? { managementSocket: listener.socketPath } : {}),
    });
    remoteAccess.current = remote;
    // A wall-clock step moves no timeout (clock.ts); say that it happened.
    const stopClockWatch = watchClockJumps({
      onJump: (jump) => {
        const message = describeClockJump(jump);
        log.warn({ jumpMs: jump.jumpMs }, message);
        store.appendEvents([{ time: jump.wallAfter.toISOString(), type: 'Warning', reason: 'ClockJumped', message, source: 'agent', data: { jumpMs: jump.jumpMs } }])
          .catch((err: unknown) => { log.warn({ err }, 'recording a clock jump failed'); });
      },
    });
    // eventLoopNice: the unit starts the agent at Nice=-5 (systemd/rackside.service); 0 says it was started some other way.
    log.info({ managementUrl, provisioner: config.provisioner, stateDir: config.agent.stateDir, eventLoopNice: getPriority(0) }, 'rackside agent ready');
    notifier.ready(`serving ${managementUrl} (${config.provisioner} provisioner)`);
    const watchdogMs = notifier.startWatchdog();
    if (watchdogMs !== undefined) log.info({ watchdogMs }, 'systemd watchdog pings started');
    let stopping: Promise<void> | undefined;
    return {
      config,
      store,
      reconciler,
      sync,
      server,
      managementUrl,
      stop: () => {
        stopping ??= (async () => {
          notifier.stopping();
          stopClockWatch();
          await remote.stop();
          await listener.close();
          await reconciler.stop();
          await boot?.stop();
          await provisioner?.close();
          await sync.stop();
          metrics.close();
          await store.close();
          notifier.close();
          log.info('rackside agent stopped');
        })();
        return stopping;
      },
    };
  } catch (error) {
    await boot?.stop();
    await provisioner?.close();
    await store.close();
    throw error;
  }
}

/**
 * Runs the agent until SIGTERM or SIGINT; resolves with the process exit code
 * (2 for config errors, printed with every wrong key).
 */
export async function runAgent(options: RunAgentOptions): Promise<number> {
  let agent: RunningAgent;
  try {
    const { NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID } = process.env;
    agent = await startAgent({
      ...options,
      notifyEnv: {
        ...(NOTIFY_SOCKET !== undefined ? { NOTIFY_SOCKET } : {}),
        ...(WATCHDOG_USEC !== undefined ? { WATCHDOG_USEC } : {}),
        ...(WATCHDOG_PID !== undefined ? { WATCHDOG_PID } : {}),
      },
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`error: ${error.message}\n`);
      return ExitCode.config;
    }
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return ExitCode.failure;
  }
  return new Promise<number>((resolve) => {
    const shutdown = (): void => {
      process.off('SIGTERM', shutdown);
      process.off('SIGINT', shutdown);
      agent.stop().then(
        () => { resolve(ExitCode.ok); },
        (error: unknown) => {
          process.stderr.write(`error during shutdown: ${error instanceof Error ? error.message : String(error)}\n`);
          resolve(ExitCode.failure);
        },
      );
    };
    process.on('SIGTERM', shutdown);
    process.on('SIGINT', shutdown);
  });
}
