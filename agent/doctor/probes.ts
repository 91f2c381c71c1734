/**
 * @module `rackside doctor`'s local probes: they read the config file, /sys/class/net and
 * the interface's addresses, try to bind the boot ports (and ask `ss -lunpt` who holds a taken one), look for
 * the boot assets, kernel and busybox with their sha256, and test the state directory. They
 * observe and report; the judgement is in checks.ts and checks-host.ts. Network probes (DHCP,
 * controller, BMCs) are in probe-net.ts.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { createReadStream, type Stats } from 'node:fs';
import { open, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BOOT_ASSETS, checkBootAssets, interfaceIpv4Addresses, interfaceIpv6Addresses } from '../../bootsvc/index.js';
import { parseConfigYaml, type Config } from '../config.js';
import type { PortNeed } from './checks.js';
import { holdersOf, isStaticElf, niceFromStat, parseSsListeners, uidOfUser, type SsListener } from './parse.js';
import type { AssetProbe, ConfigProbe, EraseKeyProbe, FileProbe, InterfaceProbe, PortHolder, PortProbe, RamdiskBuildProbe, StateDirProbe } from './types.js';
import { ERASE_SIGNING_KEY_FILE } from '../erase/open.js';
import { ed25519SigningKeyFromOpenSsh } from '../ssh/index.js';

function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Reads and decodes the config file (agent.id defaults to the host name, as in the agent). */
export async function probeConfig(path: string): Promise<ConfigProbe> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return errorCode(err) === 'ENOENT' ? { path, state: 'missing' } : { path, state: 'unreadable', error: message(err) };
  }
  try {
    return { path, state: 'ok', config: parseConfigYaml(text, path, { agentId: hostname() }) };
  } catch (err) {
    return { path, state: 'invalid', error: message(err) };
  }
}

/** The all-defaults config the other checks use when the file is missing or invalid. */
export function defaultConfig(): Config {
  return parseConfigYaml('', '(defaults)', { agentId: hostname() });
}

async function readTrimmed(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** `net.core.rmem_max` from procfs (`path` for tests); undefined when unreadable or not a number. */
export async function probeRmemMax(path = '/proc/sys/net/core/rmem_max'): Promise<number | undefined> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  const value = Number(text?.trim());
  return text === undefined || !Number.isSafeInteger(value) ? undefined : value;
}

/** The nice value of thread `pid` (a process's main thread: its event loop), or undefined when its /proc/PID/stat cannot be read. */
export async function probeThreadNice(pid: number, procDir = '/proc'): Promise<number | undefined> {
  const text = await readFile(join(procDir, String(pid), 'stat'), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : niceFromStat(text);
}

/** IFF_UP in /sys/class/net/NAME/flags (include/uapi/linux/if.h): the interface is administratively up. */
const IFF_UP = 0x1;

/**
 * Existence, administrative state (flags), operstate and MAC from /sys/class/net/NAME; IPv4
 * and IPv6 addresses from iproute2, so an interface without carrier still shows the addresses it has.
 */
export async function probeInterface(name: string): Promise<InterfaceProbe> {
  const base = join('/sys/class/net', name);
  const exists = !name.includes('/') && (await stat(base).then(() => true, () => false));
  if (!exists) return { name, exists, addresses: [] };
  const operState = await readTrimmed(join(base, 'operstate'));
  const mac = await readTrimmed(join(base, 'address'));
  const flags = Number.parseInt(await readTrimmed(join(base, 'flags')) ?? '', 16);
  const addresses = await interfaceIpv4Addresses(name);
  const addresses6 = await interfaceIpv6Addresses(name);
  return {
    name, exists, ...(operState === undefined ? {} : { operState }), ...(mac === undefined ? {} : { mac }),
    ...(Number.isNaN(flags) ? {} : { adminUp: (flags & IFF_UP) !== 0 }), addresses, addresses6,
  };
}

type BindOutcome = Pick<PortProbe, 'bind' | 'error'>;

function classifyBindError(err: unknown): BindOutcome {
  const code = errorCode(err);
  if (code === 'EADDRINUSE') return { bind: 'in-use', error: code };
  if (code === 'EACCES' || code === 'EPERM') return { bind: 'denied', error: code };
  return { bind: 'error', error: code ?? message(err) };
}

/** Binds `address:port` exclusively and releases it at once. */
function tryBind(protocol: 'udp' | 'tcp', address: string, port: number): Promise<BindOutcome> {
  const v6 = address.includes(':');
  return new Promise((resolve) => {
    if (protocol === 'udp') {
      const socket = createSocket({ type: v6 ? 'udp6' : 'udp4' });
      socket.once('error', (err) => {
        socket.close();
        resolve(classifyBindError(err));
      });
      socket.bind({ address, port, exclusive: true }, () => {
        socket.close();
        resolve({ bind: 'free' });
      });
      return;
    }
    const server = createServer();
    server.once('error', (err) => {
      resolve(classifyBindError(err));
    });
    server.listen({ host: address, port, exclusive: true }, () => {
      server.close(() => {
        resolve({ bind: 'free' });
      });
    });
  });
}

/** Runs a command; resolves to stdout, or undefined when it cannot run. */
function runQuiet(file: string, args: readonly string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 5000, maxBuffer: 4 * 1024 * 1024 }, (err, stdout) => {
      resolve(err === null ? stdout : undefined);
    });
  });
}

/** Creates a port prober sharing one `ss -H -lunpt` run (taken lazily, only when a port is busy). */
export function createPortProber(): (need: PortNeed) => Promise<PortProbe> {
  let listeners: Promise<SsListener[]> | undefined;
  const cmdlines = new Map<number, Promise<string | undefined>>();
  const cmdline = (pid: number): Promise<string | undefined> => {
    let p = cmdlines.get(pid);
    if (p === undefined) {
      p = readFile(`/proc/${pid}/cmdline`, 'utf8').then((t) => t.replaceAll('\0', ' ').trim(), () => undefined);
      cmdlines.set(pid, p);
    }
    return p;
  };
  return async (need) => {
    const outcome = await tryBind(need.protocol, need.address, need.port);
    let holders: PortHolder[] = [];
    if (outcome.bind !== 'free') {
      listeners ??= runQuiet('ss', ['-H', '-lunpt']).then((text) => parseSsListeners(text ?? ''));
      holders = await Promise.all(holdersOf(await listeners, need.protocol, need.address, need.port).map(async (h) => {
        const line = h.pid === undefined ? undefined : await cmdline(h.pid);
        return line === undefined ? h : { ...h, cmdline: line };
      }));
    }
    return { protocol: need.protocol, address: need.address, port: need.port, ...outcome, holders };
  };
}

/** SHA-256 of a file, hex. */
export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => {
        resolve(hash.digest('hex'));
      });
  });
}

/** Every asset of bootsvc's catalog, found (with sha256) or not, as the agent's asset search finds them. */
export async function probeAssets(assetsDir: string): Promise<AssetProbe[]> {
  const report = await checkBootAssets({ assetsDir, required: ['ipxe'] });
  return Promise.all(BOOT_ASSETS.map(async (spec) => {
    const path = report.assets.get(spec.name);
    const base = { name: spec.name, group: spec.group, package: spec.package };
    if (path === undefined) return base;
    const sha256 = await sha256File(path).catch(() => undefined);
    return { ...base, path, ...(sha256 === undefined ? {} : { sha256 }) };
  }));
}

/**
 * Unpacked Debian packages in the images cache whose directory starts with `prefix` (newest name
 * last): `<images.cacheDir>/build/debian`, where the agent's build and `rackside images build` put them.
 */
async function cachedPackages(cacheDir: string, prefix: string): Promise<string[]> {
  const dir = join(cacheDir, 'build', 'debian');
  const names = await readdir(dir).catch(() => []);
  return names.filter((n) => n.startsWith(prefix)).sort().map((n) => join(dir, n, 'root'));
}

async function hashed(path: string, source: NonNullable<FileProbe['source']>): Promise<FileProbe> {
  try {
    return { path, source, sha256: await sha256File(path) };
  } catch (err) {
    return { path, source, error: errorCode(err) === 'ENOENT' ? 'does not exist' : message(err) };
  }
}

/** The ramdisk kernel: images.ramdisk.kernel when set, else the newest vmlinuz unpacked in the images cache. */
export async function probeKernel(config: Config): Promise<FileProbe> {
  const configured = config.images.ramdisk.kernel;
  if (configured !== undefined) return hashed(configured, 'config');
  for (const root of (await cachedPackages(config.images.cacheDir, 'linux-image-')).reverse()) {
    const kernels = (await readdir(join(root, 'boot')).catch(() => [])).filter((f) => f.startsWith('vmlinuz-')).sort();
    const last = kernels.at(-1);
    if (last !== undefined) return hashed(join(root, 'boot', last), 'cache');
  }
  return {};
}

async function elfHead(path: string): Promise<Uint8Array | undefined> {
  try {
    const file = await open(path, 'r');
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await file.read(buf, 0, buf.length, 0);
      return buf.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  } catch {
    return undefined;
  }
}

/** Busybox: /bin/busybox (busybox-static), else one unpacked in the images cache; a static one wins. */
export async function probeBusybox(config: Config): Promise<FileProbe> {
  const candidates: { path: string; source: 'system' | 'cache' }[] = [
    { path: '/bin/busybox', source: 'system' },
    { path: '/usr/bin/busybox', source: 'system' },
    ...(await cachedPackages(config.images.cacheDir, 'busybox-static_')).reverse().map((root) => ({ path: join(root, 'bin/busybox'), source: 'cache' as const })),
  ];
  let dynamic: FileProbe | undefined;
  for (const c of candidates) {
    const head = await elfHead(c.path);
    if (head === undefined) continue;
    const isStatic = isStaticElf(head);
    const probe = { ...(await hashed(c.path, c.source)), ...(isStatic === undefined ? { error: 'not an ELF binary' } : { isStatic }) };
    if (isStatic === true && probe.error === undefined) return probe;
    dynamic ??= probe;
  }
  return dynamic ?? {};
}

/** Newest mtime under `dir` (two levels: the state dir and e.g. db/), skipping what cannot be read. */
async function newestFile(dir: string, depth: number): Promise<{ mtimeMs: number; path: string } | undefined> {
  let best: { mtimeMs: number; path: string } | undefined;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.slice(0, 5000)) {
    const path = join(dir, entry.name);
    const candidate = entry.isDirectory()
      ? (depth > 0 ? await newestFile(path, depth - 1) : undefined)
      : await stat(path).then((s) => ({ mtimeMs: s.mtimeMs, path }), () => undefined);
    if (candidate !== undefined && (best === undefined || candidate.mtimeMs > best.mtimeMs)) best = candidate;
  }
  return best;
}

/** Reads the erase record signing key in `stateDir`: mode, and the fingerprint of its public key. */
export async function probeEraseKey(stateDir: string): Promise<EraseKeyProbe> {
  const path = join(stateDir, ERASE_SIGNING_KEY_FILE);
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { path, exists: false };
    return { path, exists: true, error: err instanceof Error ? err.message : String(err) };
  }
  try {
    return { path, exists: true, mode, fingerprint: ed25519SigningKeyFromOpenSsh(await readFile(path, 'utf8')).fingerprint };
  } catch (err) {
    return { path, exists: true, mode, error: err instanceof Error ? err.message : String(err) };
  }
}

/** Creates, fsyncs and removes a file in the state dir; notes its owner, rackside's uid and the newest file there. */
export async function probeStateDir(path: string, tag: string): Promise<StateDirProbe> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (err) {
    return { path, exists: false, writable: false, error: message(err) };
  }
  if (!info.isDirectory()) return { path, exists: true, writable: false, error: 'not a directory' };
  const newest = await newestFile(path, 1);
  const passwd = await readFile('/etc/passwd', 'utf8').catch(() => '');
  const agentUid = uidOfUser(passwd, 'rackside');
  const base = {
    path, exists: true, ownerUid: info.uid, ...(agentUid === undefined ? {} : { agentUid }),
    ...(newest === undefined ? {} : { newestMtimeMs: newest.mtimeMs, newestPath: newest.path }),
  };
  const testFile = join(path, `.rackside-doctor-${tag}`);
  try {
    const file = await open(testFile, 'wx', 0o600);
    try {
      await file.writeFile('rackside doctor write test\n');
      await file.sync();
    } finally {
      await file.close();
    }
    await unlink(testFile);
    return { ...base, writable: true };
  } catch (err) {
    await unlink(testFile).catch(() => undefined);
    return { ...base, writable: false, error: message(err) };
  }
}

function stringField(value: Record<string, unknown>, key: string): string | undefined {
  const v = value[key];
  return typeof v === 'string' ? v : undefined;
}

/** The agent's ramdisk build: its status file and the manifest on disk (see {@link RamdiskBuildProbe}). */
export async function probeRamdiskBuild(config: Config): Promise<RamdiskBuildProbe> {
  const dir = config.images.cacheDir;
  const probe: RamdiskBuildProbe = { dir: join(dir, 'ramdisk') };
  const status: unknown = await readFile(join(dir, 'ramdisk-build.json'), 'utf8').then((t) => JSON.parse(t) as unknown, () => undefined);
  if (typeof status === 'object' && status !== null) {
    const s = status as Record<string, unknown>;
    const state = stringField(s, 'state');
    const msg = stringField(s, 'message');
    if (state !== undefined && msg !== undefined) {
      const fix = stringField(s, 'fix');
      const since = stringField(s, 'since');
      probe.status = { state, message: msg, ...(fix === undefined ? {} : { fix }), ...(since === undefined ? {} : { since }) };
      for (const key of ['step', 'total', 'percent'] as const) {
        const value = s[key];
        if (typeof value === 'number') probe.status[key] = value;
      }
    }
  }
  const manifest: unknown = await readFile(join(dir, 'ramdisk', 'manifest.json'), 'utf8').then((t) => JSON.parse(t) as unknown, () => undefined);
  if (typeof manifest === 'object' && manifest !== null) {
    const m = manifest as { format?: unknown; inputs?: { kernel?: { release?: unknown } } };
    if (typeof m.format === 'string') probe.built = { format: m.format, kernelRelease: typeof m.inputs?.kernel?.release === 'string' ? m.inputs.kernel.release : '?' };
  }
  return probe;
}
