/**
 * @module The firmware matrix's QEMU guests (TCG only, docs/test-peers.md): one virtio NIC with
 * **no option ROM** (`romfile=`, so the firmware's own network stack boots — Debian's iPXE ROMs
 * would otherwise answer first, and they are unsigned), started paused (`-S -no-shutdown`) with a
 * QMP socket for the virtual Redfish BMC that powers it on, the serial console in a file
 * (`graphics=off`, so the firmware prints there too).
 *
 * | firmware          | machine, firmware images                                                   | network boot                 |
 * |-------------------|-----------------------------------------------------------------------------|------------------------------|
 * | `ovmf-pxe`        | q35, OVMF_CODE_4M.fd + a copy of OVMF_VARS_4M.fd                            | UEFI PXE (TFTP), arch 7      |
 * | `ovmf-http`       | the same, PXE switched off through fw_cfg (`opt/org.tianocore/IPv4PXESupport`, `IPv6PXESupport`) | UEFI HTTP boot, arch 16 |
 * | `ovmf-secure-boot`| q35 with SMM, OVMF_CODE_4M.secboot.fd + a copy of OVMF_VARS_4M.ms.fd (Microsoft keys enrolled, Secure Boot on), secure pflash | UEFI PXE, arch 7 |
 * | `aavmf`           | arm64 `virt` (cortex-a57), AAVMF_CODE.fd + a copy of AAVMF_VARS.fd            | UEFI PXE, arch 11            |
 */
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The firmware variants of the matrix. */
export type GuestFirmware = 'ovmf-pxe' | 'ovmf-http' | 'ovmf-secure-boot' | 'aavmf';

/** Firmware images per variant (Debian packages `ovmf`, `qemu-efi-aarch64`). */
export const FIRMWARE_IMAGES: Readonly<Record<GuestFirmware, { code: string; vars: string; debianPackage: string }>> = {
  'ovmf-pxe': { code: '/usr/share/OVMF/OVMF_CODE_4M.fd', vars: '/usr/share/OVMF/OVMF_VARS_4M.fd', debianPackage: 'ovmf' },
  'ovmf-http': { code: '/usr/share/OVMF/OVMF_CODE_4M.fd', vars: '/usr/share/OVMF/OVMF_VARS_4M.fd', debianPackage: 'ovmf' },
  'ovmf-secure-boot': { code: '/usr/share/OVMF/OVMF_CODE_4M.secboot.fd', vars: '/usr/share/OVMF/OVMF_VARS_4M.ms.fd', debianPackage: 'ovmf' },
  'aavmf': { code: '/usr/share/AAVMF/AAVMF_CODE.fd', vars: '/usr/share/AAVMF/AAVMF_VARS.fd', debianPackage: 'qemu-efi-aarch64' },
};

/** The QEMU binary of a variant and the Debian package that ships it. */
export function qemuBinaryFor(firmware: GuestFirmware): { binary: string; debianPackage: string } {
  return firmware === 'aavmf' ? { binary: 'qemu-system-aarch64', debianPackage: 'qemu-system-arm' } : { binary: 'qemu-system-x86_64', debianPackage: 'qemu-system-x86' };
}

/** One firmware-matrix guest. */
export interface FirmwareGuestSpec {
  /** Short name; the QEMU process is named `rackside-fw-<name>`. */
  name: string;
  firmware: GuestFirmware;
  /** Lower-case colon MAC of the NIC. */
  mac: string;
  memoryMb: number;
  /**
   * The CAs the firmware trusts for UEFI HTTPS boot: an EFI_SIGNATURE_LIST file handed to OVMF as
   * fw_cfg `etc/edk2/https/cacerts` (agent/boot/efi-signature-list.ts).
   */
  httpsCaCerts?: string;
}

/** Files of a guest, under its directory. */
export interface FirmwareGuestPaths {
  serialLog: string;
  qmp: string;
  pidFile: string;
  vars: string;
}

/** The paths of a guest under `dir`. */
export function firmwareGuestPaths(dir: string): FirmwareGuestPaths {
  return { serialLog: join(dir, 'serial.log'), qmp: join(dir, 'qmp.sock'), pidFile: join(dir, 'qemu.pid'), vars: join(dir, 'vars.fd') };
}

/** QOM id of the NIC (the BMC sets its `bootindex`). */
export const FIRMWARE_GUEST_NIC_ID = 'net0';

/**
 * PCI slot of the x86 guests' NIC on the root bus (`addr=`), pinned so that the device path
 * PciRoot(0x0)/Pci(0x3,0x0)/MAC(…) the lab's BMC writes into a boot option names it.
 */
export const FIRMWARE_GUEST_NIC_PCI = { device: 3, function: 0 } as const;

/** The QEMU arguments (after the binary) for `spec` on tap `tap`. */
export function firmwareQemuArgs(spec: FirmwareGuestSpec, paths: FirmwareGuestPaths, tap: string): string[] {
  const images = FIRMWARE_IMAGES[spec.firmware];
  const arm = spec.firmware === 'aavmf';
  const secure = spec.firmware === 'ovmf-secure-boot';
  const args = [
    '-name', `rackside-fw-${spec.name}`,
    '-nodefaults', '-no-user-config', '-display', 'none', '-accel', 'tcg',
    '-machine', arm ? 'virt,graphics=off' : `q35,graphics=off${secure ? ',smm=on' : ''}`,
    ...(arm ? ['-cpu', 'cortex-a57'] : []),
    '-m', String(spec.memoryMb), '-smp', '1',
    '-chardev', `file,id=serial0,path=${paths.serialLog},append=on`, '-serial', 'chardev:serial0',
    '-qmp', `unix:${paths.qmp},server=on,wait=off`,
    '-pidfile', paths.pidFile,
    '-S', '-no-shutdown',
    '-boot', 'strict=on',
  ];
  // Secure Boot: the variable store is writable only from SMM, so the OS cannot switch it off.
  if (secure) args.push('-global', 'driver=cfi.pflash01,property=secure,value=on');
  args.push('-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${images.code}`, '-drive', `if=pflash,format=raw,unit=1,file=${paths.vars}`);
  if (spec.firmware === 'ovmf-http') {
    // OVMF's PcdIPv4PXESupport/PcdIPv6PXESupport read from fw_cfg: no PXE boot options, so the
    // boot manager's first network option is "UEFI HTTPv4".
    args.push('-fw_cfg', 'name=opt/org.tianocore/IPv4PXESupport,string=no', '-fw_cfg', 'name=opt/org.tianocore/IPv6PXESupport,string=no');
  }
  // OVMF's TlsAuthConfigLib copies this item into the TlsCaCertificate variable HTTPS boot verifies against.
  if (spec.httpsCaCerts !== undefined) args.push('-fw_cfg', `name=etc/edk2/https/cacerts,file=${spec.httpsCaCerts}`);
  args.push(
    '-netdev', `tap,id=n0,ifname=${tap},script=no,downscript=no`,
    '-device', `virtio-net-pci,netdev=n0,mac=${spec.mac},id=${FIRMWARE_GUEST_NIC_ID},romfile=,bootindex=0${arm ? '' : `,addr=0x${FIRMWARE_GUEST_NIC_PCI.device.toString(16)}`}`,
  );
  return args;
}

/** Copies the pristine variable store for a fresh guest. */
export async function createFirmwareVars(spec: FirmwareGuestSpec, paths: FirmwareGuestPaths): Promise<void> {
  await copyFile(FIRMWARE_IMAGES[spec.firmware].vars, paths.vars);
}
