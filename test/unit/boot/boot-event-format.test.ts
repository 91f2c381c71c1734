import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatBootEvent } from '../../../agent/boot/boot-event-format.js';
import type { BootEvent } from '../../../bootsvc/events.js';

const MAC = '52:54:00:aa:bb:01';

const cases: Record<string, [BootEvent, string, string, 'Normal' | 'Warning', RegExp]> = {
  'DHCP offer': [{ kind: 'dhcp', message: 'offer', mac: MAC, address: '10.0.0.5', bootFile: 'undionly.kpxe' }, 'bootsvc:dhcp', 'DHCPOffer', 'Normal', /^DHCPOFFER 10\.0\.0\.5 to 52:54:00:aa:bb:01, boot file undionly\.kpxe$/],
  'DHCP request from iPXE': [{ kind: 'dhcp', message: 'request', mac: MAC, address: '10.0.0.5', userClass: 'iPXE' }, 'bootsvc:dhcp', 'DHCPRequest', 'Normal', /for 10\.0\.0\.5 \(user class iPXE\)/],
  'DHCP NAK': [{ kind: 'dhcp', message: 'nak', mac: MAC, detail: 'requested address not in range' }, 'bootsvc:dhcp', 'DHCPNak', 'Warning', /DHCPNAK to .*: requested address not in range/],
  'DHCP ignored': [{ kind: 'dhcp', message: 'ignored', mac: MAC, detail: 'unknown-host' }, 'bootsvc:dhcp', 'DHCPIgnored', 'Normal', /ignored a DHCP request .*unknown-host/],
  'TFTP RRQ': [{ kind: 'tftp', phase: 'rrq', clientAddress: '10.0.0.5', file: 'ipxe.efi', options: { blksize: '1468', tsize: '0' } }, 'bootsvc:tftp', 'TFTPReadRequest', 'Normal', /ipxe\.efi from 10\.0\.0\.5 \(blksize 1468, tsize 0\)/],
  'TFTP OACK': [{ kind: 'tftp', phase: 'oack', clientAddress: '10.0.0.5', file: 'ipxe.efi', blockSizeBytes: 1468, windowSize: 16 }, 'bootsvc:tftp', 'TFTPOptionAck', 'Normal', /blksize 1468, windowsize 16/],
  'TFTP error': [{ kind: 'tftp', phase: 'error', clientAddress: '10.0.0.5', file: 'x', errorCode: 1, error: 'File not found' }, 'bootsvc:tftp', 'TFTPTransferError', 'Warning', /\(code 1\): File not found/],
  'TFTP done in seconds': [{ kind: 'tftp', phase: 'done', clientAddress: '10.0.0.5', file: 'x', bytes: 5, durationMs: 2500, retransmits: 2 }, 'bootsvc:tftp', 'TFTPTransferDone', 'Normal', /5 bytes in 2\.50 s, 2 retransmits/],
  'HTTP range': [{ kind: 'http', method: 'GET', path: '/images/os.img', status: 206, bytes: 1024, range: 'bytes=0-1023', durationMs: 3, clientAddress: '10.0.0.5', completed: true }, 'bootsvc:http', 'HTTPRequest', 'Normal', /^GET \/images\/os\.img → 206 \(1024 bytes, range bytes=0-1023\) in 3 ms$/],
  'HTTP over TLS is marked': [{ kind: 'http', method: 'GET', path: '/uki/52-54-00-00-00-01.efi', status: 200, bytes: 2048, durationMs: 5, clientAddress: '10.0.0.5', completed: true, tls: true }, 'bootsvc:http', 'HTTPRequest', 'Normal', /^GET \/uki\/52-54-00-00-00-01\.efi over TLS → 200 \(2048 bytes\) in 5 ms$/],
  'HTTP 404 is a warning': [{ kind: 'http', method: 'GET', path: '/ipxe.efi', status: 404, bytes: 10, durationMs: 1, clientAddress: '10.0.0.5', completed: true }, 'bootsvc:http', 'HTTPRequest', 'Warning', /→ 404/],
  'HTTP shim probe 404 is expected': [{ kind: 'http', method: 'GET', path: '/revocations_sbat.efi', status: 404, bytes: 10, durationMs: 1, clientAddress: '10.0.0.5', completed: true, servedAs: 'probe' }, 'bootsvc:http', 'HTTPRequest', 'Normal', /→ 404/],
  'HTTP aborted': [{ kind: 'http', method: 'GET', path: '/x', status: 200, bytes: 10, durationMs: 1, clientAddress: '10.0.0.5', completed: false }, 'bootsvc:http', 'HTTPRequest', 'Warning', /aborted by the client/],
  'ramdisk heartbeat': [{ kind: 'ramdisk', type: 'heartbeat', mac: MAC }, 'bootsvc:ramdisk', 'RamdiskHeartbeat', 'Normal', /^ramdisk heartbeat$/],
  'ramdisk error': [{ kind: 'ramdisk', type: 'error', mac: MAC, detail: 'no disk' }, 'bootsvc:ramdisk', 'RamdiskError', 'Warning', /no disk/],
  'BMC ok': [{ kind: 'bmc', host: 'node-0', call: 'set-boot-device pxe', ok: true, durationMs: 80 }, 'bmc', 'BMCCall', 'Normal', /BMC set-boot-device pxe ok in 80 ms/],
};
for (const [name, [event, source, reason, type, message]] of Object.entries(cases)) {
  test(`format: ${name}`, () => {
    const f = formatBootEvent(event);
    assert.equal(f.source, source);
    assert.equal(f.reason, reason);
    assert.equal(f.type, type);
    assert.match(f.message, message);
    assert.equal('kind' in f.data, false);
    assert.equal('mac' in f.data, false);
  });
}
