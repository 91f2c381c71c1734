import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeDhcpPacket, type DhcpPacket } from '../../../../bootsvc/dhcp/packet.js';
import { routeReply, type ReplyRoute, type RequestSource } from '../../../../bootsvc/dhcp/reply-route.js';
import { header, hex, opt } from './fixtures.js';

function packet(fields: { op?: string; flags?: string; ciaddr?: string; yiaddr?: string; giaddr?: string }, type: string): DhcpPacket {
  return decodeDhcpPacket(hex(header({ xid: '00000001', mac: '525400123456', ...fields }) + opt(53, type) + 'ff'));
}
const CLIENT: RequestSource = { address: '0.0.0.0', port: 68, serverPort: 67 };

const cases: Record<string, { request: DhcpPacket; reply: DhcpPacket; source?: RequestSource; expected: ReplyRoute }> = {
  'relayed → giaddr:67': {
    request: packet({ giaddr: '0a1e0001', flags: '8000' }, '01'),
    reply: packet({ op: '02', yiaddr: '0a1e0064' }, '02'),
    expected: { kind: 'relay', address: '10.30.0.1', port: 67 },
  },
  'relayed NAK → still the relay': {
    request: packet({ giaddr: '0a1e0001' }, '03'),
    reply: packet({ op: '02' }, '06'),
    expected: { kind: 'relay', address: '10.30.0.1', port: 67 },
  },
  'NAK → broadcast even with ciaddr': {
    request: packet({ ciaddr: '0a140078' }, '03'),
    reply: packet({ op: '02' }, '06'),
    expected: { kind: 'broadcast', address: '255.255.255.255', port: 68 },
  },
  'ciaddr set (RENEWING, INFORM) → unicast ciaddr:68': {
    request: packet({ ciaddr: '0a140078', flags: '8000' }, '03'),
    reply: packet({ op: '02', yiaddr: '0a140078' }, '05'),
    expected: { kind: 'client-address', address: '10.20.0.120', port: 68 },
  },
  'BROADCAST flag → broadcast': {
    request: packet({ flags: '8000' }, '01'),
    reply: packet({ op: '02', yiaddr: '0a140064' }, '02'),
    expected: { kind: 'broadcast', address: '255.255.255.255', port: 68 },
  },
  'no flag, no ciaddr → hardware unicast to yiaddr, broadcast fallback': {
    request: packet({}, '01'),
    reply: packet({ op: '02', yiaddr: '0a140064' }, '02'),
    expected: { kind: 'hardware-unicast', address: '10.20.0.100', port: 68, mac: '52:54:00:12:34:56', fallback: { address: '255.255.255.255', port: 68 } },
  },
  'proxy offer without yiaddr → broadcast': {
    request: packet({}, '01'),
    reply: packet({ op: '02' }, '02'),
    expected: { kind: 'broadcast', address: '255.255.255.255', port: 68 },
  },
  'port 4011 → back to the source address and port': {
    request: packet({ ciaddr: '0a140078' }, '03'),
    reply: packet({ op: '02' }, '05'),
    source: { address: '10.20.0.120', port: 4011, serverPort: 4011 },
    expected: { kind: 'source', address: '10.20.0.120', port: 4011 },
  },
};
for (const [name, c] of Object.entries(cases)) {
  test(`route: ${name}`, () => {
    assert.deepEqual(routeReply(c.request, c.reply, c.source ?? CLIENT), c.expected);
  });
}
