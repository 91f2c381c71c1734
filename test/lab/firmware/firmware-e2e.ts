/**
 * @module What the firmware-matrix end-to-end tests share (test/e2e/firmware-*.test.ts): the
 * prerequisite check (root, tools, firmware images, with the `apt-get install` line), skip-or-fail
 * under `RACKSIDE_REQUIRE_INTEGRATION=1`, one call that builds (or reuses) the test OS, starts a
 * {@link FirmwareLab} torn down by `t.after`, and waits for the test OS's marker line, and the
 * matchers and in-order assertion over rackside's boot timeline.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { DebianPackageError } from '../../../images/debian-package.js';
import { skipOrFail } from '../../helpers/integration.js';
import { findTool } from '../../helpers/netns.js';
import { FIRMWARE_IMAGES, qemuBinaryFor, type GuestFirmware } from './firmware-guest.js';
import type { StoredEvent } from '../../../agent/store/types.js';
import { startFirmwareLab, type FirmwareLab, type FirmwareLabOptions } from './firmware-lab.js';
import { TEST_OS_PREFIX } from './test-os-init.js';
import { fetchSignedBootLoaders } from './boot-assets.js';
import type { BootAssetGroup } from '../../../bootsvc/index.js';
import { ensureFirmwareTestOs, type FirmwareTestOs } from './test-os.js';

/** Root and the tools and files a firmware variant needs; `undefined` when all are there, else what is missing and how to install it. */
export function missingFirmwarePrerequisites(firmware: GuestFirmware): string | undefined {
  const qemu = qemuBinaryFor(firmware);
  const tools: [string, string][] = [
    ['ip', 'iproute2'], [qemu.binary, qemu.debianPackage], ['apt-get', 'apt'], ['apt-cache', 'apt'], ['dpkg-deb', 'dpkg'], ['depmod', 'kmod'],
  ];
  const missing = tools.filter(([tool]) => findTool(tool) === undefined);
  const images = FIRMWARE_IMAGES[firmware];
  for (const path of [images.code, images.vars]) if (!existsSync(path)) missing.push([path, images.debianPackage]);
  const lines = missing.map(([what, pkg]) => `- ${what} (Debian package ${pkg})`);
  if (process.getuid?.() !== 0) lines.unshift('- root (network namespaces, DHCP on port 67)');
  if (lines.length === 0) return undefined;
  const packages = [...new Set(missing.map(([, pkg]) => pkg))].sort();
  if (packages.length > 0) lines.push(`install with: sudo apt-get install ${packages.join(' ')} (or scripts/install-test-deps.sh)`);
  return lines.join('\n');
}


/** Checks prerequisites and builds (or reuses) the test OS; `undefined` when the test was skipped. */
export async function prepareFirmwareTest(t: TestContext, firmware: GuestFirmware): Promise<FirmwareTestOs | undefined> {
  const missing = missingFirmwarePrerequisites(firmware);
  if (missing !== undefined) {
    skipOrFail(t, `firmware ${firmware} prerequisites missing:\n${missing}`);
    return undefined;
  }
  const started = Date.now();
  try {
    const os = await ensureFirmwareTestOs(firmware === 'aavmf' ? 'arm64' : 'amd64');
    t.diagnostic(`test OS ${os.arch} (${os.kernelPackage} ${os.kernelVersion}, initrd ${(os.initrdBytes / 1024).toFixed(0)} KiB) ${os.built ? 'built' : 'reused'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return os;
  } catch (err) {
    if (!(err instanceof DebianPackageError)) throw err;
    skipOrFail(t, `the test OS cannot be built: ${err.message}`);
    return undefined;
  }
}

/** Starts the lab and registers its teardown with `t.after`. */
export async function startLab(t: TestContext, options: FirmwareLabOptions): Promise<FirmwareLab> {
  const lab = await startFirmwareLab({ ...options, log: (line) => { t.diagnostic(line); } });
  t.after(() => lab.stop());
  return lab;
}

/** Seconds from the BMC's power-on to now. */
export function secondsSincePowerOn(lab: FirmwareLab): number {
  const on = lab.bmcCalls.find((c) => c.call.startsWith('powerOn') || c.call.startsWith('reset'));
  assert.ok(on !== undefined, `the BMC powered the guest on: ${JSON.stringify(lab.bmcCalls)}`);
  return (Date.now() - on.atMs) / 1000;
}

/** Waits for the test OS's marker line with this lab's nonce; returns the boot time in seconds (BMC power-on → marker). */
export async function waitForMarker(lab: FirmwareLab, timeoutMs: number): Promise<number> {
  await lab.waitForSerial(new RegExp(`${TEST_OS_PREFIX} marker: ${lab.nonce}`), timeoutMs);
  return secondsSincePowerOn(lab);
}

/** A timeline step: its name (for failures) and the predicate. */
export interface TimelineStep {
  name: string;
  match: (e: StoredEvent) => boolean;
}

function field(e: StoredEvent, key: string): unknown {
  return e.data?.[key];
}

function text(e: StoredEvent, key: string): string {
  const value = field(e, key);
  return typeof value === 'string' ? value : '';
}

/** Matchers over the flight recorder's stored events (their `data` is the boot event's fields). */
export const Steps = {
  /** A DHCP message (`discover`, `ack` …) whose vendor class starts with `vendor` (and, for replies, whose boot file is `bootFile`). */
  dhcp: (message: string, opts: { vendor?: string; bootFile?: string; userClass?: string } = {}): TimelineStep => ({
    name: `DHCP ${message}${opts.vendor === undefined ? '' : ` from ${opts.vendor}`}${opts.userClass === undefined ? '' : ` (user class ${opts.userClass})`}${opts.bootFile === undefined ? '' : ` with boot file ${opts.bootFile}`}`,
    match: (e) => e.source === 'bootsvc:dhcp' && text(e, 'message') === message
      && (opts.vendor === undefined || text(e, 'vendorClass').startsWith(opts.vendor))
      && (opts.userClass === undefined || text(e, 'userClass') === opts.userClass)
      && (opts.bootFile === undefined || text(e, 'bootFile') === opts.bootFile),
  }),
  /** A TFTP transfer of `file` (path as normalized by the server) that completed. */
  tftpDone: (file: string): TimelineStep => ({
    name: `TFTP transfer of ${file} done`,
    match: (e) => e.source === 'bootsvc:tftp' && text(e, 'phase') === 'done' && text(e, 'file').replace(/^\/+/, '') === file,
  }),
  /** A TFTP read request for `file` (path as the client sent it, leading slashes aside). */
  tftpRequest: (file: string): TimelineStep => ({
    name: `TFTP read request for ${file}`,
    match: (e) => e.source === 'bootsvc:tftp' && text(e, 'phase') === 'rrq' && text(e, 'file').replace(/^\/+/, '') === file,
  }),
  /** A boot HTTP request `GET path` answered `status`. */
  http: (path: string, status = 200): TimelineStep => ({
    name: `GET ${path} → ${status}`,
    match: (e) => e.source === 'bootsvc:http' && text(e, 'method') === 'GET' && text(e, 'path') === path && field(e, 'status') === status,
  }),
};

/** The timeline as lines, for failure messages. */
export function formatTimeline(items: readonly StoredEvent[]): string {
  return items.map((e) => `#${e.seq} ${e.source} ${e.reason} ${e.message}`).join('\n');
}

/** Index of each step found in order (each after the previous), stopping at the first missing one. */
function findInOrder(items: readonly StoredEvent[], steps: readonly TimelineStep[]): number[] {
  const found: number[] = [];
  let at = -1;
  for (const step of steps) {
    const i = items.findIndex((e, index) => index > at && step.match(e));
    if (i < 0) break;
    found.push(i);
    at = i;
  }
  return found;
}

/**
 * The boot chain split where its order is causal. `chain` lists steps in boot order, and
 * `lastTftpFile` is the last file fetched over TFTP before the OS takes over: the boot loader
 * may lose its final ACK (RFC 1350 §6 lets it leave right after sending it; GRUB boots the kernel
 * at once), and then the server records that transfer `done` only when its retransmissions run
 * out — ~29 s later, after whatever the OS did meanwhile. What is causal is that the OS ran after
 * the file was asked for and sent: so the returned chains are `chain` up to and including the
 * last file's `done`, and the last file's read request followed by the rest of `chain`.
 */
export function causalChains(chain: readonly TimelineStep[], lastTftpFile: string): TimelineStep[][] {
  const done = Steps.tftpDone(lastTftpFile).name;
  const at = chain.findIndex((step) => step.name === done);
  assert.ok(at >= 0, `the chain has the step "${done}"`);
  return [chain.slice(0, at + 1), [Steps.tftpRequest(lastTftpFile), ...chain.slice(at + 1)]];
}

/** Asserts `steps` occur in this order (each after the previous); returns the index of the last one. */
export function assertInOrder(items: readonly StoredEvent[], steps: readonly TimelineStep[]): number {
  const found = findInOrder(items, steps);
  const missing = steps[found.length];
  const last = found.at(-1);
  assert.ok(missing === undefined, `timeline step "${missing?.name ?? ''}" after #${last === undefined ? 'start' : items[last]?.seq ?? '?'}; timeline:\n${formatTimeline(items)}`);
  return last ?? -1;
}

/**
 * Reads the boot timeline until `steps` are all there in order (the flight recorder stores
 * events in batches, and an HTTP request is reported when its response has ended — after the
 * client already printed what it got), at most `timeoutMs`; returns the last read.
 *
 * The default covers a TFTP transfer whose final ACK never comes: the server then resends the
 * last block until its retries run out (100 ms doubling to the 8 s cap, 8 retries: ≈ 29 s after
 * it was first sent) and records the transfer `done`, unconfirmed (bootsvc/tftp/transfer.ts).
 * GRUB can lose that ACK under load (CI: arm64 GRUB's initrd, the test OS up before the event),
 * and 10 s after the marker was not always enough. A file followed by another request from the
 * same client is recorded done when that request arrives (the `moved-on` rule of
 * bootsvc/tftp/transfer.ts); only the last file a boot loader fetches can wait for the retries.
 * So a chain of steps must order a transfer's `done` only before what follows from the server's
 * side of it: the next TFTP transfer's `done`, not what the client does next on another service
 * (see {@link causalChains}).
 */
export async function readTimeline(lab: FirmwareLab, steps: readonly TimelineStep[], timeoutMs = 45_000): Promise<StoredEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = await lab.bootTimeline();
    if (findInOrder(items, steps).length === steps.length || Date.now() > deadline) return items;
    await new Promise((r) => setTimeout(r, 250));
  }
}

export { skipOrFail };

/**
 * The signed shim and GRUB of `group` (Debian packages, fetched once), or undefined after
 * skipOrFail when apt cannot fetch them (a failure under RACKSIDE_REQUIRE_INTEGRATION=1).
 */
export async function signedBootLoadersOrSkip(t: TestContext, group: Exclude<BootAssetGroup, 'ipxe'>, packages: string): Promise<Map<string, string> | undefined> {
  try {
    return await fetchSignedBootLoaders(group);
  } catch (err) {
    if (!(err instanceof DebianPackageError)) throw err;
    skipOrFail(t, `${packages} cannot be fetched: ${err.message}`);
    return undefined;
  }
}
