/**
 * @module Public surface of images/: what the agent uses, and nothing else (agent/ imports images
 * only through this file; `test/unit/boundaries.test.ts` holds the surface to names the agent
 * imports). The ramdisk builder and its manifest, the per-host overlay (appended cpio, or
 * patched into the ISO's slot), the config drive, the image cache, and the server side of the
 * in-ramdisk agent's protocol. Tests reach the rest through the defining files.
 */
export { buildRamdisk } from './builder.js';
export { HEAD_NODE_ARCH } from './arch-inputs.js';
export { debianArchOf, ramdiskSubdir, RAMDISK_ARCHES, type DebianArch } from './debian-arch.js';
export { decodeManifest } from './manifest.js';
export { type KernelSource } from './kernel.js';
export { buildCaOverlay, buildHostOverlay } from './host-overlay.js';
export { buildUnifiedKernelImage, UKI_STUB_X64 } from './uki.js';
export { patchIsoChunk, type HostOverlaySlot } from './iso-host.js';
export { buildConfigDrive } from './config-drive.js';
export type { ConfigDriveContent } from './config-drive-files.js';
export { renderDefaultNetworkData } from './config-drive-network.js';
export { ImageCache, type CachedImage } from './image-cache.js';
export type { ImageSpec } from './image-checksum.js';
export { DiskFullError, type ImageProgress } from './image-fetch.js';
export {
  decodeRamdiskHeartbeat,
  encodeRamdiskCommand,
  RAMDISK_COMMANDS,
  RamdiskEndpoint,
  RamdiskProtocolError,
  type CleanParams,
  type DeployParams,
  type RamdiskCommand,
  type RamdiskCommandName,
  type RootDeviceHints,
  type SoftwareRaidVolumeParams,
} from './ramdisk-protocol.js';
export { decodeRamdiskResult, type CleanDiskReport, type CleanResultDetails, type RamdiskResult } from './ramdisk-results.js';
export { staleReasons, type ExpectedBuildInputs } from './build-check.js';
export { expectedBuildInputs } from './build-inputs.js';
export { BUILD_PHASE_TITLES, formatProgressLine, parseProgressLine, type BuildPhase, type BuildProgress } from './build-progress.js';
export { backgroundNice } from './image-convert.js';
