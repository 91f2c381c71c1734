/**
 * @module The real {@link DoctorProbes}: probes.ts and probe-net.ts wired to this machine,
 * with a random DHCP transaction id and the system clock.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { DoctorProbes } from './doctor.js';
import { managementUrl, probeBmcs, probeController, probeDhcpServers } from './probe-net.js';
import { probeDhcp6Servers } from './probe-net6.js';
import { probeBootHttps } from './probe-https.js';
import { createPortProber, defaultConfig, probeAssets, probeBusybox, probeConfig, probeEraseKey, probeInterface, probeKernel, probeRamdiskBuild, probeRmemMax, probeStateDir, probeThreadNice } from './probes.js';

/** Options of {@link createSystemProbes}. */
export interface SystemProbeOptions {
  /** Management API for the BMC list (`--server`); default from the config's management.listen. */
  server?: string;
  /** Deadline of each controller request and BMC knock (default 3000 ms). */
  networkTimeoutMs?: number;
}

/** Probes that look at this machine and its networks. */
export function createSystemProbes(options: SystemProbeOptions = {}): DoctorProbes {
  const timeoutMs = options.networkTimeoutMs ?? 3000;
  return {
    config: probeConfig,
    defaultConfig,
    iface: probeInterface,
    port: createPortProber(),
    // RFC 2131 §4.4.1: xid is a random number chosen by the client.
    dhcp: (iface, listenMs) => probeDhcpServers(iface, listenMs, randomInt(1, 0xffffffff)),
    // RFC 8415 §16.1: a random 24-bit transaction id.
    dhcp6: (iface, listenMs) => probeDhcp6Servers(iface, listenMs, randomInt(1, 0xffffff)),
    assets: probeAssets,
    kernel: probeKernel,
    busybox: probeBusybox,
    ramdiskBuild: probeRamdiskBuild,
    bootHttps: (config, bootHost) => probeBootHttps(config, bootHost),
    stateDir: (path) => probeStateDir(path, randomUUID()),
    eraseKey: probeEraseKey,
    controller: (config) => probeController(config, timeoutMs),
    bmcs: (config) => probeBmcs(managementUrl(config, options.server), config.bmc.concurrency, timeoutMs),
    rmemMax: probeRmemMax,
    threadNice: (pid) => probeThreadNice(pid),
    nowMs: () => Date.now(),
  };
}
