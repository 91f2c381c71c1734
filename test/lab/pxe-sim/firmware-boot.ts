/**
 * @module One simulated network boot, phase by phase, as a PXE firmware plus iPXE do it:
 * `dhcp1` — DORA as the firmware (PXEClient, arch, UNDI, UUID); `tftp` — the boot file of that
 * ACK from its next server, from the leased address; `dhcp2` — DORA again as iPXE (user class
 * `iPXE`, option 175), which must hand out an `http(s)://` script URL; `script` — GET it;
 * `kernel`, `initrd` — GET the images its `kernel`/`initrd` lines name. Each phase is timed,
 * the first failure ends the boot with its phase and reason, and the whole boot is bounded by
 * `timeouts.clientMs`. Nothing here throws: the outcome is the {@link ClientResult}.
 */
import { performance } from 'node:perf_hooks';
import type { DhcpChannel } from './dhcp-channel.js';
import { DoraError, runDora } from './dhcp-exchange.js';
import { clientMac, type MacOrder } from './dhcp-messages.js';
import { closeHttpSession, fetchHttp, HttpFetchError, openHttpSession, type HttpSession } from './http-fetch.js';
import { parseBootScript } from './ipxe-script.js';
import { fetchTftp, TftpFetchError } from './tftp-client.js';
import { DEFAULT_TIMEOUTS, PHASES, type ClientResult, type ExpectedSizes, type FirmwareArch, type FirmwareTimeouts, type PhaseName, type PhaseRecord } from './types.js';

/** Who the simulated client is and how it behaves. */
export interface FirmwareBootSpec {
  /** Global client index (MAC and UUID derive from it). */
  index: number;
  /** Default: {@link clientMac}(index, macPrefix, macOrder). */
  mac?: string;
  macPrefix?: string;
  macOrder?: MacOrder;
  arch: FirmwareArch;
  blksize: number;
  windowsize: number;
  timeouts?: Partial<FirmwareTimeouts>;
  expected?: ExpectedSizes;
  /** Stop after this phase; default `initrd`. */
  lastPhase?: PhaseName;
}

/** Scripts larger than this are refused (rackside's are under 2 KiB). */
const MAX_SCRIPT_BYTES = 256 * 1024;

function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** A phase failed: its reason and the retransmissions counted until then. */
class PhaseFailure extends Error {
  constructor(readonly phase: PhaseName, message: string, readonly retransmissions = 0, readonly bytes?: number) {
    super(message);
  }
}

function checkSize(phase: PhaseName, got: number, expected: number | undefined): void {
  if (expected !== undefined && got !== expected) throw new PhaseFailure(phase, `received ${got} bytes, expected ${expected}`, 0, got);
}

function failureOf(phase: PhaseName, err: unknown): PhaseFailure {
  if (err instanceof PhaseFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof DoraError) return new PhaseFailure(phase, message, err.retransmissions);
  if (err instanceof TftpFetchError) return new PhaseFailure(phase, message, err.retransmissions, err.bytes);
  if (err instanceof HttpFetchError) return new PhaseFailure(phase, message, 0, err.bytes);
  return new PhaseFailure(phase, message);
}

/**
 * Boots one simulated client over `channel` (see the module comment). Resolves with what
 * happened — every phase that started, and the failure if one did; never rejects.
 */
export async function simulateFirmwareBoot(channel: DhcpChannel, spec: FirmwareBootSpec): Promise<ClientResult> {
  const t: FirmwareTimeouts = { ...DEFAULT_TIMEOUTS, ...spec.timeouts };
  const mac = spec.mac ?? clientMac(spec.index, spec.macPrefix, spec.macOrder);
  const result: ClientResult = { index: spec.index, mac, arch: spec.arch, phases: {} };
  const deadlineMs = nowMs() + t.clientMs;
  const last = PHASES.indexOf(spec.lastPhase ?? 'initrd');
  let session: HttpSession | undefined;
  let current: PhaseName = 'dhcp1';

  /** Runs phase `name` unless it is past `lastPhase`; returns false when the boot stops here. */
  const phase = async (name: PhaseName, body: (record: PhaseRecord) => Promise<void>): Promise<boolean> => {
    if (PHASES.indexOf(name) > last) return false;
    current = name;
    if (nowMs() > deadlineMs) throw new PhaseFailure(name, `client deadline of ${t.clientMs} ms passed before this phase`);
    const record: PhaseRecord = { startMs: nowMs(), endMs: 0, retransmissions: 0 };
    result.phases[name] = record;
    try {
      await body(record);
    } finally {
      record.endMs = nowMs();
    }
    return true;
  };
  const remainingMs = (): number => Math.max(1, deadlineMs - nowMs());
  const httpPhase = async (name: PhaseName, url: string, expected: number | undefined, keepBodyBytes = 0): Promise<string | undefined> => {
    let text: string | undefined;
    await phase(name, async (record) => {
      if (session === undefined) throw new PhaseFailure(name, 'no HTTP session');
      record.detail = url;
      const got = await fetchHttp(session, url, { idleMs: Math.min(t.httpIdleMs, remainingMs()), keepBodyBytes });
      record.bytes = got.bytes;
      checkSize(name, got.bytes, expected);
      text = got.text;
    });
    return text;
  };

  try {
    let address = '';
    let nextServer = '';
    let bootFile = '';
    if (!await phase('dhcp1', async (record) => {
      const lease = await runDora(channel, { index: spec.index, mac, arch: spec.arch, stage: 'pxe', waitsMs: t.dhcpWaitsMs });
      record.retransmissions = lease.retransmissions;
      record.detail = `${lease.address} from ${lease.serverId}, boot file ${lease.bootFile}`;
      ({ address, nextServer, bootFile } = lease);
      result.address = address;
    })) return result;
    if (!await phase('tftp', async (record) => {
      if (/^[a-z]+:\/\//i.test(bootFile)) throw new PhaseFailure('tftp', `firmware was given a URL (${bootFile}), not a TFTP boot file`);
      const got = await fetchTftp({
        server: nextServer, file: bootFile, localAddress: address, blksize: spec.blksize, windowsize: spec.windowsize,
        timeoutMs: t.tftpTimeoutMs, retries: t.tftpRetries, deadlineMs: remainingMs(),
      });
      record.bytes = got.bytes;
      record.retransmissions = got.retransmissions;
      record.detail = `${bootFile}: blksize ${got.blockSize}, windowsize ${got.windowSize}${got.gapAcks > 0 ? `, ${got.gapAcks} gap ACKs` : ''}`;
      checkSize('tftp', got.bytes, spec.expected?.firstStage);
    })) return result;
    let scriptUrl = '';
    if (!await phase('dhcp2', async (record) => {
      const lease = await runDora(channel, { index: spec.index, mac, arch: spec.arch, stage: 'ipxe', waitsMs: t.ipxeDhcpWaitsMs });
      record.retransmissions = lease.retransmissions;
      record.detail = `${lease.address}, script ${lease.bootFile}`;
      if (!/^https?:\/\//i.test(lease.bootFile)) throw new PhaseFailure('dhcp2', `iPXE was given ${JSON.stringify(lease.bootFile)}, not an HTTP script URL`);
      if (lease.address !== address) throw new PhaseFailure('dhcp2', `iPXE leased ${lease.address}, the firmware had ${address}`);
      scriptUrl = lease.bootFile;
    })) return result;
    session = openHttpSession(address);
    if (last < PHASES.indexOf('script')) return result;
    const script = await httpPhase('script', scriptUrl, undefined, MAX_SCRIPT_BYTES);
    if (script === undefined) throw new PhaseFailure('script', `the script is larger than ${MAX_SCRIPT_BYTES} bytes`);
    if (last < PHASES.indexOf('kernel')) return result;
    let images;
    try {
      images = parseBootScript(script, scriptUrl);
    } catch (err) {
      throw new PhaseFailure('script', err instanceof Error ? err.message : String(err));
    }
    const initrd = images.initrds[0];
    if (initrd === undefined) throw new PhaseFailure('script', 'the script loads no initrd');
    if (images.initrds.length > 1) throw new PhaseFailure('script', `the script loads ${images.initrds.length} initrds; the simulator times one`);
    await httpPhase('kernel', images.kernel, spec.expected?.kernel);
    await httpPhase('initrd', initrd, spec.expected?.initrd);
  } catch (err) {
    const f = failureOf(current, err);
    result.failure = { phase: f.phase, reason: f.message };
    const record = result.phases[f.phase];
    if (record !== undefined) {
      record.retransmissions = Math.max(record.retransmissions, f.retransmissions);
      if (f.bytes !== undefined) record.bytes = f.bytes;
    }
  } finally {
    if (session !== undefined) closeHttpSession(session);
  }
  return result;
}
