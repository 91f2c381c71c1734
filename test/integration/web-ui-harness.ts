/**
 * Test harness for the status page: a real agent started in-process from a config file (demo
 * provisioner, loopback port, scratch state dir, optional management token), with the status
 * page put in front of its management API (the way agent/main.ts mounts it with
 * `withStatusPage`; skipped when the agent already serves the page), and a headless Debian
 * Chromium driven by playwright-core with a fresh profile directory whose processes are killed
 * by PID if closing hangs.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { chromium, type BrowserContext } from 'playwright-core';
import { createLogger } from '../../agent/log.js';
import { startAgent, type RunningAgent } from '../../agent/main.js';
import { createStatusPage } from '../../agent/web/ui/index.js';

/** Debian's Chromium. */
export const CHROMIUM = '/usr/bin/chromium';
/** Flags for this offline machine (see docs/test-peers.md, "OpenSSH and Chromium"). */
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync',
];
/** The management token configured on token-protected agents. */
export const TEST_TOKEN = 'ui-test-token-0123456789abcdef';
/** Where screenshots go (gitignored). */
export const ARTIFACTS = join(process.cwd(), 'test-artifacts');

/** Why browser tests cannot run here, or undefined when they can (a missing browser fails under RACKSIDE_REQUIRE_INTEGRATION=1). */
export function browserSkipReason(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  const reason = `${CHROMIUM} not found (apt-get install chromium)`;
  if (process.env.RACKSIDE_REQUIRE_INTEGRATION === '1') throw new Error(`RACKSIDE_REQUIRE_INTEGRATION=1 but ${reason}`);
  return reason;
}

/** A free loopback TCP port (bound and released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => { resolve(); }));
  return port;
}

/** Options of {@link startUiAgent}. */
export interface UiAgentOptions {
  port: number;
  token?: boolean;
  provisioner?: 'demo' | 'fixture';
  timeScale?: number;
}

/** A running agent with the status page, restartable on the same port and state dir. */
export interface UiAgent {
  agent: RunningAgent;
  url: string;
  dir: string;
  stop(): Promise<void>;
  /** Starts the agent again with the same config (after {@link UiAgent.stop}). */
  start(): Promise<void>;
}

/** Puts the status page in front of a running agent's API handler (unless it serves `/` already). */
export async function mountStatusPage(agent: RunningAgent): Promise<void> {
  const probe = await fetch(`${agent.managementUrl}/`);
  if ((probe.headers.get('content-type') ?? '').includes('text/html')) return;
  const [apiListener] = agent.server.listeners('request') as RequestListener[];
  if (apiListener === undefined) throw new Error('agent server has no request listener');
  const app = express();
  app.use(createStatusPage());
  app.use((req, res) => { apiListener(req, res); });
  agent.server.removeAllListeners('request');
  agent.server.on('request', app);
}

/** Starts an agent (demo provisioner by default) in `dir` and mounts the status page. */
export async function startUiAgent(dir: string, options: UiAgentOptions): Promise<UiAgent> {
  const configPath = join(dir, 'rackside.yaml');
  await mkdir(dir, { recursive: true });
  await writeFile(configPath, [
    'agent:', '  id: ui-test-rack', `  stateDir: ${join(dir, 'state')}`,
    `provisioner: ${options.provisioner ?? 'demo'}`,
    'management:', `  listen: 127.0.0.1:${options.port}`, ...(options.token === true ? [`  token: ${TEST_TOKEN}`] : []),
    'reconcile:', `  timeScale: ${options.timeScale ?? 0.01}`,
    'log:', '  level: warn',
  ].join('\n'));
  const logger = createLogger({ level: 'warn' });
  const handle: UiAgent = {
    agent: undefined as unknown as RunningAgent,
    url: `http://127.0.0.1:${options.port}`,
    dir,
    stop: () => handle.agent.stop(),
    start: async () => {
      handle.agent = await startAgent({ configPath }, logger);
      await mountStatusPage(handle.agent);
    },
  };
  await handle.start();
  return handle;
}

/** A browser context on a fresh profile; `close()` falls back to SIGKILL by PID. */
export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** PIDs of processes whose command line names `marker` (our own profile dir). */
function pidsWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) pids.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return pids;
}

/** Launches headless Chromium on a fresh `--user-data-dir` (playwright passes it for a persistent context). */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'rackside-ui-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1440, height: 900 },
    timeout: 60_000,
  });
  return {
    context,
    close: async () => {
      const closed = context.close().then(() => true, () => false);
      const timedOut = new Promise<boolean>((resolve) => { setTimeout(() => { resolve(false); }, 10_000).unref(); });
      if (!(await Promise.race([closed, timedOut]))) {
        for (const pid of pidsWith(profile)) {
          try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
        }
      }
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Makes the scratch directory of one test file. */
export function scratch(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `rackside-${prefix}-`));
}
