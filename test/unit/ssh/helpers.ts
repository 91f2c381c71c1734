/**
 * @module Shared helpers of the SSH tests: a fake command runner standing in for the CLI
 * dispatcher, a server started in a scratch directory with an audit recorder, key generation
 * (ssh2 in-process, or `ssh-keygen` for the OpenSSH tests), running the OpenSSH client with a
 * deadline, tiny HTTP/TCP servers, waiting for a condition, and the RACKSIDE_REQUIRE_INTEGRATION
 * rule for missing tools (skip with a reason, or fail when required).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import ssh2 from 'ssh2';
import { generateEd25519Key } from '../../../agent/ssh/host-key.js';
import { createSshServer, type CommandIo, type SshAuditEvent, type SshServer, type SshServerOptions } from '../../../agent/ssh/index.js';

/** True when integration prerequisites must be present (CI): a missing tool fails the test. */
export const integrationRequired = process.env.RACKSIDE_REQUIRE_INTEGRATION === '1';

/** Returns true when every tool exists (and root when `root`), else skips (or throws when required). */
export function requireTools(t: TestContext, tools: Record<string, string>, root = false): boolean {
  const missing = Object.entries(tools)
    .filter(([tool]) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
    .map(([tool, pkg]) => `${tool} (apt-get install ${pkg})`);
  if (root && process.getuid?.() !== 0) missing.push('root privileges');
  if (missing.length === 0) return true;
  const reason = `missing ${missing.join(', ')}`;
  if (integrationRequired) throw new Error(reason);
  t.skip(reason);
  return false;
}

/** A scratch directory and its removal. */
export function scratchDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `rackside-${prefix}-`));
  return { dir, cleanup: () => { rmSync(dir, { recursive: true, force: true }); } };
}

/** Writes text to a stream and waits for it to be accepted. */
function writeAsync(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve) => { stream.write(text, () => { resolve(); }); });
}

/**
 * The stand-in for the CLI dispatcher: `argv: …` (JSON) on stdout for anything; `fail N` exits N;
 * `warn` writes to stderr; `cat` copies stdin; `help` prints `fake help`; `hang` waits for abort;
 * `throw` throws.
 */
export async function fakeRunCommand(argv: string[], io: CommandIo): Promise<number> {
  const [first, second] = argv;
  if (first === 'throw') throw new Error('boom');
  if (first === 'help') {
    await writeAsync(io.stdout, 'fake help\n');
    return 0;
  }
  if (first === 'cat') {
    let text = '';
    for await (const chunk of io.stdin) text += String(chunk);
    await writeAsync(io.stdout, `cat:${text}`);
    return 0;
  }
  if (first === 'hang') {
    await new Promise<void>((resolve) => { io.signal?.addEventListener('abort', () => { resolve(); }); });
    return 0;
  }
  await writeAsync(io.stdout, `argv: ${JSON.stringify(argv)}\n`);
  if (first === 'warn') await writeAsync(io.stderr, 'a warning\n');
  if (first === 'fail') return Number(second ?? '1');
  return 0;
}

/** A key pair: OpenSSH private key text and public line. */
export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

/**
 * Generates a key in-process (fast; for tests that use the ssh2 client). ed25519 keys come
 * from rackside's own encoder: ssh2's generator makes a broken key about once in 256 tries.
 */
export function generateKey(type: 'ed25519' | 'rsa' | 'ecdsa' = 'ed25519', comment = 'test@rackside'): KeyPair {
  if (type === 'ed25519') return generateEd25519Key(comment);
  const pair = type === 'rsa'
    ? ssh2.utils.generateKeyPairSync('rsa', { bits: 2048, comment })
    : ssh2.utils.generateKeyPairSync('ecdsa', { bits: 256, comment });
  return { privateKey: pair.private, publicKey: pair.public.trim() };
}

/** Generates `<dir>/<name>` and `.pub` with ssh-keygen; returns the private key path and public line. */
export function sshKeygen(dir: string, name: string): { path: string; publicKey: string } {
  const path = join(dir, name);
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ssh-keygen failed: ${r.stderr}`);
  return { path, publicKey: spawnSync('cat', [`${path}.pub`], { encoding: 'utf8' }).stdout.trim() };
}

/** A server under test with its scratch directory and recorded audit events. */
export interface TestServer {
  server: SshServer;
  port: number;
  dir: string;
  authorizedKeysPath: string;
  events: SshAuditEvent[];
  clock: { nowMs: number };
  close: () => Promise<void>;
}

/** Starts a server on 127.0.0.1 with `authorizedKeys` text, the fake runner and a settable clock. */
export async function startTestServer(authorizedKeys: string, extra: Partial<SshServerOptions> = {}): Promise<TestServer> {
  const { dir, cleanup } = scratchDir('ssh');
  const authorizedKeysPath = join(dir, 'authorized_keys');
  writeFileSync(authorizedKeysPath, authorizedKeys);
  const events: SshAuditEvent[] = [];
  const clock = { nowMs: Date.parse('2030-01-01T00:00:00Z') };
  const server = createSshServer({
    listen: { host: '127.0.0.1', port: 0 },
    hostKeyPath: join(dir, 'state', 'ssh_host_ed25519_key'),
    authorizedKeysPath,
    runCommand: fakeRunCommand,
    audit: (e) => { events.push(e); },
    now: () => clock.nowMs,
    ...extra,
  });
  try {
    const info = await server.start();
    return {
      server, port: info.address.port, dir, authorizedKeysPath, events, clock,
      close: async () => { try { await server.stop(); } finally { cleanup(); } },
    };
  } catch (err) {
    cleanup();
    throw err;
  }
}

/** The result of one OpenSSH client run. */
export interface SshRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program with a deadline (killed by its PID on expiry), feeding `input` to stdin. */
export function runProgram(program: string, args: string[], input = '', timeoutMs = 20_000): Promise<SshRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** OpenSSH client options for tests: no known_hosts, no prompts, only the given key. */
export function sshArgs(port: number, keyPath: string, extra: string[] = []): string[] {
  return [
    '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes',
    '-o', 'IdentitiesOnly=yes', '-o', 'LogLevel=ERROR', '-o', 'ConnectTimeout=10', '-F', '/dev/null',
    '-i', keyPath, '-p', String(port), ...extra,
  ];
}

/** Polls `condition` every 20 ms until it holds; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A tiny HTTP server answering `status page` on 127.0.0.1; stands in for the management API. */
export async function startHttpServer(body = 'rackside status page'): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => { res.end(body); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }),
  };
}
