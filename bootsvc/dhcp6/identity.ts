/**
 * @module Which host a DHCPv6 client is: its MAC. The firmware, iPXE and the ramdisk of one
 * machine present different DUIDs (DUID-UUID in two byte orders, DUID-LL) and IAIDs, so the
 * DUID cannot key a host; the MAC ties them together. In order of trust:
 *
 * 1. option 79 (RFC 6939) from the relay nearest the client — it saw the frame;
 * 2. the modified EUI-64 interface identifier of the client's link-local source address
 *    (the relay's peer-address when relayed), RFC 4291 appendix A — the interface that sent it;
 * 3. the MAC of a DUID-LL / DUID-LLT (RFC 8415 §11.2, §11.4) — the device's, which may belong
 *    to another interface of the machine, hence last.
 * @pure
 */
import { encodeIpv6, isLinkLocal, macFromEui64 } from './address6.js';
import { decodeDuid, duidMac, getClientLinkLayer, HARDWARE_ETHERNET } from './values.js';
import { formatMacAddress } from '../dhcp/address.js';
import type { Dhcp6Options } from './options.js';

/** Where a client's MAC came from. */
export type MacSource = 'relay-option-79' | 'link-local-eui64' | 'duid-ll' | 'duid-llt';

/** What identifies a client, as the server sees one request. */
export interface ClientIdentityInput {
  /** The Client Identifier option's value (a DUID), if any. */
  clientId?: Uint8Array;
  /** The options of the relay nearest the client (innermost Relay-Forw), if relayed. */
  nearestRelayOptions?: Dhcp6Options;
  /** The client's source address: the innermost relay's peer-address, or the datagram's source. */
  sourceAddress: string;
}

/** The MAC of a client, and which of the three sources gave it; `undefined` when none does. */
export function resolveClientMac(input: ClientIdentityInput): { mac: string; source: MacSource } | undefined {
  const lla = input.nearestRelayOptions === undefined ? undefined : getClientLinkLayer(input.nearestRelayOptions);
  if (lla?.hardwareType === HARDWARE_ETHERNET && lla.address.length === 6) return { mac: formatMacAddress(lla.address), source: 'relay-option-79' };
  const src = encodeIpv6(input.sourceAddress);
  if (src !== undefined && isLinkLocal(src)) {
    const mac = macFromEui64(src);
    if (mac !== undefined) return { mac, source: 'link-local-eui64' };
  }
  if (input.clientId !== undefined) {
    const duid = decodeDuid(input.clientId);
    const mac = duidMac(duid);
    if (mac !== undefined) return { mac, source: duid.type === 'll' ? 'duid-ll' : 'duid-llt' };
  }
  return undefined;
}
