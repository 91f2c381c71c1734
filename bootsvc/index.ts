/**
 * @module Public surface of the boot services (docs/architecture.md, rule 2: the agent imports bootsvc only
 * from here): the seams the agent implements (`BootLookup`, `LeaseStore`), the DHCP codec, the
 * client classifier, the pure responder with its pool helpers, and reply routing.
 */
export type { BootLookup, BootQuery, BootTargetQuery, BootTransport, ClientArch, FirmwareKind, Lease, LeaseState, LeaseStore } from './boot-lookup.js';
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
// The DHCP server's I/O: start/stop, interface-bound sockets (native/udp-bind), stats.
export { startDhcpServer, type DhcpLogFunction, type DhcpLogLevel, type DhcpServer, type DhcpServerOptions } from './dhcp/dhcp-server.js';
export { subnetsFromRanges, type DhcpDropReason, type DhcpRangeConfig, type DhcpServerStats } from './dhcp/server-events.js';
export type { BatchLeaseStore } from './dhcp/lease-cache.js';
export {
  DEFAULT_RECEIVE_BUFFER_BYTES,
  DEFAULT_UDP_BIND_ADDON_PATH,
  isUdpBindAddonAvailable,
  openBoundSocket,
  UDP_BIND_ADDON_MISSING,
  type BoundDatagram,
  type BoundSocket,
  type OpenBoundSocketOptions,
} from './dhcp/bound-socket.js';

// Boot HTTP, iPXE/GRUB rendering, the boot-file matrix, boot assets and flight-recorder events.
export * from './events.js';
export { TurnBudget, type TurnBudgetOptions, type TurnBudgetStats } from './turn-budget.js';
export type { BootPlan, BootTarget, LiveIsoPlan, LocalDiskPlan, NothingPlan, RamdiskPlan } from './ipxe/boot-plan.js';
export { BootFileName, chooseBootChain, firstStageFile, type BootChain, type BootFileOptions, type UefiIpxeLoader } from './ipxe/boot-files.js';
export { isBootProbe, normalizeBootPath, routeBootPath, routeMac, type BootRoute, type NormalizedBootPath, type RouteBootPathOptions } from './ipxe/boot-paths.js';
export { isGeneratedRoute, renderBootFile, resolveBootTarget, type BootRendererOptions, type GeneratedBootRoute, type RenderedBootFile } from './ipxe/boot-renderer.js';
export { BootRenderError, canonicalMac, hyphenMac, resolveBootUrl, scriptUrlFor } from './ipxe/render-text.js';
export { DEFAULT_CONSOLES, ramdiskKernelParams, renderEntryScript, renderIpxeScript, renderLiveIsoScript, renderLocalDiskScript, renderNothingScript, renderRamdiskScript } from './ipxe/scripts.js';
export { renderGrubConfig, renderGrubEntryConfig } from './ipxe/grub.js';
export { BOOT_ASSETS, DEFAULT_ASSETS_DIR, fixForGroup, formatBootAssetReport, type BootAssetGroup, type BootAssetReport, type BootAssetSpec, type FoundBootAsset, type MissingBootAssets } from './ipxe/asset-catalog.js';
export { checkBootAssets, type DiscoverBootAssetsOptions } from './ipxe/assets.js';
export { FileJail, openRegularFile, type JailedFile, type JailLookup } from './http/file-jail.js';
export { startBootHttpServer, type BootHttpLogger, type BootHttpServer, type BootHttpServerOptions, type BootHttpStats } from './http/boot-http-server.js';

// TFTP, in-house (docs/tftp.md): the read-only server, its flight-recorder events and stats,
// the mapping of its events to `TftpBootEvent`, and the codec's errors.
export { startTftpServer, type TftpServer, type TftpServerOptions } from './tftp/tftp-server.js';
export type { TftpClient, TftpErrorOrigin, TftpEvent, TftpServerStats, TftpTransferMetrics } from './tftp/server-types.js';
export { toTftpBootEvent } from './tftp/boot-events.js';
export { isTftpDecodeError, TftpDecodeError, TftpEncodeError, TftpErrorCode, TftpWireError } from './tftp/errors.js';
// The boot services' steady clock: the agent's own steady clock is this one (agent/clock.ts).
export { steadyEpochMs } from './steady-clock.js';
