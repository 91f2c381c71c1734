/** Minimal typings for the `unix-dgram` package (unix datagram sockets; it ships none). */
declare module 'unix-dgram' {
  import type { EventEmitter } from 'node:events';
  export interface UnixDgramSocket extends EventEmitter {
    bind(path: string): void;
    connect(path: string): void;
    send(buf: Buffer, offset: number, length: number, path: string, callback?: (err?: Error) => void): void;
    send(buf: Buffer, callback?: (err?: Error) => void): void;
    close(): void;
  }
  export function createSocket(type: 'unix_dgram', listener?: (msg: Buffer, rinfo: { path?: string }) => void): UnixDgramSocket;
}
