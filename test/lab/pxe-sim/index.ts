/**
 * @module The PXE-storm simulator: N simulated firmware clients, each doing what PXE firmware
 * and iPXE do on the wire — DHCP DORA with PXE options (distinct chaddr, broadcast flag, options
 * 60/93/94/97) → TFTP of the first stage (blksize, tsize, windowsize) from its leased address →
 * DHCP again as iPXE (77 `iPXE`, 175) → HTTP GET of the script URL → HTTP GET of the kernel and
 * initrd its `kernel`/`initrd` lines name — timed per phase, with failures and retransmissions.
 *
 * Layers, each usable alone:
 * - in-process: {@link runStorm} (many clients on one DHCP socket) and
 *   {@link simulateFirmwareBoot} (one client); the process must live in the client namespace;
 * - as a child process: cli.ts (`ip netns exec NS node dist/test/lab/pxe-sim/cli.js --json …`)
 *   and {@link startStorm}, which runs it in the background from a test or bench and merges
 *   the workers' results;
 * - the lab: {@link openStormLab} (server + client namespaces, AnyIP routes, random boot files),
 *   {@link startRacksideServer} (the real agent, hosts registered and inspecting) and
 *   {@link startReferenceServer} (dnsmasq + nginx);
 * - figures: {@link summarizeStorm}, {@link formatStormSummary}, {@link mergeStormResults}.
 *
 * ```ts
 * const storm = await openStormLab({ dir: await scratchDir('storm') });
 * const server = await startRacksideServer({ lab: storm.lab, ns: storm.serverNs, dir: join(storm.dir, 'rs'), files: storm.files, hosts: { count: 50 } });
 * const running = startStorm({ lab: storm.lab, ns: storm.clientNs, dir: storm.dir, clients: 50 });
 * // … measure something else while 50 clients boot …
 * console.log(formatStormSummary(summarizeStorm(await running.result)));
 * await server.stop(); await storm.teardown();
 * ```
 */
export { PHASES, DEFAULT_TIMEOUTS, type PhaseName, type FirmwareArch, type PhaseRecord, type ClientFailure, type ClientResult, type FirmwareTimeouts, type ExpectedSizes, type StormOptions, type StormResult } from './types.js';
export { clientMac, clientUuid, type MacOrder } from './dhcp-messages.js';
export { simulateFirmwareBoot, type FirmwareBootSpec } from './firmware-boot.js';
export { runStorm, checkStormOptions, STORM_LIMITS } from './storm.js';
export { parseStormArgs, formatStormArgs, type CliOutput } from './storm-args.js';
export { startStorm, sliceClients, STORM_CLI, type StartStormOptions, type RunningStorm } from './spawn-storm.js';
export { summarizeStorm, formatStormSummary, mergeStormResults, percentile, type StormSummary, type PhaseFigures, type FailureGroup } from './storm-summary.js';
export { openStormLab, STORM_CONGESTION_CONTROL, STORM_NETWORK, DEFAULT_BOOT_FILE_SIZES, type StormLab, type BootFiles, type BootFileSizes } from './storm-lab.js';
export { processCpuSeconds, type BootServer } from './boot-server.js';
export { machineCpu, machineCpuShares, threadSwitches, type MachineCpu, type MachineCpuShares, type ThreadSwitches } from './cpu-contention.js';
export { startRacksideServer, metricValue, STORM_MANAGEMENT_PORT, type RacksideServer, type RacksideServerOptions } from './rackside-server.js';
export { startReferenceServer, referenceScript, type ReferenceServerOptions } from './reference-server.js';
