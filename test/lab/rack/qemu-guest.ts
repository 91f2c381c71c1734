/**
 * @module The virtual rack's QEMU guests (TCG only: KVM fails on the test machines, docs/test-peers.md):
 * the host description ({@link RackHostSpec}), the QEMU command line built from it (SeaBIOS or
 * OVMF, a virtio NIC on a tap of the rack bridge — Debian's virtio option ROM is iPXE, so the
 * guest's first DHCP request already comes from iPXE; or AAVMF on qemu-system-aarch64's `virt`,
 * whose NIC has no option ROM, so its firmware's own PXE boots shim and GRUB — virtio-blk disks with serials, `-boot
 * strict=on` with `bootindex` on the NIC and the first disk, the serial console in a file with
 * `-machine …,graphics=off` so SeaBIOS and iPXE print there too, QMP on unix sockets), sparse
 * disk images, and the start script an `ipmi_sim` chassis control runs to power a guest on.
 */
import { copyFile, chmod, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One host of the virtual rack. */
export interface RackHostSpec {
  /** BareMetalHost name; also names the host's files. */
  name: string;
  /** Its BMC: the virtual Redfish BMC (QMP backend) or `ipmi_sim` (QMP chassis control). */
  bmc: 'redfish' | 'ipmi';
  /**
   * SeaBIOS + iPXE ROM, OVMF + iPXE ROM, or an arm64 `virt` machine (cortex-a57) with AAVMF and
   * no option ROM (the firmware's own PXE boots shimaa64 → GRUB over TFTP; Redfish BMC only).
   */
  firmware: 'bios' | 'uefi' | 'aavmf';
  memoryMb: number;
  /** vCPUs (default 1). */
  cpus?: number;
  disks: { sizeMb: number; serial: string }[];
  /** Boot NIC MAC, lower-case colon form (e.g. 52:54:00:aa:00:01). */
  mac: string;
  /**
   * Redfish hosts only: an (empty) CD drive for virtual media, and the BMC address scheme
   * `redfish-virtualmedia+http`, so rackside boots the ramdisk from its ISO instead of PXE.
   */
  virtualMedia?: boolean;
  /**
   * IPMI hosts only: the guest's KCS system interface (QEMU `ipmi-bmc-extern` + `isa-ipmi-kcs`,
   * IPMI 2.0 §9) is a TCP connection to its `ipmi_sim`'s `serial kcs … codec VM` listener on this
   * port inside the namespace, so `/dev/ipmi0` in the guest talks to the same BMC that answers
   * lanplus. What the guest sends is logged in {@link GuestPaths.kcsLog}.
   */
  ipmiKcsPort?: number;
  /** IPMI hosts only: the UDP port ipmi_sim's LAN channel listens on (default 6230 + the host's index). */
  ipmiLanPort?: number;
  /**
   * UEFI (OVMF) hosts only: no option ROM on the NIC and OVMF's IPv4 stack off
   * (`opt/org.tianocore/IPv4Support=no`, else it tries PXEv4 for about a minute first), so the
   * firmware's own UEFI PXE over IPv6 boots — `tftp://[…]/ipxe.efi` from DHCPv6 option 59.
   */
  uefiPxe6?: boolean;
}

/** Files a guest uses, all under its own directory. */
export interface GuestPaths {
  dir: string;
  serialLog: string;
  /** QMP socket of the guest's BMC. */
  bmcQmp: string;
  pidFile: string;
  disks: string[];
  /** OVMF (or AAVMF) variable store copy (UEFI only). */
  ovmfVars: string;
  /** Bytes the guest wrote to its KCS interface (QEMU chardev `logfile`; with `ipmiKcsPort` only). */
  kcsLog: string;
}

/** Debian `ovmf` firmware code image. */
export const OVMF_CODE = '/usr/share/OVMF/OVMF_CODE_4M.fd';
/** Debian `ovmf` pristine variable store (copied per guest). */
export const OVMF_VARS = '/usr/share/OVMF/OVMF_VARS_4M.fd';
/** Debian `ipxe-qemu` option ROM QEMU loads for virtio-net-pci (iPXE for BIOS and UEFI). */
export const VIRTIO_NET_ROM = '/usr/lib/ipxe/qemu/efi-virtio.rom';

/** Debian `qemu-efi-aarch64` firmware code image. */
export const AAVMF_CODE = '/usr/share/AAVMF/AAVMF_CODE.fd';
/** Debian `qemu-efi-aarch64` pristine variable store (copied per guest). */
export const AAVMF_VARS = '/usr/share/AAVMF/AAVMF_VARS.fd';

/** The QEMU binary that runs a guest of this firmware. */
export function guestQemuBinary(spec: Pick<RackHostSpec, 'firmware'>): string {
  return spec.firmware === 'aavmf' ? 'qemu-system-aarch64' : 'qemu-system-x86_64';
}

/** QOM ids the BMCs use to reorder boot devices (`/machine/peripheral/<id>`). */
export const GUEST_DEVICE_IDS = { nic: 'net0', firstDisk: 'disk0', cd: 'cd0' } as const;

/** Checks a host description; throws a RangeError naming the bad field. */
export function validateHostSpec(spec: RackHostSpec): void {
  if (!/^[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?$/.test(spec.name)) throw new RangeError(`host name ${JSON.stringify(spec.name)}: lower-case letters, digits and - (max 42)`);
  if (!/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(spec.mac)) throw new RangeError(`host ${spec.name}: mac ${JSON.stringify(spec.mac)} must be lower-case aa:bb:cc:dd:ee:ff`);
  if (!Number.isInteger(spec.memoryMb) || spec.memoryMb < 256) throw new RangeError(`host ${spec.name}: memoryMb must be an integer ≥ 256 (the ramdisk unpacks into RAM)`);
  const cpus = spec.cpus ?? 1;
  if (!Number.isInteger(cpus) || cpus < 1 || cpus > 8) throw new RangeError(`host ${spec.name}: cpus must be 1-8`);
  for (const d of spec.disks) {
    if (!Number.isInteger(d.sizeMb) || d.sizeMb < 1) throw new RangeError(`host ${spec.name}: disk sizeMb must be a positive integer`);
    // virtio-blk serials are at most 20 bytes (VIRTIO_BLK_ID_BYTES); the inventory reads them from sysfs.
    if (!/^[A-Za-z0-9_-]{1,20}$/.test(d.serial)) throw new RangeError(`host ${spec.name}: disk serial ${JSON.stringify(d.serial)} must be 1-20 of A-Z a-z 0-9 _ -`);
  }
  if (spec.firmware === 'aavmf' && spec.bmc !== 'redfish') throw new RangeError(`host ${spec.name}: an aavmf guest needs the Redfish BMC`);
  if (spec.virtualMedia === true && spec.bmc !== 'redfish') throw new RangeError(`host ${spec.name}: virtual media needs the Redfish BMC`);
  if (spec.uefiPxe6 === true && spec.firmware !== 'uefi') throw new RangeError(`host ${spec.name}: uefiPxe6 needs firmware uefi (OVMF)`);
  for (const port of [spec.ipmiKcsPort, spec.ipmiLanPort]) {
    if (port === undefined) continue;
    if (spec.bmc !== 'ipmi') throw new RangeError(`host ${spec.name}: ipmiKcsPort and ipmiLanPort need the IPMI BMC`);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`host ${spec.name}: IPMI ports must be 1-65535`);
  }
}

/** The paths of guest `spec.name` under `dir`. */
export function guestPaths(dir: string, spec: RackHostSpec): GuestPaths {
  return {
    dir,
    serialLog: join(dir, 'serial.log'),
    bmcQmp: join(dir, 'bmc-qmp.sock'),
    pidFile: join(dir, 'qemu.pid'),
    disks: spec.disks.map((_, i) => join(dir, `disk${i}.raw`)),
    ovmfVars: join(dir, 'OVMF_VARS_4M.fd'),
    kcsLog: join(dir, 'kcs.log'),
  };
}

/** Boot order at QEMU start: which of NIC and first disk comes first (a bootindex number or a shell word like `$NET`). */
export interface GuestBootIndex {
  nic: number | string;
  disk: number | string;
}

/**
 * The QEMU arguments (after the binary) for `spec`: `paused` adds `-S` (powered off until the
 * BMC's `cont`) and `-no-shutdown` (a guest power-off stops the VM instead of ending QEMU).
 */
export function qemuArgs(spec: RackHostSpec, paths: GuestPaths, tap: string, options: { paused: boolean; bootIndex: GuestBootIndex }): string[] {
  const firmware = guestFirmwareArgs(spec, paths);
  const args = [
    '-name', `rackside-${spec.name}`,
    '-nodefaults', '-no-user-config', '-display', 'none', '-accel', 'tcg',
    ...firmware.machine,
    '-m', String(spec.memoryMb), '-smp', String(spec.cpus ?? 1),
    // append=on: an IPMI guest is a new QEMU process per power-on; its console history stays.
    '-chardev', `file,id=serial0,path=${paths.serialLog},append=on`, '-serial', 'chardev:serial0',
    '-qmp', `unix:${paths.bmcQmp},server=on,wait=off`,
    '-pidfile', paths.pidFile,
    '-boot', 'strict=on',
  ];
  args.push(...firmware.pflash);
  if (options.paused) args.push('-S', '-no-shutdown');
  args.push(
    '-netdev', `tap,id=n0,ifname=${tap},script=no,downscript=no`,
    '-device', `virtio-net-pci,netdev=n0,mac=${spec.mac},id=${GUEST_DEVICE_IDS.nic}${firmware.nicRom},bootindex=${options.bootIndex.nic}`,
  );
  if (spec.ipmiKcsPort !== undefined) args.push(...kcsArgs(spec.ipmiKcsPort, paths.kcsLog));
  spec.disks.forEach((d, i) => {
    const file = paths.disks[i] ?? '';
    const boot = i === 0 ? `,id=${GUEST_DEVICE_IDS.firstDisk},bootindex=${options.bootIndex.disk}` : `,id=disk${i}`;
    args.push('-drive', `file=${file},if=none,id=d${i},format=raw,cache=unsafe`, '-device', `virtio-blk-pci,drive=d${i},serial=${d.serial}${boot}`);
  });
  if (spec.virtualMedia === true) {
    // An empty tray on the machine's own IDE/AHCI controller; the BMC's InsertMedia changes the
    // medium (QMP blockdev-change-medium) and its boot override ranks it first (bootindex).
    args.push('-drive', 'if=none,id=cd0media,media=cdrom', '-device', `ide-cd,drive=cd0media,id=${GUEST_DEVICE_IDS.cd},bootindex=9`);
  }
  return args;
}

/** Machine, firmware flash and NIC option-ROM arguments of the guest's firmware. */
function guestFirmwareArgs(spec: RackHostSpec, paths: GuestPaths): { machine: string[]; pflash: string[]; nicRom: string } {
  if (spec.firmware === 'aavmf') {
    return {
      machine: ['-machine', 'virt,graphics=off', '-cpu', 'cortex-a57'],
      pflash: ['-drive', `if=pflash,format=raw,unit=0,readonly=on,file=${AAVMF_CODE}`, '-drive', `if=pflash,format=raw,unit=1,file=${paths.ovmfVars}`],
      nicRom: ',romfile=',
    };
  }
  const uefi = spec.firmware === 'uefi';
  const pxe6 = uefi && spec.uefiPxe6 === true;
  return {
    machine: ['-machine', uefi ? 'q35,graphics=off' : 'pc,graphics=off'],
    pflash: [
      ...(uefi ? ['-drive', `if=pflash,format=raw,readonly=on,file=${OVMF_CODE}`, '-drive', `if=pflash,format=raw,file=${paths.ovmfVars}`] : []),
      ...(pxe6 ? ['-fw_cfg', 'name=opt/org.tianocore/IPv4Support,string=no'] : []),
    ],
    nicRom: pxe6 ? ',romfile=' : '',
  };
}

/**
 * The external BMC on the guest's KCS interface: QEMU connects to ipmi_sim (reconnecting every
 * 10 s, so either may start first) and logs what the guest sends.
 */
function kcsArgs(port: number, logFile: string): string[] {
  return [
    '-chardev', `socket,id=ipmi0,host=127.0.0.1,port=${port},reconnect=10,logfile=${logFile},logappend=on`,
    '-device', 'ipmi-bmc-extern,chardev=ipmi0,id=bmc0',
    '-device', 'isa-ipmi-kcs,bmc=bmc0',
  ];
}

/** Creates the sparse disk images (and the OVMF variable store copy for UEFI guests). */
export async function createGuestFiles(spec: RackHostSpec, paths: GuestPaths): Promise<void> {
  for (const [i, d] of spec.disks.entries()) {
    const file = await open(paths.disks[i] ?? '', 'w');
    try {
      await file.truncate(d.sizeMb * 1024 * 1024);
    } finally {
      await file.close();
    }
  }
  if (spec.firmware === 'uefi') await copyFile(OVMF_VARS, paths.ovmfVars);
  if (spec.firmware === 'aavmf') await copyFile(AAVMF_VARS, paths.ovmfVars);
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

const NIC_INDEX = '__RACKSIDE_NIC_INDEX__';
const DISK_INDEX = '__RACKSIDE_DISK_INDEX__';

/**
 * Writes `dir/start-guest`, the program `ipmi_sim`'s chassis control runs as `START STATE_DIR`
 * on power on: it reads STATE_DIR/boot (`pxe` puts the NIC first, anything else the disk —
 * ipmitool's `bootdev disk` arrives as `default`) and execs QEMU, which keeps its PID in
 * `paths.pidFile`. It inherits ipmi_sim's network namespace, so the tap is the rack's.
 */
export async function writeGuestStartScript(spec: RackHostSpec, paths: GuestPaths, tap: string, qemuBinary: string): Promise<string> {
  const args = qemuArgs(spec, paths, tap, { paused: false, bootIndex: { nic: NIC_INDEX, disk: DISK_INDEX } });
  const command = [qemuBinary, ...args]
    .map(shellQuote)
    .join(' \\\n  ')
    .replaceAll(NIC_INDEX, `'"$NIC"'`)
    .replaceAll(DISK_INDEX, `'"$DISK"'`);
  const script = [
    '#!/bin/sh',
    '# Powers the guest on for ipmi_sim (test/lab/rack/qemu-guest.ts); $1 is the chassis state directory.',
    'boot=$(cat "$1/boot" 2>/dev/null)',
    'if [ "$boot" = pxe ]; then NIC=0; DISK=1; else NIC=1; DISK=0; fi',
    `echo "$(date +%s) power on, boot $boot" >> ${shellQuote(join(paths.dir, 'power.log'))}`,
    `exec ${command}`,
    '',
  ].join('\n');
  const path = join(paths.dir, 'start-guest');
  await writeFile(path, script);
  await chmod(path, 0o755);
  return path;
}
