import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeDhcpPacket, maxReplyBytes, type DhcpPacket } from '../../../../bootsvc/dhcp/packet.js';
import { respond } from '../../../../bootsvc/dhcp/responder.js';
import type { ResponderContext, ResponderResult } from '../../../../bootsvc/dhcp/responder-context.js';
import {
  aavmfPxeDiscover,
  biosPxeDiscoverNo93,
  dhclientRequest,
  GUID_HEX,
  ipxeBiosDiscover,
  ipxeEfiDiscover,
  ovmfHttpDiscover,
  ovmfPxeDiscover,
  relayedDiscover,
  RELAY_INFO_HEX,
  udhcpcRequest,
} from './fixtures.js';
import { assertGolden, summarizePacket, toHex } from './golden.js';
import { context, decisions, expectReply, lease, NOW, optionHex, optionText, request, SCRIPT_URL, SERVER } from './responder-fixtures.js';

const OVMF_MAC = '52:54:00:12:34:56';
const DHCLIENT_MAC = '02:00:00:00:d1:c1';
const UDHCPC_MAC = '02:00:00:00:bb:01';

interface Case {
  request: DhcpPacket;
  ctx: ResponderContext;
  check: (r: ResponderResult) => void;
}

const ignored = (reason: string) => (r: ResponderResult) => {
  if (r.kind !== 'ignore') assert.fail(`expected silence (${reason}), got ${r.kind}`);
  assert.equal(r.reason, reason);
};

const dhclientDiscover = request(dhclientRequest, {}, { 53: '01', 54: null, 50: null });
const initReboot = (address: string) => request(ovmfPxeDiscover, {}, { 53: '03', 50: address });

const cases: Record<string, Case> = {
  // ---- full mode: DISCOVER ----
  'full: OVMF PXE DISCOVER → OFFER with address, siaddr, file and 66/67 as asked': {
    request: request(ovmfPxeDiscover),
    ctx: context(),
    check: (r) => {
      const { packet: p, leaseChanges } = expectReply(r, 'offer');
      assert.deepEqual([p.op, p.yiaddr, p.siaddr, p.giaddr, p.file, p.xid, p.flags], [2, '10.20.0.100', SERVER, '0.0.0.0', 'ipxe.efi', 0xc1a5d00d, 0x8000]);
      assert.equal(optionText(p, 67), 'ipxe.efi');
      assert.equal(optionText(p, 66), SERVER);
      assert.equal(optionHex(p, 54), '0a140001');
      assert.equal(optionHex(p, 1), 'ffffff00');
      assert.equal(optionHex(p, 3), '0a1400fe');
      assert.equal(optionHex(p, 6), '0a140001');
      assert.equal(optionText(p, 15), 'rack.local');
      assert.deepEqual([optionHex(p, 51), optionHex(p, 58), optionHex(p, 59)], ['00000e10', '00000708', '00000c4e']);
      assert.equal(p.options.has(60), false, 'full mode answers PXE ROMs as a plain DHCP offer with a boot file');
      assert.equal(p.options.has(43), false);
      assert.deepEqual(leaseChanges, [{ op: 'put', lease: { mac: OVMF_MAC, address: '10.20.0.100', state: 'offered', expiresAtMs: NOW + 60_000 } }]);
    },
  },
  'full: iPXE (BIOS ROM) gets the script URL, never undionly.kpxe': {
    request: request(ipxeBiosDiscover),
    ctx: context({ bootDecision: decisions.bios }),
    check: (r) => {
      const { packet: p, bootFile } = expectReply(r, 'offer');
      assert.equal(p.file, SCRIPT_URL);
      assert.equal(optionText(p, 67), SCRIPT_URL);
      assert.equal(bootFile, SCRIPT_URL);
    },
  },
  'full: iPXE EFI (second DHCP after ipxe.efi) gets the script URL': {
    request: request(ipxeEfiDiscover),
    ctx: context(),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.file, SCRIPT_URL); },
  },
  'full: UEFI HTTP boot gets option 60 HTTPClient and the URL in 67 and file': {
    request: request(ovmfHttpDiscover),
    ctx: context({ bootDecision: decisions.http }),
    check: (r) => {
      const { packet: p } = expectReply(r, 'offer');
      assert.equal(optionText(p, 60), 'HTTPClient');
      assert.equal(optionText(p, 67), 'http://10.20.0.1:8081/assets/ipxe.efi');
      assert.equal(p.file, 'http://10.20.0.1:8081/assets/ipxe.efi');
    },
  },
  'full: UEFI HTTP boot with a TFTP file name is refused': {
    request: request(ovmfHttpDiscover),
    ctx: context({ bootDecision: decisions.efi }),
    check: ignored('http-client-needs-url'),
  },
  'full: arm64 (arch 11) gets its boot file': {
    request: request(aavmfPxeDiscover),
    ctx: context({ bootDecision: decisions.arm64 }),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.file, 'shimaa64.efi'); },
  },
  'full: iPXE handed an iPXE loader is refused (no loop)': {
    request: request(ipxeEfiDiscover),
    ctx: context({ bootDecision: decisions.loopingIpxe }),
    check: ignored('ipxe-loop'),
  },
  'full: a boot file longer than the file field goes in option 67 only': {
    request: request(ovmfPxeDiscover),
    ctx: context({ bootDecision: { kind: 'boot-file', bootFile: `efi/${'x'.repeat(140)}.efi` } }),
    check: (r) => {
      const { packet: p } = expectReply(r, 'offer');
      assert.equal(p.file, '');
      assert.equal(optionText(p, 67)?.length, 148);
    },
  },
  'full: local-disk decision → address without boot file, siaddr still set': {
    request: request(ovmfPxeDiscover),
    ctx: context({ bootDecision: decisions.localDisk }),
    check: (r) => {
      const { packet: p, bootFile } = expectReply(r, 'offer');
      assert.deepEqual([p.yiaddr, p.siaddr, p.file, bootFile, p.options.has(67)], ['10.20.0.100', SERVER, '', undefined, false]);
    },
  },
  'full: unknown host, unknownHosts=ignore → silence': {
    request: request(ovmfPxeDiscover),
    ctx: context({ bootDecision: undefined }),
    check: ignored('unknown-host'),
  },
  'full: unknown host, unknownHosts=discover → the discovery chain': {
    request: request(ovmfPxeDiscover),
    ctx: context({ bootDecision: undefined, unknownHosts: 'discover', discoveryDecision: decisions.efi }),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.file, 'ipxe.efi'); },
  },
  'full: unknown dhclient, unknownHosts=discover without a discovery decision → address only': {
    request: dhclientDiscover,
    ctx: context({ bootDecision: undefined, unknownHosts: 'discover' }),
    check: (r) => {
      const { packet: p } = expectReply(r, 'offer');
      assert.deepEqual([p.yiaddr, p.file], ['10.20.0.100', '']);
    },
  },
  'full: unknown host, discovery refused it (limits) → silence': {
    request: request(ovmfPxeDiscover),
    ctx: context({ bootDecision: undefined, unknownHosts: 'discover', discoveryRefused: true }),
    check: ignored('discovery-refused'),
  },
  'full: a known host is served even with discoveryRefused set': {
    request: request(ovmfPxeDiscover),
    ctx: context({ bootDecision: decisions.efi, unknownHosts: 'discover', discoveryRefused: true }),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.file, 'ipxe.efi'); },
  },
  'full: a plain DHCP client gets no boot file even for a known host': {
    request: dhclientDiscover,
    ctx: context(),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.file, ''); },
  },
  'full: reserved address for a known MAC, with its host name': {
    request: request(ovmfPxeDiscover),
    ctx: context({ reservations: [{ mac: OVMF_MAC, address: '10.20.0.42', hostName: 'node-1' }] }),
    check: (r) => {
      const { packet: p, detail } = expectReply(r, 'offer');
      assert.deepEqual([p.yiaddr, optionText(p, 12), detail], ['10.20.0.42', 'node-1', 'reservation']);
    },
  },
  'full: a client keeps its previous address': {
    request: request(ovmfPxeDiscover),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.150', 'bound', NOW - 1000)] }),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.yiaddr, '10.20.0.150'); },
  },
  're-DISCOVER with a live bound lease does not downgrade it to an offer': {
    request: request(ovmfPxeDiscover),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.150')] }),
    check: (r) => { assert.deepEqual(expectReply(r, 'offer').leaseChanges, []); },
  },
  'full: the requested address when free and in range': {
    request: request(ovmfPxeDiscover, {}, { 50: '0a1400aa' }),
    ctx: context(),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.yiaddr, '10.20.0.170'); },
  },
  'full: relayed DISCOVER → address from the relay subnet, giaddr kept, 82 echoed last': {
    request: request(relayedDiscover),
    ctx: context(),
    check: (r) => {
      const { packet: p } = expectReply(r, 'offer');
      assert.deepEqual([p.yiaddr, p.giaddr, optionHex(p, 3)], ['10.30.0.100', '10.30.0.1', '0a1e0001']);
      assert.equal(optionHex(p, 82), RELAY_INFO_HEX);
      assert.equal([...encodeDhcpPacket(p).subarray(240)].lastIndexOf(82) > 0, true);
      const wire = toHex(encodeDhcpPacket(p));
      assert.ok(wire.includes(`5210${RELAY_INFO_HEX}ff`), '82 is the last option before end');
    },
  },
  'full: relayed from an unconfigured subnet → silence': {
    request: request(relayedDiscover, { giaddr: '10.99.0.1' }),
    ctx: context(),
    check: ignored('no-subnet'),
  },
  'full: pool exhausted → silence, never a loop': {
    request: request(relayedDiscover),
    ctx: context({ leases: [lease('a', '10.30.0.100'), lease('b', '10.30.0.101', 'offered')] }),
    check: ignored('pool-exhausted'),
  },
  // ---- full mode: REQUEST ----
  'SELECTING our offer → ACK and a bound lease': {
    request: request(udhcpcRequest),
    ctx: context({ leases: [lease(UDHCPC_MAC, '10.20.0.51', 'offered', NOW + 30_000)], reservations: [{ mac: UDHCPC_MAC, address: '10.20.0.51' }] }),
    check: (r) => {
      const { packet: p, leaseChanges, detail } = expectReply(r, 'ack');
      assert.deepEqual([p.yiaddr, p.ciaddr, detail], ['10.20.0.51', '0.0.0.0', 'selecting']);
      assert.deepEqual(leaseChanges, [{ op: 'put', lease: { mac: UDHCPC_MAC, address: '10.20.0.51', state: 'bound', expiresAtMs: NOW + 3_600_000 } }]);
    },
  },
  'SELECTING another server → silence, and our held offer is dropped': {
    request: request(dhclientRequest),
    ctx: context({ serverAddress: '10.20.0.2', leases: [lease(DHCLIENT_MAC, '10.20.0.120', 'offered')] }),
    check: (r) => {
      ignored('other-server')(r);
      assert.deepEqual(r.leaseChanges, [{ op: 'delete', key: DHCLIENT_MAC }]);
    },
  },
  'SELECTING an address outside the range with no reservation → NAK': {
    request: request(dhclientRequest),
    ctx: context(),
    check: (r) => { assert.match(expectReply(r, 'nak').detail ?? '', /outside-range/); },
  },
  'SELECTING an address other than the reservation → NAK': {
    request: request(dhclientRequest, {}, { 50: '0a140078' }),
    ctx: context({ reservations: [{ mac: DHCLIENT_MAC, address: '10.20.0.50' }] }),
    check: (r) => expectReply(r, 'nak'),
  },
  'SELECTING without option 50 → silence': {
    request: request(dhclientRequest, {}, { 50: null }),
    ctx: context(),
    check: ignored('malformed-request'),
  },
  'INIT-REBOOT with the recorded address → ACK': {
    request: initReboot('0a140078'),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.120', 'bound', NOW - 5000)] }),
    check: (r) => {
      const { packet: p, detail } = expectReply(r, 'ack');
      assert.deepEqual([p.yiaddr, detail, p.file], ['10.20.0.120', 'init-reboot', 'ipxe.efi']);
    },
  },
  'INIT-REBOOT with a different address than recorded → NAK': {
    request: initReboot('0a140079'),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.120')] }),
    check: (r) => {
      const { packet: p } = expectReply(r, 'nak');
      assert.deepEqual([p.yiaddr, p.siaddr, p.file, optionHex(p, 54)], ['0.0.0.0', '0.0.0.0', '', '0a140001']);
      assert.equal(p.options.has(51), false);
      assert.match(optionText(p, 56) ?? '', /not this client's address/);
    },
  },
  'INIT-REBOOT on the wrong network → NAK': {
    request: initReboot('c0a80105'),
    ctx: context(),
    check: (r) => { assert.match(expectReply(r, 'nak').detail ?? '', /not on this network/); },
  },
  'INIT-REBOOT, no record, free address in range → ACK (lease store lost)': {
    request: initReboot('0a140096'),
    ctx: context(),
    check: (r) => { assert.equal(expectReply(r, 'ack').packet.yiaddr, '10.20.0.150'); },
  },
  'INIT-REBOOT, no record, address outside our range → silence (RFC 2131 §4.3.2)': {
    request: initReboot('0a140032'),
    ctx: context(),
    check: ignored('no-record'),
  },
  'INIT-REBOOT for an address another client holds → NAK': {
    request: initReboot('0a140096'),
    ctx: context({ leases: [lease('52:54:00:99:99:99', '10.20.0.150')] }),
    check: (r) => { assert.match(expectReply(r, 'nak').detail ?? '', /in-use/); },
  },
  'INIT-REBOOT relayed with a wrong address → NAK with the BROADCAST flag for the relay': {
    request: request(relayedDiscover, {}, { 53: '03', 50: '0a140096' }),
    ctx: context(),
    check: (r) => {
      const { packet: p } = expectReply(r, 'nak');
      assert.equal(p.flags & 0x8000, 0x8000);
      assert.equal(p.giaddr, '10.30.0.1');
      assert.equal(optionHex(p, 82), RELAY_INFO_HEX);
    },
  },
  'RENEWING (ciaddr) → ACK with ciaddr copied': {
    request: request(ovmfPxeDiscover, { ciaddr: '10.20.0.120' }, { 53: '03' }),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.120')] }),
    check: (r) => {
      const { packet: p, detail } = expectReply(r, 'ack');
      assert.deepEqual([p.yiaddr, p.ciaddr, detail], ['10.20.0.120', '10.20.0.120', 'renewing']);
    },
  },
  'RENEWING unicast from a relayed subnet → ACK (subnet chosen by ciaddr)': {
    request: request(ovmfPxeDiscover, { ciaddr: '10.30.0.101' }, { 53: '03' }),
    ctx: context({ leases: [lease(OVMF_MAC, '10.30.0.101')] }),
    check: (r) => { assert.equal(expectReply(r, 'ack').packet.yiaddr, '10.30.0.101'); },
  },
  // ---- full mode: RELEASE, DECLINE, INFORM ----
  'RELEASE frees the address but keeps the record': {
    request: request(ovmfPxeDiscover, { ciaddr: '10.20.0.120' }, { 53: '07', 54: '0a140001' }),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.120')] }),
    check: (r) => {
      assert.equal(r.kind, 'no-reply');
      assert.deepEqual(r.leaseChanges, [{ op: 'put', lease: { mac: OVMF_MAC, address: '10.20.0.120', state: 'bound', expiresAtMs: NOW } }]);
    },
  },
  'RELEASE for another server → silence': {
    request: request(ovmfPxeDiscover, { ciaddr: '10.20.0.120' }, { 53: '07', 54: '0a140002' }),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.120')] }),
    check: ignored('other-server'),
  },
  'RELEASE of an address we did not lease → silence': {
    request: request(ovmfPxeDiscover, { ciaddr: '10.20.0.121' }, { 53: '07' }),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.120')] }),
    check: ignored('no-record'),
  },
  'DECLINE quarantines the address and drops the lease': {
    request: request(ovmfPxeDiscover, {}, { 53: '04', 50: '0a140078', 54: '0a140001' }),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.120')], declineQuarantineSeconds: 300 }),
    check: (r) => {
      assert.equal(r.kind, 'no-reply');
      assert.deepEqual(r.leaseChanges, [
        { op: 'delete', key: OVMF_MAC },
        { op: 'put', lease: { mac: OVMF_MAC, address: '10.20.0.120', state: 'declined', expiresAtMs: NOW + 300_000 } },
      ]);
    },
  },
  'DECLINE of an address the client does not hold → silence (no pool poisoning)': {
    request: request(ovmfPxeDiscover, {}, { 53: '04', 50: '0a140079' }),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.120')] }),
    check: ignored('no-record'),
  },
  'after DECLINE the next DISCOVER gets another address': {
    request: request(ovmfPxeDiscover),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.100', 'declined')] }),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.yiaddr, '10.20.0.101'); },
  },
  'once the quarantine ends the address is offered again': {
    request: request(ovmfPxeDiscover),
    ctx: context({ leases: [lease(OVMF_MAC, '10.20.0.100', 'declined', NOW - 1)] }),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.yiaddr, '10.20.0.101'); },
  },
  'INFORM → ACK without yiaddr or lease time, to ciaddr': {
    request: request(ovmfPxeDiscover, { ciaddr: '10.20.0.150' }, { 53: '08' }),
    ctx: context(),
    check: (r) => {
      const { packet: p } = expectReply(r, 'ack');
      assert.deepEqual([p.yiaddr, p.ciaddr, p.file, optionHex(p, 1)], ['0.0.0.0', '10.20.0.150', 'ipxe.efi', 'ffffff00']);
      assert.equal(p.options.has(51), false);
      assert.deepEqual(r.leaseChanges, []);
    },
  },
  // ---- proxy mode ----
  'proxy: OVMF DISCOVER → proxy OFFER: yiaddr 0, PXEClient, 97 echoed, no 43 for UEFI': {
    request: request(ovmfPxeDiscover),
    ctx: context({ mode: 'proxy' }),
    check: (r) => {
      const { packet: p, leaseChanges } = expectReply(r, 'offer');
      assert.deepEqual([p.yiaddr, p.siaddr, p.file], ['0.0.0.0', SERVER, 'ipxe.efi']);
      assert.equal(optionText(p, 60), 'PXEClient');
      assert.equal(optionHex(p, 97), GUID_HEX);
      assert.equal(p.options.has(43), false);
      for (const code of [1, 3, 51, 58, 59]) assert.equal(p.options.has(code), false, `proxy offer carries no option ${code}`);
      assert.deepEqual(leaseChanges, []);
    },
  },
  'proxy: BIOS PXE DISCOVER → 43 with discovery control "use the file"': {
    request: request(biosPxeDiscoverNo93),
    ctx: context({ mode: 'proxy', bootDecision: decisions.bios }),
    check: (r) => {
      const { packet: p } = expectReply(r, 'offer');
      assert.equal(p.file, 'undionly.kpxe');
      assert.equal(optionHex(p, 43), '060108ff');
    },
  },
  'proxy: iPXE DISCOVER → the script URL': {
    request: request(ipxeBiosDiscover),
    ctx: context({ mode: 'proxy', bootDecision: decisions.bios }),
    check: (r) => { assert.equal(expectReply(r, 'offer').packet.file, SCRIPT_URL); },
  },
  'proxy: UEFI HTTP boot → HTTPClient and the URL': {
    request: request(ovmfHttpDiscover),
    ctx: context({ mode: 'proxy', bootDecision: decisions.http }),
    check: (r) => {
      const { packet: p } = expectReply(r, 'offer');
      assert.deepEqual([optionText(p, 60), optionText(p, 67), p.yiaddr], ['HTTPClient', 'http://10.20.0.1:8081/assets/ipxe.efi', '0.0.0.0']);
    },
  },
  'proxy: a plain DHCP client is left to the site server': {
    request: dhclientDiscover,
    ctx: context({ mode: 'proxy' }),
    check: ignored('not-netboot-client'),
  },
  'proxy: local-disk → nothing to say': {
    request: request(ovmfPxeDiscover),
    ctx: context({ mode: 'proxy', bootDecision: decisions.localDisk }),
    check: ignored('no-boot'),
  },
  'proxy: REQUEST to the site server → silence': {
    request: request(ovmfPxeDiscover, {}, { 53: '03', 54: '0a140002', 50: '0a140064' }),
    ctx: context({ mode: 'proxy' }),
    check: ignored('other-server'),
  },
  'proxy: REQUEST naming us → boot-only ACK': {
    request: request(ovmfPxeDiscover, {}, { 53: '03', 54: '0a140001' }),
    ctx: context({ mode: 'proxy' }),
    check: (r) => {
      const { packet: p } = expectReply(r, 'ack');
      assert.deepEqual([p.yiaddr, p.file, optionText(p, 60)], ['0.0.0.0', 'ipxe.efi', 'PXEClient']);
    },
  },
  'proxy: RELEASE is not ours': {
    request: request(ovmfPxeDiscover, { ciaddr: '10.20.0.120' }, { 53: '07' }),
    ctx: context({ mode: 'proxy' }),
    check: ignored('not-for-proxy'),
  },
  'proxy: unknown host ignored': {
    request: request(ovmfPxeDiscover),
    ctx: context({ mode: 'proxy', bootDecision: undefined }),
    check: ignored('unknown-host'),
  },
  // ---- port 4011 boot-server exchange ----
  'port 4011: EDK2 boot-server REQUEST → ACK with the file and the boot item echoed': {
    request: request(ovmfPxeDiscover, { ciaddr: '10.20.0.120' }, { 53: '03', 43: '4704000000' + '00ff' }),
    ctx: context({ mode: 'proxy', serverPort: 4011 }),
    check: (r) => {
      const { packet: p } = expectReply(r, 'ack');
      assert.deepEqual([p.yiaddr, p.ciaddr, p.siaddr, p.file], ['0.0.0.0', '10.20.0.120', SERVER, 'ipxe.efi']);
      assert.equal(optionText(p, 60), 'PXEClient');
      assert.equal(optionHex(p, 97), GUID_HEX);
      assert.equal(optionHex(p, 43), '470400000000ff');
    },
  },
  'port 4011: iPXE ProxyDHCPREQUEST → the script URL': {
    request: request(ipxeEfiDiscover, { ciaddr: '10.20.0.120' }, { 53: '03', 54: '0a140001' }),
    ctx: context({ mode: 'proxy', serverPort: 4011 }),
    check: (r) => { assert.equal(expectReply(r, 'ack').packet.file, SCRIPT_URL); },
  },
  'port 4011 also answers in full mode': {
    request: request(ovmfPxeDiscover, { ciaddr: '10.20.0.120' }, { 53: '03' }),
    ctx: context({ serverPort: 4011 }),
    check: (r) => { assert.equal(expectReply(r, 'ack').packet.yiaddr, '0.0.0.0'); },
  },
  'port 4011: DISCOVER is not a boot-server message': {
    request: request(ovmfPxeDiscover),
    ctx: context({ serverPort: 4011 }),
    check: ignored('unsupported-message'),
  },
  // ---- validation ----
  'a BOOTREPLY is not answered': {
    request: request(ovmfPxeDiscover, { op: 2 }),
    ctx: context(),
    check: ignored('not-a-request'),
  },
  'plain BOOTP (no option 53) is not served': {
    request: request(ovmfPxeDiscover, {}, { 53: null }),
    ctx: context(),
    check: ignored('bootp-unsupported'),
  },
  'non-Ethernet hardware is not served': {
    request: request(ovmfPxeDiscover, { htype: 32, hlen: 0 }),
    ctx: context(),
    check: ignored('unsupported-hardware'),
  },
  'option 82 longer than one instance is refused': {
    request: request(relayedDiscover, {}, { 82: '01ff' + 'aa'.repeat(255) }),
    ctx: context(),
    check: ignored('malformed-relay-information'),
  },
  'an OFFER sent to the server is ignored': {
    request: request(ovmfPxeDiscover, {}, { 53: '02' }),
    ctx: context(),
    check: ignored('unsupported-message'),
  },
};

for (const [name, c] of Object.entries(cases)) {
  test(name, () => {
    const result = respond(c.request, c.ctx);
    c.check(result);
    if (result.kind === 'reply') encodeDhcpPacket(result.packet, { maxPacketBytes: maxReplyBytes(c.request) });
  });
}

const goldenReplies: Record<string, { request: DhcpPacket; ctx: ResponderContext }> = {
  'reply-full-offer-ovmf': { request: request(ovmfPxeDiscover), ctx: context() },
  'reply-proxy-offer-bios': { request: request(biosPxeDiscoverNo93), ctx: context({ mode: 'proxy', bootDecision: decisions.bios }) },
  'reply-full-ack-udhcpc': {
    request: request(udhcpcRequest),
    ctx: context({ reservations: [{ mac: UDHCPC_MAC, address: '10.20.0.51', hostName: 'node-2' }] }),
  },
};
for (const [name, c] of Object.entries(goldenReplies)) {
  test(`golden reply bytes: ${name}`, () => {
    const r = respond(c.request, c.ctx);
    assert.ok(r.kind === 'reply');
    const bytes = encodeDhcpPacket(r.packet, { maxPacketBytes: maxReplyBytes(c.request) });
    const lines = toHex(bytes).match(/.{1,64}/g) ?? [];
    assertGolden(name, summarizePacket(r.packet) + lines.join('\n') + '\n');
  });
}
