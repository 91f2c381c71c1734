/**
 * @module The daemon: reads the config, opens the store, starts the management API and the
 * host reconciler over the configured provisioner backend (provisioner/backends.ts), and shuts
 * down cleanly on SIGTERM/SIGINT (finish in-flight writes, close the store). The only module
 * besides cli.ts that reads env and installs signal handlers (docs/architecture.md, rule 4).
 */
import { readFile, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { getPriority, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type Router } from 'express';
import type { Config } from './config.js';
import { ConfigError, DEFAULT_CONFIG_PATH, decodeConfig, parseConfigYaml } from './config.js';
import { HostService } from './host/service.js';
import { HostWakeups } from './host/host-wakeups.js';
import { Reconciler } from './host/reconciler.js';
import { BMCEventSubscriptionReconciler } from './host/bmc-event-subscriptions.js';
import { createLogger, isLogLevel, setLogLevel, type Logger } from './log.js';
import { createAgentMetrics, type AgentMetrics } from './metrics.js';
import { createNotifier, type Notifier, type NotifyEnvironment } from './sd-notify.js';
import { ValidationError } from './errors.js';
import type { ProvisionerBackend } from './provisioner/backend.js';
import { openBackend, unusedConfigSections } from './provisioner/backends.js';
import { openStore } from './store/index.js';
import { describeClockJump, steadyNowMs, watchClockJumps } from './clock.js';
import { ramdiskDefaultsOf, startBootServices, type BootServices } from './boot/boot-services.js';
import { DiscoveryService } from './discovery/discovery-service.js';
import { mountEnrollRoute } from './discovery/enroll-route.js';
import { openDiscovery, type Discovery } from './discovery/open.js';
import { openEraseRecordBook } from './erase/open.js';
import { createEraseRecorder, type EraseRecorder } from './erase/recorder.js';
import type { EraseRecordBook } from './erase/book.js';
import { createEraseRecordRouter } from './erase/routes.js';
import { mountTimelineRoutes } from './web/boot-routes.js';
import { BootTransportIndex } from './boot/boot-transports.js';
import { bootCaHandler } from './web/boot-ca-route.js';
import { listenManagement } from './web/management-listener.js';
import { describeDamage } from './store/log-recovery.js';
import { createStatusPage, statusReportHandler } from './web/ui/index.js';
import { countPoolAddresses, createStatusReporter, type SshSourceStatus } from './status-report.js';
import { countPool6Addresses } from './config-dhcp6.js';
import { startRemoteAccess, type RemoteAccess } from './remote-access.js';
import { createSyncLoop, syncStatusHandler, type SyncLoop } from './sync/index.js';
import { createFleetCommandRunner } from './web/fleet-commands.js';
import type { Store } from './store/types.js';
import { createManagementApp } from './web/api.js';
import { VERSION } from './version.js';

export { VERSION } from './version.js';

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
  /**
   * `auto` (the default): the local provisioner builds its ramdisk in the background and hosts
   * wait for it; `off`: no build and no wait (tests and the demo bring their own ramdisk).
   * {@link runAgent} takes it from the environment: RACKSIDE_RAMDISK_BUILD=off.
   */
  ramdiskBuild?: 'auto' | 'off';
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

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** Every clean leaves a signed erase record (docs/erase-records.md); the key is made on first start. */
async function openEraseRecording(config: Config, store: Store): Promise<{ book: EraseRecordBook; recordClean: EraseRecorder }> {
  const book = await openEraseRecordBook(store.eraseRecords, config.agent.stateDir, config.agent.id);
  const recordClean = createEraseRecorder({
    book, getHost: (name) => store.getHost(name), agentId: config.agent.id, wallNowMs: Date.now, steadyNowMs,
  });
  return { book, recordClean };
}

/** A config section the provisioner does not use is not silently accepted: a warning and a `ConfigSectionUnused` event. */
async function reportUnusedSections(config: Config, store: Store, log: Logger): Promise<void> {
  const unused = unusedConfigSections(config);
  for (const { section, message } of unused) log.warn({ section, provisioner: config.provisioner }, message);
  if (unused.length === 0) return;
  const time = new Date().toISOString();
  await store.appendEvents(unused.map(({ section, message }) => ({
    time, type: 'Warning' as const, reason: 'ConfigSectionUnused', message, source: 'agent', data: { section, provisioner: config.provisioner },
  })));
}

/** Discovery of unknown hosts, when `dhcp.unknownHosts: discover` and the backend network-boots hosts. */
function openBackendDiscovery(config: Config, store: Store, log: Logger, backend: ProvisionerBackend, service: DiscoveryService): Discovery | undefined {
  if (backend.boot === undefined || config.dhcp.unknownHosts !== 'discover') return undefined;
  return openDiscovery({ config: config.discovery, store, service, logger: log.child({ component: 'discovery' }), ramdisk: ramdiskDefaultsOf(config), nowMs: steadyNowMs });
}

/** Starts DHCP, TFTP and boot HTTP when the backend network-boots hosts. */
async function startBackendBoot(config: Config, store: Store, log: Logger, backend: ProvisionerBackend, discovery: Discovery | undefined): Promise<BootServices | undefined> {
  const boot = backend.boot;
  if (boot === undefined) return undefined;
  return startBootServices({
    config, store, logger: log, ramdiskRouter: boot.routes, intents: boot.intents, mounts: boot.mounts,
    ...(boot.httpBytesPerSecond === undefined ? {} : { httpBytesPerSecond: boot.httpBytesPerSecond }),
    ...(discovery === undefined ? {} : { discovery: { lookup: discovery.lookup, routes: discovery.routes } }),
  });
}

/** The status page's report source. */
type StatusReporter = ReturnType<typeof createStatusReporter>;

/** The parts of a starting agent the management API and the status report read. */
interface AgentParts {
  config: Config;
  store: Store;
  log: Logger;
  backend: ProvisionerBackend;
  boot: BootServices | undefined;
  sync: SyncLoop;
  eraseRecords: EraseRecordBook;
  /** Records discovered hosts and enrolls hosts without a BMC (`POST /hosts/:name/enroll`). */
  discoveryService: DiscoveryService;
  /** Set once the SSH server runs (it forwards to the management listener's port). */
  remoteAccess: { current?: RemoteAccess };
  /** How each host last booted, by transport (`GET /api/v1/boot/transports`). */
  bootTransports: BootTransportIndex;
}

/** The status page's report (`GET /api/v1/status`). */
function createReporter(parts: AgentParts): StatusReporter {
  const { config, store, log, backend, boot, remoteAccess } = parts;
  const status = backend.status;
  return createStatusReporter({
    nowMs: steadyNowMs,
    ...(boot === undefined
      ? {}
      : {
          boot: () => boot.stats(),
          bootConfig: {
            dhcpMode: config.dhcp.mode,
            dhcpInterface: config.provisioning.interface,
            dhcpAddress: config.provisioning.address,
            dhcpPoolAddresses: countPoolAddresses(config.dhcp.ranges),
            ...(config.dhcp6 === undefined ? {} : { dhcp6Mode: config.dhcp6.mode, dhcp6PoolAddresses: countPool6Addresses(config.dhcp6.ranges) }),
            ...(config.provisioning.address6 === undefined ? {} : { dhcp6Address: config.provisioning.address6 }),
            httpListen: `${config.http.listen.host}:${config.http.listen.port}`,
          },
        }),
    ...(status === undefined ? {} : { bmc: async () => status.bmc(await store.listHosts()), images: () => status.images() }),
    ...(status?.ramdisks === undefined ? {} : { ramdisks: status.ramdisks }),
    ssh: () => sshStatus(remoteAccess),
    onError: (section, err) => {
      log.warn({ err, section }, 'status report: a section is unavailable');
    },
  });
}

/** `GET /api/v1/ssh`: the SSH server and tunnel, null until remote access runs. */
function sshStatus(remoteAccess: { current?: RemoteAccess }): SshSourceStatus {
  return { server: remoteAccess.current?.server ?? null, tunnel: remoteAccess.current?.tunnelStatus() ?? null };
}

/** The management API's routes beyond the host API: timelines, erase records, SSH, sync, status, log level. */
function mountAgentRoutes(api: Router, parts: AgentParts, reporter: StatusReporter): void {
  const { config, store, log, sync, eraseRecords, remoteAccess } = parts;
  mountTimelineRoutes(api, store);
  api.get('/boot/transports', (_req, res) => {
    res.json({ items: parts.bootTransports.list() });
  });
  api.get('/boot/ca', bootCaHandler(config));
  mountEnrollRoute(api, parts.discoveryService);
  api.use(createEraseRecordRouter(eraseRecords, config.agent.id));
  api.get('/ssh', (_req, res) => {
    res.json(sshStatus(remoteAccess));
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
}

/** The management app: the host API, the agent's routes, the status page and `/metrics`. */
function createAgentApp(parts: AgentParts, service: HostService, metrics: AgentMetrics): express.Express {
  const { config, log } = parts;
  const reporter = createReporter(parts);
  return createManagementApp(service, {
    ...(config.management.token !== undefined ? { token: config.management.token } : {}),
    requireTokenForMutations: config.management.token !== undefined || !isLoopback(config.management.listen.host),
    logger: log.child({ component: 'web' }),
    extraRoutes: (api) => { mountAgentRoutes(api, parts, reporter); },
    appRoutes: (root) => {
      root.use(createStatusPage({ logger: log.child({ component: 'ui' }) }));
      root.get('/metrics', (_req, res, next) => {
        metrics.render().then((text) => {
          res.type(metrics.registry.contentType).send(text);
        }, next);
      });
    },
  });
}

/** A wall-clock step moves no timeout (clock.ts); say that it happened. Returns the stop function. */
function watchClock(store: Store, log: Logger): () => void {
  return watchClockJumps({
    onJump: (jump) => {
      const message = describeClockJump(jump);
      log.warn({ jumpMs: jump.jumpMs }, message);
      store.appendEvents([{ time: jump.wallAfter.toISOString(), type: 'Warning', reason: 'ClockJumped', message, source: 'agent', data: { jumpMs: jump.jumpMs } }])
        .catch((err: unknown) => { log.warn({ err }, 'recording a clock jump failed'); });
    },
  });
}

/** The provisioner backend, its boot services and the reconciler that drives it. */
interface Provisioning {
  backend: ProvisionerBackend;
  boot: BootServices | undefined;
  reconciler: Reconciler;
  eraseRecords: EraseRecordBook;
  discoveryService: DiscoveryService;
  discovery: Discovery | undefined;
}

/**
 * Opens the provisioner backend and its boot services and makes the reconciler. Wake-ups from
 * the backend (ramdisk results, the boot governor) reach the reconciler through `wakeups`, made
 * before either. On failure, what was started is stopped.
 */
async function openProvisioning(config: Config, store: Store, log: Logger, ramdiskBuild: 'auto' | 'off'): Promise<Provisioning> {
  const { book: eraseRecords, recordClean } = await openEraseRecording(config, store);
  const wakeups = new HostWakeups();
  const backend = await openBackend({ config, store, logger: log, wake: wakeups.wake, recordClean, ramdiskBuild });
  const discoveryService = new DiscoveryService({ store, config: config.discovery });
  const discovery = openBackendDiscovery(config, store, log, backend, discoveryService);
  let boot: BootServices | undefined;
  try {
    await backend.start();
    boot = await startBackendBoot(config, store, log, backend, discovery);
  } catch (error) {
    await backend.stop();
    throw error;
  }
  const reconciler = new Reconciler({
    store,
    factory: backend.factory,
    wakeups,
    logger: log.child({ component: 'reconciler' }),
    concurrency: config.reconcile.concurrency,
    timeScale: config.reconcile.timeScale,
    maxProvisioningRetries: 5,
  });
  return { backend, boot, reconciler, eraseRecords, discoveryService, discovery };
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
  let provisioning: Provisioning | undefined;
  try {
    await reportUnusedSections(config, store, log);
    provisioning = await openProvisioning(config, store, log, options.ramdiskBuild ?? 'auto');
    return await runServices(config, store, log, notifier, provisioning);
  } catch (error) {
    await provisioning?.boot?.stop();
    await provisioning?.backend.stop();
    await store.close();
    throw error;
  }
}

/** Starts the management API, the reconciler, sync and remote access over an open provisioning. */
async function runServices(config: Config, store: Store, log: Logger, notifier: Notifier, provisioning: Provisioning): Promise<RunningAgent> {
  const { backend, boot, reconciler, eraseRecords, discoveryService, discovery } = provisioning;
  const service = new HostService({
    store,
    info: { version: VERSION, agentId: config.agent.id, provisioner: config.provisioner, startedAt: new Date().toISOString() },
  });
  // Commands from the fleet controller go through the same HostService as the management API.
  const sync = createSyncLoop({
    store, agentId: config.agent.id, controller: config.controller, logger: log.child({ component: 'sync' }),
    runCommand: createFleetCommandRunner(service), agentVersion: VERSION,
    ...(config.agent.rack === undefined ? {} : { rack: config.agent.rack }),
    ...(config.agent.statusUrl === undefined ? {} : { statusUrl: config.agent.statusUrl }),
  });
  const metrics = createAgentMetrics({
    store, reconciler, sync,
    ...(boot !== undefined ? { boot: () => boot.stats() } : {}),
    ...(backend.metrics?.bmcCalls !== undefined ? { bmc: backend.metrics.bmcCalls } : {}),
  });
  backend.metrics?.register?.(metrics.registry);
  discovery?.register(metrics.registry);
  const bootTransports = new BootTransportIndex();
  // Follows new events at once; the stored ones are read beside start-up, not before the listener.
  bootTransports.start(store).catch((err: unknown) => { log.warn({ err }, 'boot transports: the stored events could not be read'); });
  const parts: AgentParts = { config, store, log, backend, boot, sync, eraseRecords, discoveryService, remoteAccess: {}, bootTransports };
  const { host, port } = config.management.listen;
  const listener = await listenManagement(createAgentApp(parts, service, metrics), {
    host, port, stateDir: config.agent.stateDir, ...(config.management.tls !== undefined ? { tls: config.management.tls } : {}),
  });
  const { server, port: boundPort, url: managementUrl } = listener;
  if (store.damage !== undefined) log.error({ damage: store.damage }, `state store: ${describeDamage(store.damage)}`);
  await reconciler.start();
  const subscriptions = new BMCEventSubscriptionReconciler({ store, factory: backend.factory, logger: log.child({ component: 'bmc-event-subscriptions' }) });
  await subscriptions.start();
  await sync.start();
  const remote = await startRemoteAccess({
    config, store, managementUrl: managementUrl.replace('0.0.0.0', '127.0.0.1'), managementPort: boundPort, logger: log,
    ...(listener.socketPath !== undefined ? { managementSocket: listener.socketPath } : {}),
  });
  parts.remoteAccess.current = remote;
  const stopClockWatch = watchClock(store, log);
  // eventLoopNice: the unit starts the agent at Nice=-5 (systemd/rackside.service); 0 says it was started some other way.
  log.info({ managementUrl, provisioner: config.provisioner, stateDir: config.agent.stateDir, eventLoopNice: getPriority(0) }, 'rackside agent ready');
  notifier.ready(`serving ${managementUrl} (${config.provisioner} provisioner)`);
  const watchdogMs = notifier.startWatchdog();
  if (watchdogMs !== undefined) log.info({ watchdogMs }, 'systemd watchdog pings started');
  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    notifier.stopping();
    stopClockWatch();
    await remote.stop();
    await listener.close();
    await reconciler.stop();
    await subscriptions.stop();
    await boot?.stop();
    await backend.stop();
    await sync.stop();
    metrics.close();
    bootTransports.stop();
    await store.close();
    notifier.close();
    log.info('rackside agent stopped');
  };
  return { config, store, reconciler, sync, server, managementUrl, stop: () => (stopping ??= stop()) };
}

/**
 * Runs the agent until SIGTERM or SIGINT; resolves with the process exit code
 * (2 for config errors, printed with every wrong key).
 */
export async function runAgent(options: RunAgentOptions): Promise<number> {
  let agent: RunningAgent;
  try {
    const { NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID, RACKSIDE_RAMDISK_BUILD } = process.env;
    if (RACKSIDE_RAMDISK_BUILD !== undefined && RACKSIDE_RAMDISK_BUILD !== 'auto' && RACKSIDE_RAMDISK_BUILD !== 'off') {
      process.stderr.write(`error: RACKSIDE_RAMDISK_BUILD must be auto or off, got "${RACKSIDE_RAMDISK_BUILD}"\n`);
      return ExitCode.config;
    }
    agent = await startAgent({
      ...options,
      ...(RACKSIDE_RAMDISK_BUILD === undefined ? {} : { ramdiskBuild: RACKSIDE_RAMDISK_BUILD }),
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
