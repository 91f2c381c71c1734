/**
 * @module An in-process ssh2 client for the server tests (no OpenSSH needed): connect with a
 * key or another auth method, run exec and shells, collect output and exit codes.
 */
import ssh2 from 'ssh2';
import type { AnyAuthMethod, AuthenticationType, AuthHandlerMiddleware, Client, ClientChannel, ConnectConfig, PseudoTtyOptions } from 'ssh2';

/** ssh2's "no more methods" answer (the types do not include `false`). */
export const NO_MORE_METHODS = false as unknown as AuthenticationType;

/** An auth handler trying `methods` in order, then giving up. */
export function tryMethods(methods: AnyAuthMethod[]): AuthHandlerMiddleware {
  let next = 0;
  return (_left, _partial, callback) => { callback(methods[next++] ?? NO_MORE_METHODS); };
}

/** Connects and resolves when authenticated; rejects with the client's error otherwise. */
export function connect(port: number, config: Partial<ConnectConfig>): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = new ssh2.Client();
    client.once('ready', () => { resolve(client); });
    client.on('error', reject); // later errors (resets at teardown) are ignored: the promise is settled
    client.once('close', () => { reject(new Error('closed before ready')); });
    client.connect({ host: '127.0.0.1', port, username: 'ops', readyTimeout: 10_000, ...config });
  });
}

/** Connects with one private key (and only public-key auth). */
export function connectWithKey(port: number, privateKey: string | ssh2.ParsedKey, username = 'ops'): Promise<Client> {
  return connect(port, {
    username,
    authHandler: tryMethods([{ type: 'publickey', username, key: privateKey }]),
  });
}

/** Output of a finished channel. */
export interface ChannelResult {
  stdout: string;
  stderr: string;
  code: number | undefined;
}

/** Collects a channel's output until it closes. */
export function collect(channel: ClientChannel): Promise<ChannelResult> {
  return new Promise((resolve) => {
    const result: ChannelResult = { stdout: '', stderr: '', code: undefined };
    channel.on('data', (c: Buffer) => { result.stdout += c.toString(); });
    channel.stderr.on('data', (c: Buffer) => { result.stderr += c.toString(); });
    channel.on('exit', (code: number | null) => { result.code = code ?? undefined; });
    channel.on('close', () => { resolve(result); });
  });
}

/** Runs one exec request and returns its output and exit code. */
export function exec(client: Client, command: string, input?: string): Promise<ChannelResult> {
  return new Promise((resolve, reject) => {
    client.exec(command, (err, channel) => {
      if (err !== undefined) {
        reject(err);
        return;
      }
      const done = collect(channel);
      if (input !== undefined) channel.end(input);
      resolve(done);
    });
  });
}

/** Opens a shell (with a pty when `pty` is given), writes `input`, and collects everything. */
export function shell(client: Client, input: string, pty?: PseudoTtyOptions): Promise<ChannelResult> {
  return new Promise((resolve, reject) => {
    const onChannel = (err: Error | undefined, channel: ClientChannel): void => {
      if (err !== undefined) {
        reject(err);
        return;
      }
      const done = collect(channel);
      channel.write(input);
      if (pty === undefined) channel.end();
      resolve(done);
    };
    if (pty === undefined) client.shell(false, onChannel);
    else client.shell(pty, onChannel);
  });
}
