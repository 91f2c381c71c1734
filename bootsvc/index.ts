/**
 * @module Public surface of the boot services (DESIGN.md rule 2: the agent imports bootsvc only
 * from here): the seams the agent implements (`BootLookup`, `LeaseStore`), the DHCP codec, the
 * client classifier, the pure responder with its pool helpers, and reply routing.
 */
export type { BootDecision, BootLookup, BootQuery, BootTransport, ClientArch, FirmwareKind, Lease, LeaseState, LeaseStore } from './boot-lookup.js';
export { leaseKey } from './boot-lookup.js';

export { DhcpDecodeError, DhcpEncodeError, DhcpErrorCode, isDhcpDecodeError } from './dhcp/errors.js';
export { formatMacAddress, normalizeMacAddress, parseIpv4, formatIpv4, isIpv4 } from './dhcp/address.js';
export { DhcpMessageType, DhcpOption, type DhcpMessageTypeValue, type DhcpOptions } from './dhcp/options.js';
export {
  BootpOp,
  BROADCAST_FLAG,
  decodeDhcpPacket,
  encodeDhcpPacket,
  maxReplyBytes,
  type DhcpPacket,
  type EncodeDhcpPacketOptions,
} from './dhcp/packet.js';
export * from './dhcp/option-values.js';
export {
  decodeIpxeOptions,
  decodePxeVendorOptions,
  encodePxeVendorOptions,
  getIpxeOptions,
  getPxeVendorOptions,
  IpxeFeature,
  PxeDiscoveryControl,
  type IpxeOptions,
  type PxeVendorOptions,
} from './dhcp/encapsulated.js';
export { classifyClient, describeArchType, isNetbootClient, type ArchTypeInfo, type ClientInfo } from './dhcp/client-info.js';
export { respond } from './dhcp/responder.js';
export type { DhcpMode, IgnoreReason, LeaseChange, ResponderContext, ResponderResult, UnknownHostPolicy } from './dhcp/responder-context.js';
export { allocateAddress, checkAddress, selectSubnet, subnetContains, type Availability, type DhcpSubnet, type Reservation } from './dhcp/pool.js';
export { DhcpPort, routeReply, type ReplyRoute, type RequestSource } from './dhcp/reply-route.js';
