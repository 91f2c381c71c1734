/**
 * @module A one-shot QMP client (QEMU Machine Protocol over a unix socket): read the greeting,
 * `qmp_capabilities`, run one command, return its `return` value. Importable, and runnable as
 * `node qmp-command.js SOCKET COMMAND [JSON-ARGUMENTS]` by the ipmi_sim chassis-control script
 * (exit 0 and the JSON result on stdout, or exit 1 and the error on stderr).
 */
import { createConnection } from 'node:net';
import { pathToFileURL } from 'node:url';

/** Runs `command` on the QMP socket at `socketPath`; rejects on QMP errors, socket errors or timeout. */
export function qmpCommand(socketPath: string, command: string, args?: Record<string, unknown>, timeoutMs = 3000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    let buffered = '';
    let step: 'greeting' | 'capabilities' | 'command' = 'greeting';
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`QMP ${command}: no answer within ${timeoutMs} ms`)); }, timeoutMs);
    const finish = (err: Error | undefined, value?: unknown): void => {
      clearTimeout(timer);
      socket.end();
      if (err === undefined) resolve(value);
      else reject(err);
    };
    socket.on('error', (err) => { finish(err); });
    socket.on('data', (chunk) => {
      buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line === '') continue;
        const message = JSON.parse(line) as { QMP?: unknown; return?: unknown; error?: { desc?: string }; event?: string };
        if (message.event !== undefined) continue;
        if (step === 'greeting' && message.QMP !== undefined) {
          step = 'capabilities';
          socket.write(`${JSON.stringify({ execute: 'qmp_capabilities' })}\n`);
        } else if (message.error !== undefined) {
          finish(new Error(`QMP ${step === 'command' ? command : 'qmp_capabilities'}: ${message.error.desc ?? 'error'}`));
        } else if (step === 'capabilities') {
          step = 'command';
          socket.write(`${JSON.stringify(args === undefined ? { execute: command } : { execute: command, arguments: args })}\n`);
        } else if (step === 'command') {
          finish(undefined, message.return);
        }
      }
    });
  });
}

async function main(argv: readonly string[]): Promise<number> {
  const [socketPath, command, json] = argv;
  if (socketPath === undefined || command === undefined) {
    process.stderr.write('usage: qmp-command SOCKET COMMAND [JSON-ARGUMENTS]\n');
    return 2;
  }
  try {
    const result = await qmpCommand(socketPath, command, json === undefined ? undefined : JSON.parse(json) as Record<string, unknown>);
    process.stdout.write(`${JSON.stringify(result ?? {})}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

const invoked = process.argv[1];
if (invoked !== undefined && import.meta.url === pathToFileURL(invoked).href) {
  process.exitCode = await main(process.argv.slice(2));
}
