/**
 * @module TFTP server events in the form the flight recorder stores for every boot service
 * (`TftpBootEvent` of `bootsvc/events.ts`): the agent passes `toTftpBootEvent` the server's
 * `onEvent` stream and records what comes out.
 * @pure
 */
import type { TftpBootEvent } from '../events.js';
import type { TftpOptionPair } from './packet.js';
import type { TftpEvent } from './server-types.js';
import { unmapIpv4 } from '../net/ip-text.js';

function optionRecord(options: readonly TftpOptionPair[]): Record<string, string> {
  return Object.fromEntries(options.map((o) => [o.name, o.value]));
}

function optionNumber(options: readonly TftpOptionPair[], name: string): number | undefined {
  const value = options.find((o) => o.name === name)?.value;
  return value === undefined ? undefined : Number(value);
}

/**
 * Maps a server event to a boot event: `request` → `rrq`, `oack` → `oack`, `done` → `done`,
 * `error` and `busy` (a request dropped at the transfer limit) → `error`; `server-error` is
 * not about one client and maps to `undefined`. An unconfirmed `done` (final ACK lost, client
 * gone) stays `done`.
 */
export function toTftpBootEvent(event: TftpEvent): TftpBootEvent | undefined {
  switch (event.type) {
    case 'request':
      return {
        kind: 'tftp', phase: 'rrq', atMs: event.atMs, clientAddress: unmapIpv4(event.client.address), clientPort: event.client.port, file: event.file,
        ...(event.options.length > 0 ? { options: optionRecord(event.options) } : {}),
        ...(event.kind === 'wrq' ? { error: 'write request' } : {}),
      };
    case 'oack': {
      const blockSizeBytes = optionNumber(event.options, 'blksize');
      const windowSize = optionNumber(event.options, 'windowsize');
      return {
        kind: 'tftp', phase: 'oack', atMs: event.atMs, clientAddress: unmapIpv4(event.client.address), clientPort: event.client.port, file: event.file,
        options: optionRecord(event.options),
        ...(blockSizeBytes === undefined ? {} : { blockSizeBytes }),
        ...(windowSize === undefined ? {} : { windowSize }),
      };
    }
    case 'done':
      return {
        kind: 'tftp', phase: 'done', atMs: event.atMs, clientAddress: unmapIpv4(event.client.address), clientPort: event.client.port, file: event.file,
        bytes: event.bytes, durationMs: event.durationMs, blockSizeBytes: event.blockSize, windowSize: event.windowSize, retransmits: event.retransmittedPackets,
      };
    case 'error':
      return {
        kind: 'tftp', phase: 'error', atMs: event.atMs, clientAddress: unmapIpv4(event.client.address), clientPort: event.client.port, file: event.file,
        bytes: event.bytes, durationMs: event.durationMs, error: event.message,
        ...(event.errorCode === undefined ? {} : { errorCode: event.errorCode }),
        ...(event.blockSize === undefined ? {} : { blockSizeBytes: event.blockSize }),
        ...(event.windowSize === undefined ? {} : { windowSize: event.windowSize }),
      };
    case 'busy':
      return {
        kind: 'tftp', phase: 'error', atMs: event.atMs, clientAddress: unmapIpv4(event.client.address), clientPort: event.client.port, file: event.file,
        bytes: 0, error: `request dropped: ${event.activeTransfers} transfers already running (the client will retry)`,
      };
    case 'server-error':
      return undefined;
  }
}
