/** @module Promise forms of `dgram` bind and send for doctor's DHCP and DHCPv6 probes (probe-net.ts, probe-net6.ts). */
import type { Socket } from 'node:dgram';

/** Binds `socket` to `address`:`port`; rejects with the bind error (EADDRINUSE, EACCES …). */
export function bindSocket(socket: Socket, address: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind({ address, port }, () => {
      socket.off('error', reject);
      resolve();
    });
  });
}

/** Sends one datagram; rejects with the send error. */
export function sendTo(socket: Socket, payload: Buffer, address: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.send(payload, port, address, (err) => {
      if (err === null) resolve();
      else reject(err);
    });
  });
}
