/**
 * @module An `ipmi_sim` BMC for one rack guest, running inside the rack's network namespace
 * (so the agent there reaches it on 127.0.0.1:PORT over UDP, which a unix-socket relay cannot
 * carry): lan.conf, the .emu file and the chassis-control script come from test/lab/ipmi
 * (QEMU mode: power status is "QEMU answers QMP", power on runs the guest's start script,
 * power off is QMP `quit`, reset `system_reset`, soft off `system_powerdown`). Readiness is the
 * UDP socket showing up in `ss` inside the namespace. Stopped by PID.
 * Facts (docs/test-peers.md, "IPMI"): ipmi_sim offers cipher suites 0–3, not 17; it never passes the "next boot
 * only" bit to the chassis control, so the boot device it stores is sticky.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCommand, trackProcess, waitFor, type LabProcess } from '../../helpers/netns.js';
import { writeChassisControl } from '../ipmi/chassis-control.js';
import { DEFAULT_FRU, renderEmu, renderLanConf } from '../ipmi/ipmi-sim.js';

/** A running simulator inside the namespace. */
export interface RackIpmiBmc {
  /** The BareMetalHost BMC address as the agent uses it. */
  address: string;
  port: number;
  username: string;
  password: string;
  process: LabProcess;
  /** Every chassis-control call (`get power`, `set boot pxe`, `set power 1` …), oldest first. */
  calls(): Promise<string[]>;
  stop(): Promise<void>;
}

/** Options of {@link startRackIpmiBmc}. */
export interface RackIpmiBmcOptions {
  ns: string;
  /** Scratch directory of this BMC. */
  dir: string;
  /** UDP port on 127.0.0.1 inside the namespace. */
  port: number;
  /** The guest's QMP socket (`-qmp unix:…`). */
  qmpSocket: string;
  /** The guest's start script (qemu-guest.ts `writeGuestStartScript`). */
  startCommand: string;
  /** QEMU's `-pidfile` and `-name` (`rackside-<host>`): power status without a QMP round trip. */
  guest: { pidFile: string; qemuName: string };
  username?: string;
  password?: string;
  /** TCP port on 127.0.0.1 for the guest's KCS system interface (lan.conf `serial kcs … codec VM`). */
  kcsPort?: number;
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The chassis control runs its QMP client as `"$NODE" "$QMP_CLIENT" SOCKET COMMAND` with NODE from
 * STATE_DIR/qmp.conf; NODE becomes this wrapper, which fixes two things of its QEMU mode:
 * - power status (`query-status`, run for every IPMI chassis status) is answered in sh from
 *   QEMU's pidfile: ipmi_sim waits for the control program and answers nothing meanwhile, and a
 *   node start per status under TCG load took long enough for the agent's IPMI requests to time
 *   out (3 × 1 s);
 * - a reset (`system_reset`) keeps the boot order QEMU was started with, so a host reset into
 *   PXE after booting its disk would boot the disk again: it goes to qmp-reset.js with the boot
 *   device from STATE_DIR/boot (one QMP connection: boot order, then reset).
 * Every other command goes to the usual client.
 */
async function writeQmpWrapper(dir: string, statePath: string, guest: { pidFile: string; qemuName: string }): Promise<void> {
  const reset = fileURLToPath(new URL('./qmp-reset.js', import.meta.url));
  const wrapper = [
    '#!/bin/sh',
    '# test/lab/rack/ipmi-bmc.ts: QMP client wrapper (power status from the pidfile, boot device applied at reset).',
    '# Called as: qmp-node QMP_CLIENT SOCKET COMMAND [JSON]',
    `node=${shellQuote(process.execPath)}`,
    'if [ "$3" = query-status ]; then',
    `  pid=$(cat ${shellQuote(guest.pidFile)} 2>/dev/null)`,
    // A zombie's cmdline is empty; a recycled PID is another program: both read as off.
    `  [ -n "$pid" ] && tr '\\000' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- ${shellQuote(`-name ${guest.qemuName} `)} && exit 0`,
    '  exit 1',
    'fi',
    'if [ "$3" = system_reset ]; then',
    `  boot=$(cat ${shellQuote(join(statePath, 'boot'))} 2>/dev/null)`,
    '  [ "$boot" = pxe ] || boot=disk',
    `  exec "$node" ${shellQuote(reset)} "$2" "$boot"`,
    'fi',
    'exec "$node" "$@"',
    '',
  ].join('\n');
  const path = join(dir, 'qmp-node');
  await writeFile(path, wrapper);
  await chmod(path, 0o755);
  const conf = join(statePath, 'qmp.conf');
  await writeFile(conf, (await readFile(conf, 'utf8')).replace(/^NODE=.*$/m, `NODE=${shellQuote(path)}`));
}

/** Starts `ipmi_sim` in `options.ns` and waits until it listens. */
export async function startRackIpmiBmc(options: RackIpmiBmcOptions): Promise<RackIpmiBmc> {
  const username = options.username ?? 'admin';
  const password = options.password ?? 'password';
  const statePath = join(options.dir, 'chassis');
  await mkdir(statePath, { recursive: true });
  await mkdir(join(options.dir, 'sim-state'), { recursive: true });
  const qmpClient = fileURLToPath(new URL('../ipmi/qmp-command.js', import.meta.url));
  const script = await writeChassisControl(options.dir, statePath, { power: 0, boot: 'none' }, {
    qmpSocket: options.qmpSocket, startCommand: options.startCommand, qmpClient,
  });
  await writeQmpWrapper(options.dir, statePath, options.guest);
  await writeFile(join(options.dir, 'bmc.emu'), renderEmu(DEFAULT_FRU));
  await writeFile(join(options.dir, 'lan.conf'), renderLanConf({
    port: options.port, users: [{ name: username, password, privilege: 'admin' }], guid: 'a123456789abcdefa123456789abcdef', chassisControl: script, stateDir: statePath,
    kcsPort: options.kcsPort,
  }));
  const log = openSync(join(options.dir, 'ipmi_sim.log'), 'a');
  const child = spawn('ip', ['netns', 'exec', options.ns, 'ipmi_sim', '-n', '-c', join(options.dir, 'lan.conf'), '-f', join(options.dir, 'bmc.emu'), '-s', join(options.dir, 'sim-state')], {
    stdio: ['ignore', log, log], cwd: options.dir,
  });
  closeSync(log);
  const proc = trackProcess(child);
  try {
    await waitFor(async () => {
      if (proc.child.exitCode !== null) throw new Error(`ipmi_sim exited with ${proc.child.exitCode}: ${await readFile(join(options.dir, 'ipmi_sim.log'), 'utf8').catch(() => '')}`);
      const ss = await runCommand('ip', ['netns', 'exec', options.ns, 'ss', '-Hunl', `sport = :${options.port}`], { allowFailure: true });
      return ss.stdout.includes(`:${options.port}`);
    }, `ipmi_sim on UDP 127.0.0.1:${options.port} in ${options.ns}`, 10_000, 100);
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
  return {
    address: `ipmi://127.0.0.1:${options.port}`,
    port: options.port,
    username,
    password,
    process: proc,
    calls: async () => (await readFile(join(statePath, 'calls.log'), 'utf8').catch(() => '')).split('\n').filter((l) => l !== ''),
    stop: async () => { await proc.stop('SIGTERM', 2000); },
  };
}
