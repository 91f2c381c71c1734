/**
 * @module Public surface of images/: the ramdisk builder (initrd and ISO) and its manifest, the
 * per-host overlay (appended cpio, or patched into the ISO's slot), the cpio codec, and the
 * server side of the in-ramdisk agent's protocol. agent/ imports images only through this file.
 */
export { buildRamdisk, defaultAgentScriptDir, RamdiskBuildError, type BuildRamdiskOptions, type BuildRamdiskResult } from './builder.js';
export { addParentDirectories, CpioError, decodeCpio, encodeCpio, encodeCpioChunks, FileType, type CpioEntry, type DecodedCpioEntry } from './cpio.js';
export { DebianPackageError, fetchDebianPackage, type DebianPackage } from './debian-package.js';
export { BootMenuError, CONSOLE_KERNEL_ARGS, IsoPath, isoKernelCommandLine, renderGrubConfig, renderIsolinuxConfig } from './boot-menus.js';
export { BootLoaderError, resolveBootLoaders, type BootLoaderFile, type BootLoaderSource } from './bootloaders.js';
export { buildConfigDrive, ConfigDriveBuildError, type BuildConfigDriveOptions } from './config-drive.js';
export { ConfigDriveError, renderConfigDriveFiles, renderMetaData, type ConfigDriveContent, type ConfigDriveFile } from './config-drive-files.js';
export { CommandError } from './files.js';
export { hashFile } from './hash-file.js';
export { ChecksumMismatchError, ImageCache, ImageTooLargeError, type CachedImage, type ImageCacheOptions } from './image-cache.js';
export {
  ChecksumError,
  detectChecksumAlgorithm,
  imageFileName,
  isOciImage,
  parseChecksumFile,
  planChecksum,
  type ChecksumAlgorithm,
  type ChecksumPlan,
  type ImageSpec,
} from './image-checksum.js';
export { convertToRaw, detectImageFormat, ImageConvertError, type DiskImageFormat } from './image-convert.js';
export { DiskFullError, DownloadError, downloadWithResume, parseContentRange, type DiskFullDetails, type DownloadOptions, type DownloadResult, type ImageProgress } from './image-fetch.js';
export { buildIso, DEFAULT_HOST_OVERLAY_SLOT_BYTES, IsoBuildError, writeHostIso, type BuildIsoOptions, type BuildIsoResult } from './iso.js';
export { assertOverlayFits, HostIsoError, patchIsoChunk, validateHostOverlaySlot, type HostOverlaySlot } from './iso-host.js';
export { buildHostOverlay, concatInitrds, HostOverlayError, ramdiskKernelArgs, validateAgentUrl, validateRamdiskToken, type HostOverlayOptions } from './host-overlay.js';
export { DEFAULT_HOST_TOOLS } from './host-tools.js';
export { compressInitramfs, DEFAULT_MODULES, InitramfsError, type InitramfsCompression } from './initramfs.js';
export { KernelInputError, resolveBusybox, resolveKernel, type BusyboxSource, type KernelSource, type ResolvedBusybox, type ResolvedKernel } from './kernel.js';
export { decodeManifest, encodeManifest, ManifestError, type ManifestIso, type RamdiskManifest } from './manifest.js';
export { ModuleIndexError } from './modules.js';
export {
  decodeRamdiskHeartbeat,
  encodeRamdiskCommand,
  RAMDISK_API_PREFIX,
  RAMDISK_COMMANDS,
  RamdiskEndpoint,
  RamdiskProtocolError,
  type CleanParams,
  type DeployParams,
  type RamdiskCommand,
  type RamdiskCommandName,
  type RamdiskHeartbeat,
  type RootDeviceHints,
  type SoftwareRaidVolumeParams,
} from './ramdisk-protocol.js';
export {
  decodeRamdiskDisk,
  decodeRamdiskResult,
  type CleanDiskReport,
  type CleanResultDetails,
  type DeployResultDetails,
  type RaidResultDetails,
  type RamdiskDisk,
  type RamdiskResult,
} from './ramdisk-results.js';
export { diskMatchesHints, MIN_ROOT_DISK_BYTES, pickRootDisk } from './root-device-hints.js';
