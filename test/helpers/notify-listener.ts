/**
 * @module A stand-in for systemd's notify socket, run as its own process (its own event loop):
 * binds a unix datagram socket at argv[2] and prints `<epoch-ms> <message>` per datagram.
 */
import { createRequire } from 'node:module';
import type { UnixDgramSocket } from 'unix-dgram';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: notify-listener PATH');
const require = createRequire(import.meta.url);
const { createSocket } = require('unix-dgram') as typeof import('unix-dgram');
const socket: UnixDgramSocket = createSocket('unix_dgram', (msg) => {
  process.stdout.write(`${Date.now()} ${msg.toString().replace(/\n/g, '|')}\n`);
});
socket.bind(path);
process.stdout.write('LISTENING\n');
process.on('SIGTERM', () => {
  socket.close();
  process.exit(0);
});
