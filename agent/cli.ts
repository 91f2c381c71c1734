#!/usr/bin/env node
/**
 * @module The `rackside` executable (package.json `bin`): builds the real {@link CliIo} from
 * the process (argv, env, stdin, files, fetch, clock, SIGINT) and exits with the code
 * runCli returns. `rackside agent` loads agent/main.ts lazily, so client commands never load
 * the daemon. Exit codes: see agent/cli/io.ts and `rackside --help`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError, ExitCode, type CliIo, type RunAgentOptions, type RunControllerOptions } from './cli/io.js';
import { runCli } from './cli/run.js';

/** This package's version, from package.json two levels above dist/agent/cli.js. */
async function readClientVersion(): Promise<string> {
  try {
    const pkg: unknown = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    const version = typeof pkg === 'object' && pkg !== null ? (pkg as { version?: unknown }).version : undefined;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Loads agent/main.js and runs the daemon. The specifier is a variable so a missing main.ts cannot break the build. */
async function runAgent(options: RunAgentOptions): Promise<number> {
  const specifier = new URL('./main.js', import.meta.url).href;
  let mod: unknown;
  try {
    mod = await import(specifier);
  } catch (err) {
    const code = (err as { code?: unknown } | undefined)?.code;
    if (code === 'ERR_MODULE_NOT_FOUND' && err instanceof Error && err.message.includes('main.js')) {
      throw new CliError(ExitCode.failure, 'the agent is not built: dist/agent/main.js is missing (run npm run build)');
    }
    throw err;
  }
  const run = typeof mod === 'object' && mod !== null ? (mod as { runAgent?: unknown }).runAgent : undefined;
  if (typeof run !== 'function') throw new CliError(ExitCode.failure, 'agent/main.js does not export runAgent');
  const code: unknown = await (run as (o: RunAgentOptions) => Promise<unknown>)(options);
  return typeof code === 'number' ? code : ExitCode.failure;
}

/** Loads controller/main.js (the fleet controller) and runs it; the specifier is a variable, like the agent's. */
async function runController(options: RunControllerOptions): Promise<number> {
  const mod: unknown = await import(new URL('../controller/main.js', import.meta.url).href);
  const run = typeof mod === 'object' && mod !== null ? (mod as { runController?: unknown }).runController : undefined;
  if (typeof run !== 'function') throw new CliError(ExitCode.failure, 'controller/main.js does not export runController');
  const code: unknown = await (run as (o: RunControllerOptions) => Promise<unknown>)(options);
  return typeof code === 'number' ? code : ExitCode.failure;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

const interrupt = new AbortController();
const argv = process.argv.slice(2);
const ownsSignals = argv[0] === 'agent' || (argv[0] === 'controller' && !argv.includes('racks'));
if (!ownsSignals) {
  // The agent and the controller install their own signal handlers; client commands stop watching on Ctrl-C.
  process.once('SIGINT', () => {
    interrupt.abort();
  });
}

const io: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  readStdin,
  readFile: (path) => readFile(path, 'utf8'),
  writeFile: async (path, text) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  },
  writeBytes: async (path, bytes) => {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
  },
  fetch: globalThis.fetch,
  now: () => Date.now(),
  sleep: (ms) => sleep(ms),
  clientVersion: await readClientVersion(),
  runAgent,
  runController,
  createDriverRegistry: async () => {
    const drivers = await import('../drivers/index.js');
    const registry = new drivers.DriverRegistry();
    drivers.registerBuiltinDrivers(registry);
    return registry;
  },
  signal: interrupt.signal,
};

const exitCode = await runCli(argv, io);
process.exitCode = exitCode;
if (!ownsSignals) {
  // Flush stdout/stderr, then exit even if a watch left a socket open.
  process.stdout.write('', () => process.exit(exitCode));
}
