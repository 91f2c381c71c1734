/**
 * @module The interactive shell of the SSH server: a small REPL. Each line is split like a shell
 * line ({@link splitCommandLine}) and run as a rackside CLI subcommand; built-ins are `help`,
 * `exit [N]`/`quit`/`logout` and Ctrl-D (or end of input). With a pty it prints a banner and the
 * prompt and does the line editing ({@link LineEditor}); without one it reads commands from
 * input silently, like `sh -s`, so `ssh -T rack1 < commands.txt` works as a script. Input
 * typed while a command runs is queued; the channel is paused when the queue is long.
 */
import { StringDecoder } from 'node:string_decoder';
import type { ServerChannel } from 'ssh2';
import { splitCommandLine } from './command-line.js';
import { LineEditor, type LineEvent } from './line-editor.js';

/** How the REPL runs. */
export interface ReplOptions {
  /** True when the client has a pty. */
  terminal: boolean;
  banner: string;
  prompt: string;
  /** Runs one command (already split) and resolves to its exit code; never throws. */
  run: (argv: string[]) => Promise<number>;
}

/** Queued lines above which the channel is paused until the REPL catches up. */
const MAX_QUEUED_EVENTS = 64;

const HELP = [
  'Type rackside CLI commands without the leading "rackside", for example:',
  '  get hosts',
  '  describe host node-1',
  'Quoting works as in a shell; pipes and redirections do not.',
  'Built-ins: help, exit [CODE] (also quit, logout, Ctrl-D).',
  '',
].join('\n');

/**
 * Runs the REPL on `channel` until `exit`, Ctrl-D or end of input, and resolves to the exit
 * code for the client: the code given to `exit`, else the last command's.
 */
export async function runRepl(channel: ServerChannel, options: ReplOptions): Promise<number> {
  const editor = new LineEditor(options.terminal);
  const decoder = new StringDecoder('utf8');
  const queue: LineEvent[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const deliver = (events: LineEvent[]): void => {
    queue.push(...events);
    if (queue.length > MAX_QUEUED_EVENTS) channel.pause();
    wake?.();
  };
  const onData = (chunk: Buffer): void => {
    const { echo, events } = editor.feed(decoder.write(chunk));
    if (echo !== '' && !channel.writableEnded) channel.write(echo);
    deliver(events);
  };
  const onEnd = (): void => {
    if (ended) return;
    ended = true;
    const rest = decoder.end();
    deliver([...(rest === '' ? [] : editor.feed(rest).events), ...editor.end()]);
  };
  channel.on('data', onData);
  channel.once('end', onEnd);
  channel.once('close', onEnd);
  const next = async (): Promise<LineEvent> => {
    while (queue.length === 0) await new Promise<void>((resolve) => { wake = resolve; });
    wake = undefined;
    const event = queue.shift() ?? { type: 'eof' };
    if (queue.length <= MAX_QUEUED_EVENTS / 2 && channel.isPaused()) channel.resume();
    return event;
  };
  const write = (text: string): void => {
    if (channel.writableEnded || channel.destroyed) return;
    channel.write(options.terminal ? text.replace(/\r?\n/g, '\r\n') : text);
  };
  const writeError = (text: string): void => {
    if (channel.writableEnded || channel.destroyed) return;
    channel.stderr.write(options.terminal ? text.replace(/\r?\n/g, '\r\n') : text);
  };

  let lastCode = 0;
  try {
    if (options.terminal && options.banner !== '') write(`${options.banner}\n`);
    for (;;) {
      if (options.terminal) write(options.prompt);
      const event = await next();
      if (event.type === 'interrupt') continue;
      if (event.type === 'eof') {
        if (options.terminal) write('\n');
        return lastCode;
      }
      const split = splitCommandLine(event.text);
      if ('error' in split) {
        writeError(`rackside: ${split.error}\n`);
        lastCode = 2;
        continue;
      }
      const [first, second, ...more] = split.argv;
      if (first === undefined) continue;
      if (first === 'exit' || first === 'quit' || first === 'logout') {
        if (second === undefined) return lastCode;
        const code = Number(second);
        if (more.length === 0 && Number.isInteger(code) && code >= 0 && code <= 255) return code;
        writeError(`${first}: expected an exit code 0-255\n`);
        lastCode = 2;
        continue;
      }
      if (first === 'help' && second === undefined) {
        write(HELP);
        lastCode = await options.run(['help']);
        continue;
      }
      lastCode = await options.run(split.argv);
    }
  } finally {
    channel.off('data', onData);
  }
}
