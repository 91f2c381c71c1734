/**
 * @module An in-process agent with the `local` provisioner on loopback, for integration tests:
 * free TCP/UDP ports, the config file, `startAgent`, and a bounded poll.
 */
import { createSocket } from 'node:dgram';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { startAgent, type RunningAgent } from '../../agent/main.js';

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        resolve(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
  });
}

/** A UDP port free on 127.0.0.1 right now. */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => { resolve(); }));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => { resolve(); }));
  return port;
}

/** Polls `probe` every 50 ms until it returns a value; throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A started local agent and its boot HTTP base URL. */
export interface LocalAgent {
  agent: RunningAgent;
  api: string;
  boot: string;
  httpPort: number;
}

/**
 * Starts the agent in-process with `provisioner: local`, boot HTTP on a free loopback port, state
 * and caches in `dir`, plus `extraConfig` lines (YAML, top-level sections); stops it after the test.
 */
export async function startLocalAgent(t: TestContext, dir: string, extraConfig: readonly string[] = []): Promise<LocalAgent> {
  const httpPort = await freePort();
  const configPath = join(dir, 'rackside.yaml');
  await writeFile(
    configPath,
    [
      'agent:', `  stateDir: ${join(dir, 'state')}`,
      'provisioner: local',
      'management:', '  listen: 127.0.0.1:0',
      'http:', `  listen: 127.0.0.1:${httpPort}`,
      'images:', `  cacheDir: ${join(dir, 'cache')}`,
      'reconcile:', '  timeScale: 0.01',
      'log:', '  level: silent',
      ...extraConfig,
    ].join('\n'),
  );
  // The tests bring their own ramdisk (or a simulated one): no background build, no wait for it.
  const agent = await startAgent({ configPath, ramdiskBuild: 'off' });
  t.after(() => agent.stop());
  return { agent, api: agent.managementUrl, boot: `http://127.0.0.1:${httpPort}`, httpPort };
}
