/**
 * @module Starts OpenIPMI's `ipmi_sim` (Debian `openipmi`) as a lanplus BMC on loopback for tests,
 * benchmarks and (with QMP settings) QEMU guests: writes lan.conf (LAN channel on 127.0.0.1 and a
 * free UDP port, users, GUID, chassis_control), a .emu command file (an MC with chassis support
 * in its DeviceSupport byte, FRU data, three threshold sensors and a presence sensor with SDRs)
 * and the chassis-control script, runs `ipmi_sim -n -c lan.conf -f bmc.emu -s STATEDIR`, waits for
 * an ASF pong, and stops it by PID. Each start has its own scratch directory (parallel-safe).
 * Facts (docs/test-peers.md, "IPMI"): ipmi_sim offers cipher suites 0–3 (not 17) and even accepts 0; it does not
 * read back the boot-flag valid/EFI/persistent bits; port 623 needs root, so a free port is used.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeAsfPong, encodeAsfPing } from '../../../drivers/ipmi/rmcp.js';
import { writeChassisControl, type QemuChassisOptions } from './chassis-control.js';
import { encodeFruImage, type FruImageInput } from './fru-image.js';
import { encodeCompactSensorRecord, encodeFullSensorRecord } from './sdr-records.js';

/** One IPMI user of the simulator. */
export interface IpmiSimUser {
  readonly name: string;
  readonly password: string;
  readonly privilege?: 'user' | 'operator' | 'admin';
}

/** Options of {@link startIpmiSim}. */
export interface IpmiSimOptions {
  /** Users 2, 3, …; default admin/password with admin privilege. */
  readonly users?: readonly IpmiSimUser[];
  /** FRU contents; default {@link DEFAULT_FRU}. */
  readonly fru?: FruImageInput;
  /** 32 hex digits; default a fixed GUID. */
  readonly guid?: string;
  readonly initialPower?: 0 | 1;
  /** Drive a QEMU guest through QMP instead of state files. */
  readonly qemu?: QemuChassisOptions;
  /** How long to wait for the first pong; default 5000 ms. */
  readonly startTimeoutMs?: number;
  /** The LAN address it answers on: 127.0.0.1 (default) or ::1 (an IPv6 BMC; ipmi_sim takes IPv6 in `addr`). */
  readonly host?: '127.0.0.1' | '::1';
}

/** A running simulator. */
export interface IpmiSim {
  readonly host: string;
  readonly port: number;
  readonly pid: number;
  /** Scratch directory with lan.conf, bmc.emu, the script and the logs. */
  readonly dir: string;
  /** Chassis state directory (files `power`, `boot`, `calls.log`). */
  readonly statePath: string;
  /** First user's credentials. */
  readonly username: string;
  readonly password: string;
  /** Reads the chassis state the script keeps (file mode). */
  readChassis(): Promise<{ readonly power: string; readonly boot: string; readonly calls: readonly string[] }>;
  /** Kills the simulator by PID and removes the scratch directory; idempotent. */
  stop(): Promise<void>;
}

/** The FRU the simulator serves by default. */
export const DEFAULT_FRU: FruImageInput = {
  board: { manufacturedMinutes: 0x302010, manufacturer: 'Rackside', productName: 'Sim Board', serialNumber: 'BRD-0001', partNumber: 'PN-42' },
  product: {
    manufacturer: 'Rackside', productName: 'Sim Server', partNumber: 'MDL-7', version: '1.0', serialNumber: 'SN-12345', assetTag: 'ASSET-9',
  },
};

/** Sensors the simulator serves: name, number, raw value, and what it converts to. */
export const DEFAULT_SENSORS = [
  { name: 'CPU Temp', sensorNumber: 1, sensorType: 0x01, baseUnit: 1, m: 1, rExponent: 0, raw: 45, value: 45, unit: 'degrees C' },
  { name: '12V', sensorNumber: 2, sensorType: 0x02, baseUnit: 4, m: 6, rExponent: -2, raw: 200, value: 12, unit: 'Volts' },
  { name: 'Fan 1', sensorNumber: 3, sensorType: 0x04, baseUnit: 18, m: 50, rExponent: 0, raw: 96, value: 4800, unit: 'RPM' },
] as const;

/** The discrete presence sensor (sensor-specific, offset 0 = presence detected). */
export const PRESENCE_SENSOR = { name: 'PSU1 Presence', sensorNumber: 4, sensorType: 0x08, eventReadingType: 0x6f } as const;

const DEFAULT_GUID = 'a123456789abcdefa123456789abcdef';
const ZERO_MASK = '0'.repeat(15);

function hexBytes(bytes: Buffer): string {
  return [...bytes].map((b) => `0x${b.toString(16).padStart(2, '0')}`).join(' ');
}

/** Text of the .emu command file. */
export function renderEmu(fru: FruImageInput): string {
  const image = encodeFruImage(fru);
  const lines = [
    'mc_setbmc 0x20',
    // IPMB 0x20, device ID 0, no device SDRs, revision 3, firmware 9.08, DeviceSupport 0x9f
    // (chassis, event receiver, FRU, SEL, SDR repository, sensor), IANA 4753, product 0x0f02.
    'mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02',
    `mc_add_fru_data 0x20 0 ${image.length} data ${hexBytes(image)}`,
  ];
  DEFAULT_SENSORS.forEach((s, i) => {
    lines.push(`sensor_add 0x20 0 ${s.sensorNumber} ${s.sensorType} 0x01`);
    lines.push(`main_sdr_add 0x20 ${hexBytes(encodeFullSensorRecord({ ...s, recordId: i + 1 }))}`);
  });
  const p = PRESENCE_SENSOR;
  lines.push(`sensor_add 0x20 0 ${p.sensorNumber} ${p.sensorType} ${p.eventReadingType}`);
  lines.push(`main_sdr_add 0x20 ${hexBytes(encodeCompactSensorRecord({ ...p, recordId: DEFAULT_SENSORS.length + 1 }))}`);
  for (const s of DEFAULT_SENSORS) lines.push(`sensor_set_value 0x20 0 ${s.sensorNumber} ${s.raw} 0`);
  lines.push(`sensor_set_bit 0x20 0 ${p.sensorNumber} 0 1 0`);
  for (const n of [...DEFAULT_SENSORS.map((s) => s.sensorNumber), p.sensorNumber]) {
    // Scanning must be on, or Get Sensor Reading reports the sensor as disabled.
    lines.push(`sensor_set_event_support 0x20 0 ${n} enable scanning per-state ${ZERO_MASK} ${ZERO_MASK} ${ZERO_MASK} ${ZERO_MASK}`);
  }
  lines.push('mc_enable 0x20');
  return `${lines.join('\n')}\n`;
}

/** Text of lan.conf; `kcsPort` adds a KCS system interface for a QEMU guest on that TCP port. */
export function renderLanConf(options: { port: number; users: readonly IpmiSimUser[]; guid: string; chassisControl: string; stateDir: string; kcsPort?: number; host?: string }): string {
  const auths = 'none md2 md5 straight';
  return [
    'name "rackside"',
    'set_working_mc 0x20',
    '  startlan 1',
    `    addr ${options.host ?? '127.0.0.1'} ${options.port}`,
    '    priv_limit admin',
    ...['callback', 'user', 'operator', 'admin'].map((p) => `    allowed_auths_${p} ${auths}`),
    `    guid ${options.guid}`,
    '  endlan',
    // The system interface (channel 15) served to a QEMU guest's ipmi-bmc-extern (ipmi_lan(5) `serial`).
    ...(options.kcsPort === undefined ? [] : [`  serial kcs 127.0.0.1 ${options.kcsPort} codec VM`]),
    `  chassis_control "${options.chassisControl} ${options.stateDir}"`,
    ...options.users.map((u, i) => `  user ${i + 2} true "${u.name}" "${u.password}" ${u.privilege ?? 'admin'} 10 ${auths}`),
    '',
  ].join('\n');
}

/** True when `ipmi_sim` is on PATH. */
export function hasIpmiSim(): boolean {
  return spawnSync('sh', ['-c', 'command -v ipmi_sim'], { encoding: 'utf8' }).status === 0;
}

/** A UDP port that was free a moment ago on `host` (default 127.0.0.1). */
export async function freeUdpPort(host = '127.0.0.1'): Promise<number> {
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  await new Promise<void>((resolve, reject) => { socket.once('error', reject); socket.bind(0, host, resolve); });
  const { port } = socket.address();
  await new Promise<void>((resolve) => { socket.close(() => { resolve(); }); });
  return port;
}

/** Resolves when an ASF ping to `port` is answered; rejects after `timeoutMs` or if `child` exits. */
async function waitForPong(host: string, port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  let answered = false;
  socket.on('message', (datagram) => {
    try { if (decodeAsfPong(datagram).supportsIpmi) answered = true; } catch { /* not a pong */ }
  });
  socket.on('error', () => undefined);
  const deadline = performance.now() + timeoutMs;
  try {
    while (!answered) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`ipmi_sim exited early (code ${child.exitCode ?? child.signalCode ?? '?'})`);
      if (performance.now() > deadline) throw new Error(`ipmi_sim did not answer an ASF ping on port ${port} within ${timeoutMs} ms`);
      socket.send(encodeAsfPing(1), port, host);
      await sleep(50);
    }
  } finally {
    socket.close();
  }
}

/** Starts one simulator; on any failure everything started is stopped and removed. */
export async function startIpmiSim(options: IpmiSimOptions = {}): Promise<IpmiSim> {
  const users = options.users ?? [{ name: 'admin', password: 'password', privilege: 'admin' }];
  const first = users[0];
  if (first === undefined) throw new RangeError('ipmi_sim needs at least one user');
  const dir = await mkdtemp(join(tmpdir(), 'rackside-ipmi-sim-'));
  const statePath = join(dir, 'chassis');
  let child: ChildProcess | undefined;
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (c?.pid !== undefined && c.exitCode === null && c.signalCode === null) {
      const exited = new Promise<void>((resolve) => { c.once('exit', () => { resolve(); }); });
      c.kill('SIGTERM');
      const timer = sleep(2000).then(() => { if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL'); });
      await Promise.race([exited, timer]);
      await exited;
    }
  };
  try {
    await mkdir(statePath);
    await mkdir(join(dir, 'sim-state'));
    const script = await writeChassisControl(dir, statePath, { power: options.initialPower ?? 0, boot: 'none' }, options.qemu);
    await writeFile(join(dir, 'bmc.emu'), renderEmu(options.fru ?? DEFAULT_FRU));
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      const host = options.host ?? '127.0.0.1';
      const port = await freeUdpPort(host);
      await writeFile(join(dir, 'lan.conf'), renderLanConf({ port, users, guid: options.guid ?? DEFAULT_GUID, chassisControl: script, stateDir: statePath, host }));
      const log = openSync(join(dir, 'ipmi_sim.log'), 'a');
      const spawned = spawn('ipmi_sim', ['-n', '-c', join(dir, 'lan.conf'), '-f', join(dir, 'bmc.emu'), '-s', join(dir, 'sim-state')], {
        stdio: ['ignore', log, log], cwd: dir,
      });
      closeSync(log); // the child has its own copy
      child = spawned;
      const spawnFailed = new Promise<never>((_, reject) => { spawned.once('error', reject); });
      try {
        await Promise.race([waitForPong(host, port, spawned, options.startTimeoutMs ?? 5000), spawnFailed]);
        const pid = spawned.pid;
        if (pid === undefined) throw new Error('ipmi_sim has no PID');
        return {
          host, port, pid, dir, statePath, username: first.name, password: first.password,
          readChassis: async () => ({
            power: (await readFile(join(statePath, 'power'), 'utf8')).trim(),
            boot: (await readFile(join(statePath, 'boot'), 'utf8')).trim(),
            calls: (await readFile(join(statePath, 'calls.log'), 'utf8')).split('\n').filter((l) => l !== ''),
          }),
          stop: async () => {
            await kill();
            await rm(dir, { recursive: true, force: true });
          },
        };
      } catch (err) {
        lastError = err;
        await kill(); // most likely the port was taken between probe and bind: try another
      }
    }
    const simLog = await readFile(join(dir, 'ipmi_sim.log'), 'utf8').catch(() => '');
    throw new Error(`ipmi_sim did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}\n${simLog.slice(-2000)}`);
  } catch (err) {
    await kill();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
