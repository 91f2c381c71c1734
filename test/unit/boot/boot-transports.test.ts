import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BootTransportIndex } from '../../../agent/boot/boot-transports.js';
import { formatBootEvent } from '../../../agent/boot/boot-event-format.js';
import type { BootEvent } from '../../../bootsvc/index.js';
import type { EventFilter, StoredEvent } from '../../../agent/store/types.js';
import { bootTransportStep, foldBootTransport, summarizeBootTransport, type HostBootTransport } from '../../../agent/web/ui/boot-transport.js';

const MAC = '52:54:00:aa:00:01';
let seq = 0;

/** A stored event as the flight recorder writes it (formatBootEvent), at second `s`. */
function stored(event: BootEvent, s: number, host = 'node-0'): StoredEvent {
  seq += 1;
  const f = formatBootEvent(event);
  return { seq, time: new Date(Date.UTC(2026, 11, 7, 4, 0, s)).toISOString(), type: f.type, reason: f.reason, message: f.message, source: f.source, mac: MAC, host, data: f.data };
}

function http(path: string, s: number, extra: Partial<Extract<BootEvent, { kind: 'http' }>> = {}): StoredEvent {
  return stored({ kind: 'http', mac: MAC, method: 'GET', path, status: 200, bytes: 10, durationMs: 5, clientAddress: '10.250.0.20', completed: true, ...extra }, s);
}

function tftpDone(file: string, s: number): StoredEvent {
  return stored({ kind: 'tftp', mac: MAC, phase: 'done', clientAddress: '10.250.0.20', file, bytes: 1000 }, s);
}

function fold(events: StoredEvent[]): HostBootTransport {
  return events.reduce(foldBootTransport, { mac: MAC });
}

test('the unified image over TLS, then ramdisk calls over TLS: HTTPS', () => {
  const record = fold([http(`/uki/${MAC}.efi`, 1, { tls: true }), http('/ramdisk/v1/heartbeat', 9, { method: 'POST', tls: true })]);
  assert.equal(record.boot?.transport, 'https');
  assert.equal(record.boot.path, `/uki/${MAC}.efi`);
  assert.equal(record.ramdisk?.transport, 'https');
  assert.equal(record.host, 'node-0');
  const summary = summarizeBootTransport(record);
  assert.deepEqual([summary.kind, summary.label], ['https', 'HTTPS']);
  assert.match(summary.detail, /^Last boot fetched \/uki\/52:54:00:aa:00:01\.efi over HTTPS; its ramdisk called \/ramdisk\/v1\/heartbeat over HTTPS\.$/);
});

test('an HTTPS boot whose ramdisk calls back in clear is "mixed", not HTTPS', () => {
  const summary = summarizeBootTransport(fold([http(`/uki/${MAC}.efi`, 1, { tls: true }), http('/ramdisk/v1/heartbeat', 9, { method: 'POST' })]));
  assert.equal(summary.kind, 'mixed');
  assert.equal(summary.label, 'HTTPS boot, clear callbacks');
});

test('the iPXE chain: TFTP loader, then script and kernel over HTTP → HTTP; a later PXE boot over TFTP only → TFTP', () => {
  const first = fold([tftpDone('ipxe.efi', 1), http(`/boot/${MAC}.ipxe`, 3), http('/ramdisk/vmlinuz', 4)]);
  assert.equal(summarizeBootTransport(first).kind, 'http');
  assert.equal(first.boot?.path, '/ramdisk/vmlinuz');
  const second = [http('/ramdisk/v1/heartbeat', 20, { method: 'POST' }), tftpDone('grub/grub.cfg', 60)].reduce(foldBootTransport, first);
  assert.equal(summarizeBootTransport(second).kind, 'tftp');
  assert.equal(second.ramdisk, undefined, 'a new boot chain forgets the previous boot\'s ramdisk calls');
});

test('events that moved nothing the host booted change nothing', () => {
  const base = fold([http(`/uki/${MAC}.efi`, 1, { tls: true })]);
  const ignored = [
    http('/boot/x.ipxe', 2, { status: 404 }),
    http('/ramdisk/initrd', 3, { completed: false }),
    http('/ramdisk/initrd', 4, { method: 'HEAD' }),
    stored({ kind: 'tftp', mac: MAC, phase: 'rrq', clientAddress: '10.250.0.20', file: 'ipxe.efi' }, 5),
    stored({ kind: 'dhcp', mac: MAC, message: 'ack', address: '10.250.0.20' }, 6),
  ];
  for (const event of ignored) {
    assert.equal(bootTransportStep(event), undefined, event.message);
    assert.equal(foldBootTransport(base, event), base, event.message);
  }
  assert.equal(summarizeBootTransport(undefined).kind, 'unknown');
});

test('OS image reads by the ramdisk count as ramdisk traffic, not as a new boot', () => {
  const record = fold([http(`/uki/${MAC}.efi`, 1, { tls: true }), http('/images/os.raw', 30, { status: 206, tls: true })]);
  assert.equal(record.boot?.path, `/uki/${MAC}.efi`);
  assert.equal(record.ramdisk?.path, '/images/os.raw');
});

/** An event log: listEvents answers the newest `limit`, onEvent delivers appended ones. */
class FakeLog {
  readonly events: StoredEvent[] = [];
  readonly listeners = new Set<(e: StoredEvent) => void>();
  append(event: StoredEvent): void {
    this.events.push(event);
    for (const l of this.listeners) l(event);
  }
  listEvents(filter: EventFilter): Promise<StoredEvent[]> {
    return Promise.resolve(this.events.slice(-(filter.limit ?? 200)));
  }
  onEvent(listener: (e: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }
}

test('the index seeds from the stored log, follows appended events, and stops following on stop()', async () => {
  const log = new FakeLog();
  log.append(http(`/uki/${MAC}.efi`, 1, { tls: true }));
  const index = new BootTransportIndex();
  await index.start(log);
  assert.equal(index.list()[0]?.boot?.transport, 'https', 'seeded from the stored log');
  log.append(http('/ramdisk/v1/heartbeat', 9, { method: 'POST' }));
  assert.equal(summarizeBootTransport(index.list()[0]).kind, 'mixed', 'followed the appended event');
  index.stop();
  assert.equal(log.listeners.size, 0);
  log.append(tftpDone('ipxe.efi', 60));
  assert.equal(index.list()[0]?.boot?.transport, 'https', 'no longer following');
});

test('the index forgets the least recently seen MAC beyond its bound', () => {
  const index = new BootTransportIndex(2);
  for (const [i, mac] of ['52:54:00:00:00:01', '52:54:00:00:00:02', '52:54:00:00:00:03'].entries()) {
    index.note({ ...http('/ramdisk/vmlinuz', i), mac });
  }
  assert.deepEqual(index.list().map((r) => r.mac), ['52:54:00:00:00:02', '52:54:00:00:00:03']);
});
