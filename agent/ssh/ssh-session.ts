/**
 * @module One authenticated SSH session channel (RFC 4254 §6): `exec` runs one rackside CLI
 * subcommand through the injected {@link RunCommand} and returns its exit code as
 * `exit-status` (§6.10); `shell` starts the REPL (or the forced command); `pty-req` is honoured
 * unless the key says `no-pty`/`restrict`; `env`, `x11-req`, `auth-agent-req@openssh.com`,
 * `signal` and subsystems (sftp) are refused. A `command="…"` in authorized_keys replaces
 * whatever the client asked for, as in sshd(8).
 */
import { PassThrough, Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { PseudoTtyInfo, ServerChannel, Session } from 'ssh2';
import type { AuthorizedKeyOptions } from './authorized-keys.js';
import { joinCommandLine, redactArgv, redactCommandLine, splitCommandLine } from './command-line.js';
import { runRepl } from './repl.js';
import type { AuditSink, RunCommand, SshAuditEvent, SshLogger } from './types.js';

/** Who is on the other end of a session, fixed at authentication. */
export interface SessionIdentity {
  user: string;
  address: string;
  port: number;
  fingerprint: string;
  keyComment: string;
  keyLine: number;
  options: AuthorizedKeyOptions;
}

/** What a session needs from the server. */
export interface SessionContext {
  identity: SessionIdentity;
  runCommand: RunCommand;
  audit: AuditSink;
  now: () => number;
  log: SshLogger;
  /** Printed when an interactive shell with a pty starts. */
  banner: string;
  prompt: string;
  /** Aborts when the client's connection closes (ssh2 may not emit a channel `close` then). */
  connectionClosed: AbortSignal;
}

/** Exit code when the command line cannot be split (like a shell's syntax error). */
export const EXIT_USAGE = 2;
/** Exit code when the runner threw (EX_SOFTWARE, sysexits.h). */
export const EXIT_INTERNAL = 70;

type Reply = (() => void) | undefined;

/** Builds an audit event for this identity. */
export function identityEvent(ctx: SessionContext, type: SshAuditEvent['type'], extra: Partial<SshAuditEvent> = {}): SshAuditEvent {
  const id = ctx.identity;
  return {
    type, atMs: ctx.now(), address: id.address, port: id.port, user: id.user,
    fingerprint: id.fingerprint, keyComment: id.keyComment, keyLine: id.keyLine, ...extra,
  };
}

/**
 * A Writable forwarding to a channel without ever ending it; with a pty, LF becomes CR LF (the
 * client terminal is raw, there is no line discipline to do it). Writes after the client left
 * are dropped.
 */
export function channelWriter(target: Writable, pty: boolean): Writable {
  let lastWasCr = false;
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (target.destroyed || target.writableEnded) {
        callback();
        return;
      }
      let data = chunk;
      if (pty) {
        const parts: number[] = [];
        for (const byte of chunk) {
          if (byte === 0x0a && !lastWasCr) parts.push(0x0d);
          parts.push(byte);
          lastWasCr = byte === 0x0d;
        }
        data = Buffer.from(parts);
      }
      if (target.write(data)) {
        callback();
        return;
      }
      const done = (): void => {
        target.off('drain', done);
        target.off('close', done);
        callback();
      };
      target.on('drain', done);
      target.on('close', done);
    },
  });
}

/** Ends a writer made by {@link channelWriter} and waits until everything reached the channel. */
async function flush(writer: Writable): Promise<void> {
  if (!writer.writableEnded) writer.end();
  try {
    await finished(writer);
  } catch {
    // a destroyed writer has nothing left to flush
  }
}

/**
 * Runs argv with streams bound to `channel`; never throws. Resolves to the exit code.
 * `stdin` is the channel for exec, an empty stream for REPL commands.
 */
export async function runBound(ctx: SessionContext, channel: ServerChannel, argv: string[], pty: boolean, stdin: Readable): Promise<number> {
  const stdout = channelWriter(channel, pty);
  const stderr = channelWriter(channel.stderr, pty);
  const abort = new AbortController();
  const onClose = (): void => { abort.abort(); };
  channel.once('close', onClose);
  if (ctx.connectionClosed.aborted) abort.abort();
  ctx.connectionClosed.addEventListener('abort', onClose, { once: true });
  let code: number;
  try {
    code = await ctx.runCommand(argv, { stdout, stderr, stdin, signal: abort.signal });
    if (!Number.isInteger(code) || code < 0 || code > 255) code = EXIT_INTERNAL;
  } catch (err) {
    ctx.log.warn({ err, argv: redactArgv(argv) }, 'ssh: command failed');
    stderr.write(`internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    code = EXIT_INTERNAL;
  } finally {
    channel.off('close', onClose);
    ctx.connectionClosed.removeEventListener('abort', onClose);
  }
  await Promise.all([flush(stdout), flush(stderr)]);
  return code;
}

function finish(channel: ServerChannel, code: number): void {
  if (channel.destroyed || channel.writableEnded) return;
  channel.exit(code);
  channel.end();
}

async function runExec(ctx: SessionContext, channel: ServerChannel, requested: string, pty: boolean): Promise<void> {
  const forced = ctx.identity.options.command;
  const line = forced ?? requested;
  const split = splitCommandLine(line);
  if ('error' in split) {
    channel.stderr.write(`rackside: ${split.error}\n`);
    ctx.audit(identityEvent(ctx, 'exec-end', { reason: split.error, exitCode: EXIT_USAGE }));
    finish(channel, EXIT_USAGE);
    return;
  }
  // Audit and log show the command with secrets typed on it (`--token X`) redacted.
  const shown = redactArgv(split.argv);
  ctx.audit(identityEvent(ctx, 'exec', {
    argv: shown, forced: forced !== undefined,
    ...(forced !== undefined && requested !== '' ? { requestedCommand: redactCommandLine(requested) } : {}),
  }));
  ctx.log.info({ user: ctx.identity.user, fingerprint: ctx.identity.fingerprint, command: joinCommandLine(shown) }, 'ssh: exec');
  // A proxy, not the channel itself: a command that reads stdin with `for await` destroys the
  // stream at its end, which would take the channel's output side with it.
  const stdin = new PassThrough();
  channel.pipe(stdin);
  const code = await runBound(ctx, channel, split.argv, pty, stdin);
  channel.unpipe(stdin);
  stdin.destroy();
  ctx.audit(identityEvent(ctx, 'exec-end', { argv: shown, exitCode: code }));
  finish(channel, code);
}

async function runShell(ctx: SessionContext, channel: ServerChannel, pty: boolean): Promise<void> {
  ctx.audit(identityEvent(ctx, 'shell-start', { reason: pty ? 'pty' : 'no pty' }));
  const code = await runRepl(channel, {
    terminal: pty,
    banner: ctx.banner,
    prompt: ctx.prompt,
    run: (argv) => {
      ctx.audit(identityEvent(ctx, 'exec', { argv: redactArgv(argv), interactive: true, forced: false }));
      return runBound(ctx, channel, argv, pty, Readable.from([]));
    },
  });
  ctx.audit(identityEvent(ctx, 'shell-end', { exitCode: code }));
  finish(channel, code);
}

/** Reports a failure of a running exec or shell and closes its channel with {@link EXIT_INTERNAL}. */
function guard(ctx: SessionContext, channel: ServerChannel, work: Promise<void>): void {
  work.catch((err: unknown) => {
    ctx.log.warn({ err }, 'ssh: session failed');
    finish(channel, EXIT_INTERNAL);
  });
}

/** Wires the request handlers of one accepted session. */
export function handleSession(session: Session, ctx: SessionContext): void {
  let pty: PseudoTtyInfo | undefined;
  const refuse = (request: string, reject: Reply, reason: string): void => {
    reject?.();
    ctx.audit(identityEvent(ctx, 'request-refused', { request, reason }));
  };
  session.on('pty', (accept: Reply, reject: Reply, info: PseudoTtyInfo) => {
    if (!ctx.identity.options.pty) {
      refuse('pty', reject, 'the key is restricted (no-pty)');
      return;
    }
    pty = info;
    accept?.();
  });
  session.on('window-change', (accept: Reply) => { accept?.(); });
  session.on('env', (_accept: Reply, reject: Reply) => { reject?.(); });
  session.on('signal', (_accept: Reply, reject: Reply) => { reject?.(); });
  session.on('x11', (_accept: Reply, reject: Reply) => { refuse('x11', reject, 'X11 forwarding is not offered'); });
  session.on('auth-agent', (_accept: Reply, reject: Reply) => { refuse('auth-agent', reject, 'agent forwarding is not offered'); });
  session.on('sftp', (_accept: unknown, reject: Reply) => { refuse('sftp', reject, 'no subsystems are offered'); });
  session.on('subsystem', (_accept: unknown, reject: Reply, info: { name: string }) => {
    refuse(`subsystem:${info.name}`, reject, 'no subsystems are offered');
  });
  session.on('exec', (accept: () => ServerChannel | undefined, _reject: Reply, info: { command: string }) => {
    const channel = accept();
    if (channel === undefined) return;
    channel.on('error', (err: Error) => { ctx.log.debug({ err }, 'ssh: exec channel error'); });
    guard(ctx, channel, runExec(ctx, channel, info.command, pty !== undefined));
  });
  session.on('shell', (accept: () => ServerChannel | undefined) => {
    const channel = accept();
    if (channel === undefined) return;
    channel.on('error', (err: Error) => { ctx.log.debug({ err }, 'ssh: shell channel error'); });
    const terminal = pty !== undefined;
    const forced = ctx.identity.options.command !== undefined;
    guard(ctx, channel, forced ? runExec(ctx, channel, '', terminal) : runShell(ctx, channel, terminal));
  });
}
