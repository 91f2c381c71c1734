/**
 * @module Remote control over SSH, wired into the agent: the embedded SSH server runs rackside
 * CLI subcommands against the local management API (same output as on the console), `ssh -L`
 * reaches only the management listener, every session lands in the audit trail as events, and
 * the optional reverse tunnel keeps the server reachable from a central bastion.
 */
import type { Readable, Writable } from 'node:stream';
import { runCli } from './cli/run.js';
import type { CliIo } from './cli/io.js';
import { CliError, ExitCode } from './cli/io.js';
import { createDispatchFetch } from './cli/dispatch-fetch.js';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import { createSshServer, createTunnel, disabledTunnelStatus, type SshAuditEvent, type TunnelStatus } from './ssh/index.js';
import type { EventLog } from './store/types.js';

/** Running remote access. */
export interface RemoteAccess {
  /** The SSH server's address and host key fingerprint, when enabled. */
  server?: { address: string; port: number; fingerprint: string };
  tunnelStatus(): TunnelStatus;
  stop(): Promise<void>;
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The CLI bound to SSH streams: talks to `managementUrl` with the management token, reads `-f -`
 * from the session's stdin, and refuses what must not run remotely (`agent`, reading files on
 * the head node) — `apply -f FILE` names a file on the operator's side, so use `-f -`.
 */
export function sshCommandRunner(managementUrl: string, token: string | undefined, fetch: typeof globalThis.fetch = globalThis.fetch) {
  return async (argv: string[], io: { stdout: Writable; stderr: Writable; stdin: Readable; signal?: AbortSignal }): Promise<number> => {
    const cliIo: CliIo = {
      stdout: (text) => io.stdout.write(text),
      stderr: (text) => io.stderr.write(text),
      env: { RACKSIDE_SERVER: managementUrl, ...(token !== undefined ? { RACKSIDE_TOKEN: token } : {}) },
      readStdin: () => readAll(io.stdin),
      readFile: (path) => Promise.reject(new CliError(ExitCode.usage, `over SSH, files on the head node are not read (${path}): pipe the file and use -f -`)),
      fetch,
      now: () => Date.now(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      clientVersion: 'ssh',
      runAgent: () => Promise.reject(new CliError(ExitCode.usage, '"rackside agent" cannot be started over SSH')),
      ...(io.signal !== undefined ? { signal: io.signal } : {}),
    };
    return runCli(argv, cliIo);
  };
}

function auditEvent(event: SshAuditEvent): { reason: string; message: string; type: 'Normal' | 'Warning' } {
  const who = `${event.user ?? '?'}@${event.address}${event.fingerprint !== undefined ? ` (${event.fingerprint})` : ''}`;
  const warning = ['auth-failure', 'forward-refused', 'request-refused', 'rate-limited', 'connection-dropped'].includes(event.type);
  const detail = event.argv !== undefined ? `: ${event.argv.join(' ')}` : event.reason !== undefined ? `: ${event.reason}` : '';
  const reason = `SSH${event.type.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')}`;
  return { reason, message: `${who}${detail}`, type: warning ? 'Warning' : 'Normal' };
}

/** Starts the SSH server and tunnel from `config.ssh` (nothing when absent). */
export async function startRemoteAccess(options: {
  config: Config; store: Pick<EventLog, 'appendEvents'>; managementUrl: string; managementPort: number; logger: Logger;
  /** The management app's unix socket (mutual TLS): SSH commands go through it, holding no client certificate. */
  managementSocket?: string;
}): Promise<RemoteAccess> {
  const { config, store, logger } = options;
  const ssh = config.ssh;
  if (ssh === undefined) return { tunnelStatus: () => disabledTunnelStatus(Date.now()), stop: () => Promise.resolve() };
  const log = logger.child({ component: 'ssh' });
  const server = createSshServer({
    listen: ssh.listen,
    hostKeyPath: ssh.hostKey,
    authorizedKeysPath: ssh.authorizedKeys,
    runCommand: options.managementSocket === undefined
      ? sshCommandRunner(options.managementUrl, config.management.token)
      : sshCommandRunner('http://localhost', config.management.token, createDispatchFetch({ socketPath: options.managementSocket })),
    forwardTarget: { host: config.management.listen.host, port: options.managementPort },
    audit: (event) => {
      const { reason, message, type } = auditEvent(event);
      void store
        .appendEvents([{ time: new Date(event.atMs).toISOString(), type, reason, message, source: 'ssh', data: { ...event } }])
        .catch((err: unknown) => {
          log.warn({ err }, 'recording an SSH audit event failed');
        });
    },
    log,
  });
  const started = await server.start();
  log.info({ address: started.address, fingerprint: started.hostKeyFingerprint }, 'SSH server listening');
  const tunnelConfig = ssh.tunnel;
  const tunnel =
    tunnelConfig?.hostKey === undefined
      ? undefined
      : createTunnel({
          host: tunnelConfig.host,
          port: tunnelConfig.port,
          user: tunnelConfig.user,
          hostKey: tunnelConfig.hostKey,
          identity: tunnelConfig.identity,
          remotePort: tunnelConfig.remotePort,
          target: { host: '127.0.0.1', port: started.address.port },
          log,
        });
  tunnel?.start();
  return {
    server: { address: started.address.host, port: started.address.port, fingerprint: started.hostKeyFingerprint },
    tunnelStatus: () => tunnel?.status() ?? disabledTunnelStatus(Date.now()),
    stop: async () => {
      await tunnel?.stop();
      await server.stop();
    },
  };
}
