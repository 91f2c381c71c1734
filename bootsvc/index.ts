/**
 * @module Public surface of the boot services: what the agent uses, and nothing else (the agent
 * imports bootsvc only from here; `test/unit/boundaries.test.ts` holds the surface to names the
 * agent imports). Tests reach the rest through the defining files.
 *
 * - the seams the agent implements: the one boot lookup (`BootLookup.target`, answering with a
 *   `BootTarget` of `ipxe/boot-plan.ts`) and the lease store (`boot-lookup.ts`); the boot-file
 *   matrix that turns a target into a DHCP answer (`ipxe/boot-files.ts`) stays inside;
 * - the servers it starts: DHCP, TFTP, boot HTTP, and the turn budget they share;
 * - what the agent's doctor and ramdisk paths need of the DHCP codec, iPXE rendering, boot
 *   assets and flight-recorder events.
 */
export type { BootLookup, BootTargetQuery, ClientArch, Lease, LeaseStore } from './boot-lookup.js';
export { leaseKey } from './boot-lookup.js';

// DHCP: the server, and the codec the doctor's probe client uses.
export { startDhcpServer } from './dhcp/dhcp-server.js';
export { DEFAULT_RECEIVE_BUFFER_BYTES } from './dhcp/bound-socket.js';
export type { LeaseChange } from './dhcp/responder-context.js';
export { isIpv4, normalizeMacAddress } from './dhcp/address.js';
export { DhcpMessageType, DhcpOption } from './dhcp/options.js';
export { BootpOp, BROADCAST_FLAG, decodeDhcpPacket, encodeDhcpPacket } from './dhcp/packet.js';
export { getBootFileName, getMessageType, getServerIdentifier } from './dhcp/option-values.js';
export { interfaceIpv4Addresses, interfaceIpv6Addresses, type Interface6Address, type InterfaceAddress } from './net/interface-addresses.js';

// Boot plans, iPXE/GRUB rendering, boot paths, boot assets, the boot HTTP server.
export type { BootPlan, BootTarget, RamdiskPlan } from './ipxe/boot-plan.js';
export { routeBootPath } from './ipxe/boot-paths.js';
export { familyUrls, isGeneratedRoute, renderBootFile } from './ipxe/boot-renderer.js';
export { hostBootFileName, ramdiskCommandLine } from './ipxe/scripts.js';
export { BOOT_ASSETS, fixForGroup, formatBootAssetReport, type BootAssetGroup } from './ipxe/asset-catalog.js';
export { checkBootAssets } from './ipxe/assets.js';
export { startBootHttpServer } from './http/boot-http-server.js';

// TFTP (docs/tftp.md): the server and the mapping of its events to flight-recorder events.
export { startTftpServer } from './tftp/tftp-server.js';
export { toTftpBootEvent } from './tftp/boot-events.js';

// Flight-recorder events, the shared per-turn budget, and the steady clock (agent/clock.ts uses this one).
export type { BootEvent, DhcpEventMessage, RamdiskEventType, TftpEventPhase } from './events.js';
export { TurnBudget } from './turn-budget.js';
export { steadyEpochMs } from './steady-clock.js';

// DHCPv6 (docs/ipv6.md): the server and the check of its lease records the agent's store uses.
export { startDhcp6Server } from './dhcp6/dhcp6-server.js';
export { isIpv6Lease } from './dhcp6/lease-table.js';
export { canonicalIpv6, isIpv6 } from './dhcp6/address6.js';
// doctor's rogue-DHCPv6 probe messages.
export { decodeProbeAdvertise, duidLlHex, encodeProbeSolicit, type Dhcp6Advertise } from './dhcp6/probe.js';
export { startRouterAdvertiser } from './ra/router-advertiser.js';
