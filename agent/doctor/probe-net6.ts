/**
 * @module `rackside doctor`'s DHCPv6 probe: a Solicit multicast to All_DHCP_Relay_Agents_and_Servers
 * (ff02::1:2, RFC 8415 §7.1) from the provisioning interface's link-local address, to hear every
 * DHCPv6 server on the segment. It observes only; checks-dhcp6.ts judges.
 */
import { createSocket } from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeProbeAdvertise, encodeProbeSolicit } from '../../bootsvc/index.js';
import type { Dhcp6Advertise, Dhcp6Probe, InterfaceProbe } from './types.js';
import { bindSocket, sendTo } from './udp-socket.js';

/**
 * Multicasts a Solicit (transaction id `xid`, DUID-LL of the interface's MAC) twice and collects
 * every Advertise for that xid for `listenMs`. Servers answer the client's link-local address
 * on port 546 (RFC 8415 §18.3), so one socket bound to `[<link-local>%<interface>]:546`
 * (SO_REUSEADDR: a DHCPv6 client on the host may hold the port) sends and receives; the zone
 * keeps both on the provisioning interface.
 */
export async function probeDhcp6Servers(iface: InterfaceProbe, listenMs: number, xid: number): Promise<Dhcp6Probe> {
  if (!iface.exists) return { state: 'not-run', reason: `interface ${iface.name} not found` };
  const linkLocal = (iface.addresses6 ?? []).find((a) => a.scope === 'link' && !a.tentative && !a.dadFailed);
  if (linkLocal === undefined) return { state: 'not-run', reason: `${iface.name} has no usable IPv6 link-local address to send a Solicit from` };
  if (iface.mac === undefined) return { state: 'not-run', reason: `${iface.name} has no hardware address` };
  const socket = createSocket({ type: 'udp6', reuseAddr: true });
  const advertises: Dhcp6Advertise[] = [];
  socket.on('message', (payload, rinfo) => {
    const advertise = decodeProbeAdvertise(payload, xid, rinfo.address);
    if (advertise !== undefined) advertises.push(advertise);
  });
  socket.on('error', () => undefined);
  try {
    await bindSocket(socket, `${linkLocal.address}%${iface.name}`, 546);
    const solicit = encodeProbeSolicit(iface.mac, xid);
    await sendTo(socket, solicit, `ff02::1:2%${iface.name}`, 547);
    await sleep(listenMs / 2);
    await sendTo(socket, solicit, `ff02::1:2%${iface.name}`, 547);
    await sleep(listenMs / 2);
    return { state: 'done', interface: iface.name, listenMs, advertises };
  } catch (err) {
    return { state: 'error', error: `${iface.name}: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    socket.close();
  }
}
