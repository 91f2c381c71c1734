#!/bin/sh
# rackside ramdisk agent: disks. Sourced by rackside-agent.sh (functions only).
# Disk attributes come from sysfs (there is no udev in the ramdisk), in the shapes
# ironic-python-agent reports them, and root device hints are matched with ironic-lib's rules:
# every given hint must match (AND); strings are compared stripped and lowercased; name, hctl,
# serial and the wwn* hints are exact, model and vendor are substrings; size is
# "device bytes / GiB >= N"; rotational is a boolean; a disk without a value for a hinted
# attribute never matches. The TypeScript twin is images/root-device-hints.ts.

# list_disks: names of the whole disks in /sys/block (no loop, ram, zram, dm, md, optical, floppy, nbd).
list_disks() {
  for dev in "${SYSFS}"/block/*; do
    [ -e "$dev" ] || continue
    name=${dev##*/}
    case "$name" in loop*|ram*|zram*|dm-*|md*|sr*|fd*|nbd*) continue ;; esac
    echo "$name"
  done
}

# disk_serial DEV: virtio-blk and NVMe expose serial in sysfs; SCSI/SATA in VPD page 0x80.
disk_serial() {
  s=$(read_file "${SYSFS}/block/$1/serial")
  [ -n "$s" ] || s=$(read_file "${SYSFS}/block/$1/device/serial")
  if [ -z "$s" ] && [ -r "${SYSFS}/block/$1/device/vpd_pg80" ]; then
    s=$(tail -c +5 "${SYSFS}/block/$1/device/vpd_pg80" | tr -d '\000' | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
  fi
  printf '%s' "$s"
}

# disk_wwid DEV: the raw world wide identifier sysfs exposes (naa.…, eui.…, t10.…), or nothing.
disk_wwid() {
  w=$(read_file "${SYSFS}/block/$1/wwid")
  [ -n "$w" ] || w=$(read_file "${SYSFS}/block/$1/device/wwid")
  printf '%s' "$w"
}

# disk_wwn DEV PART: wwn, wwn_with_extension or wwn_vendor_extension in udev's ID_WWN form:
# an NAA id of 16 hex digits is 0x<id>; a 32-digit NAA type 6 id is split into the 64-bit WWN
# and its vendor extension; other identifiers are passed through as the WWN.
disk_wwn() {
  w=$(disk_wwid "$1")
  [ -n "$w" ] || return 0
  case "$w" in
    naa.*)
      hex=${w#naa.}
      if [ "${#hex}" -eq 32 ]; then
        case "$2" in
          wwn) printf '0x%s' "$(printf '%s' "$hex" | cut -c1-16)" ;;
          wwn_vendor_extension) printf '0x%s' "$(printf '%s' "$hex" | cut -c17-32)" ;;
          *) printf '0x%s' "$hex" ;;
        esac
      else
        case "$2" in wwn_vendor_extension) ;; *) printf '0x%s' "$hex" ;; esac
      fi
      ;;
    *) case "$2" in wwn_vendor_extension) ;; *) printf '%s' "$w" ;; esac ;;
  esac
}

# disk_hctl DEV: SCSI address H:C:T:L for SCSI/SATA/SAS disks, else nothing.
disk_hctl() {
  [ -d "${SYSFS}/block/$1/device/scsi_disk" ] || [ -d "${SYSFS}/block/$1/device/scsi_device" ] || return 0
  h=$(readlink "${SYSFS}/block/$1/device" 2>/dev/null)
  printf '%s' "${h##*/}"
}

# disk_by_path DEV: the /dev/disk/by-path name udev's path_id would give, for virtio-blk
# (pci-ADDR), NVMe (pci-ADDR-nvme-NSID) and ATA (pci-ADDR-ata-PORT.0, systemd ≥ 252); else nothing.
disk_by_path() {
  real=$(readlink -f "${SYSFS}/block/$1/device" 2>/dev/null) || return 0
  [ -n "$real" ] || return 0
  pci=
  rest=$real
  while [ -n "$rest" ] && [ "$rest" != / ]; do
    base=${rest##*/}
    case "$base" in
      [0-9a-f][0-9a-f][0-9a-f][0-9a-f]:[0-9a-f][0-9a-f]:[0-9a-f][0-9a-f].[0-7]) pci=$base; break ;;
    esac
    rest=${rest%/*}
  done
  [ -n "$pci" ] || return 0
  case "$1" in
    nvme*)
      nsid=$(read_file "${SYSFS}/block/$1/nsid")
      printf '/dev/disk/by-path/pci-%s-nvme-%s' "$pci" "${nsid:-1}"
      return 0
      ;;
  esac
  case "$real" in
    */ata[0-9]*/host*)
      ata=${real#*/ata}
      ata=${ata%%/*}
      port=$(read_file "${real%%/ata"${ata}"/*}/ata${ata}/ata_port/ata${ata}/port_no")
      printf '/dev/disk/by-path/pci-%s-ata-%s.0' "$pci" "${port:-$ata}"
      ;;
    */virtio[0-9]*)
      [ -e "${SYSFS}/block/$1/device/scsi_disk" ] || printf '/dev/disk/by-path/pci-%s' "$pci"
      ;;
  esac
}

# disk_attr DEV KEY: one attribute under its ironic key (name, by_path, size, rotational, model,
# vendor, serial, wwn, wwn_with_extension, wwn_vendor_extension, hctl).
disk_attr() {
  case "$2" in
    name) printf '/dev/%s' "$1" ;;
    by_path) disk_by_path "$1" ;;
    size) sectors=$(read_file "${SYSFS}/block/$1/size"); printf '%s' "$(( ${sectors:-0} * 512 ))" ;;
    rotational) case "$(read_file "${SYSFS}/block/$1/queue/rotational")" in 1) printf true ;; 0) printf false ;; esac ;;
    model) read_file "${SYSFS}/block/$1/device/model" ;;
    vendor) read_file "${SYSFS}/block/$1/device/vendor" ;;
    serial) disk_serial "$1" ;;
    wwn|wwn_with_extension|wwn_vendor_extension) disk_wwn "$1" "$2" ;;
    hctl) disk_hctl "$1" ;;
  esac
}

# norm VALUE: stripped and lowercased, as ironic-lib compares strings.
norm() {
  printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'
}

HINT_KEYS="name by_path hctl model vendor serial size wwn wwn_with_extension wwn_vendor_extension rotational"

# disk_matches DEV PREFIX: true when DEV matches every hint `${PREFIX}KEY=VALUE` of the command.
disk_matches() {
  for key in $HINT_KEYS; do
    want=$(answer "$2$key")
    [ -n "$want" ] || continue
    if [ "$key" = size ]; then
      case "$want" in *[!0-9]*) return 1 ;; esac
      bytes=$(disk_attr "$1" size)
      [ "$bytes" -ge $(( want * 1073741824 )) ] || return 1
      continue
    fi
    have=$(norm "$(disk_attr "$1" "$key")")
    want=$(norm "$want")
    [ -n "$have" ] || return 1
    case "$key" in
      name) case "$want" in /dev/*) ;; *) want="/dev/${want}" ;; esac; [ "$have" = "$want" ] || return 1 ;;
      model|vendor) case "$have" in *"$want"*) ;; *) return 1 ;; esac ;;
      *) [ "$have" = "$want" ] || return 1 ;;
    esac
  done
  return 0
}

# has_hints PREFIX: true when the command carries at least one hint with that prefix.
has_hints() {
  for key in $HINT_KEYS; do
    [ -n "$(answer "$1$key")" ] && return 0
  done
  return 1
}

# describe_disk DEV: one line for error messages listing the candidates.
describe_disk() {
  printf '/dev/%s (size %s, model %s, vendor %s, serial %s, wwn %s, hctl %s, rotational %s, by_path %s)' "$1" \
    "$(disk_attr "$1" size)" "$(disk_attr "$1" model)" "$(disk_attr "$1" vendor)" "$(disk_attr "$1" serial)" \
    "$(disk_attr "$1" wwn)" "$(disk_attr "$1" hctl)" "$(disk_attr "$1" rotational)" "$(disk_attr "$1" by_path)"
}

# pick_disk PREFIX: prints the first disk matching the hints; without hints the smallest disk of
# at least 4 GiB (ironic-python-agent's default). On no match prints the candidates to stderr.
pick_disk() {
  if has_hints "$1"; then
    for d in $(list_disks); do
      if disk_matches "$d" "$1"; then echo "$d"; return 0; fi
    done
  else
    best=
    best_size=
    for d in $(list_disks); do
      s=$(disk_attr "$d" size)
      [ "$s" -ge 4294967296 ] || continue
      if [ -z "$best" ] || [ "$s" -lt "$best_size" ]; then best=$d; best_size=$s; fi
    done
    [ -n "$best" ] && { echo "$best"; return 0; }
  fi
  candidates=
  for d in $(list_disks); do candidates="${candidates}${candidates:+; }$(describe_disk "$d")"; done
  echo "${candidates:-none}" >&2
  return 1
}
