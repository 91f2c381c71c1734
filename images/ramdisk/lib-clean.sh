#!/bin/sh
# rackside ramdisk agent: clean and software RAID. Sourced by rackside-agent.sh (functions only).
# clean (mode metadata, ironic-python-agent's erase_devices_metadata): stop md arrays, then for
# every disk wipe the signatures of its partitions and of the disk (util-linux wipefs -a, which
# also removes both GPT headers and the protective MBR), clear md superblocks, and zero the first
# and last MiB. Mode erase also overwrites the whole disk with zeros (blkdiscard --zeroout, which
# the device may offload, else dd). Each disk gets a report: its identity (device, serial, WWN,
# model: what an erase record names the disk by) and what a read-back after the wipe found.
# With clean_keep_raid=1 (automated cleaning, as IPA's erase_devices_metadata does it) software
# RAID survives: arrays are assembled, not stopped; their member disks are skipped (method
# "kept") and the md devices themselves are cleaned instead, so only what is on the array goes.
# raid: one partition per volume on each member disk (GPT), then mdadm --create per volume.

# stop_md_arrays: stops every running md array so its members can be wiped.
stop_md_arrays() {
  mdadm=$(host_tool mdadm) || return 0
  for md in "${SYSFS}"/block/md*; do
    [ -e "$md" ] || continue
    "$mdadm" --stop "${DEV}/${md##*/}" >> "${RUN}/agent.log" 2>&1 && say "clean: stopped ${md##*/}"
  done
}

# wipe_signatures DEVICE: wipefs -a and md superblock removal, when the tools are there.
wipe_signatures() {
  if wipefs=$(host_tool wipefs); then "$wipefs" -a -f -q "$1" >> "${RUN}/agent.log" 2>&1; fi
  if mdadm=$(host_tool mdadm); then "$mdadm" --zero-superblock "$1" >> "${RUN}/agent.log" 2>&1; fi
  return 0
}

# VERIFY_BLOCKS random 4 KiB blocks are read back after a whole-disk erase, on top of both ends.
VERIFY_BLOCKS=16

# read_back DEVICE SKIP BS: reads one BS-byte block at block SKIP and adds it to the counters
# v_samples, v_bytes, v_nonzero (any byte not 0) and v_short (fewer bytes than v_want came back).
# O_DIRECT reads the device itself, not the page cache: busybox dd has iflag=direct (Debian 12's
# 1.35 does; dd.c alloc_buf maps page-aligned buffers for it) and every offset and length here
# is a multiple of 4 KiB, the largest logical block size O_DIRECT must be aligned to. The kernel
# refuses O_DIRECT with EINVAL where the driver or file system has no direct I/O, and an older
# busybox rejects the flag: then a plain read, which --flushbufs in verify_disk sent to the
# device too. fullblock: a short read is retried, not taken for a short sample.
read_back() {
  rm -f "${RUN}/sample"
  dd if="$1" of="${RUN}/sample" bs="$3" skip="$2" count=1 iflag=direct,fullblock 2>/dev/null \
    || dd if="$1" of="${RUN}/sample" bs="$3" skip="$2" count=1 iflag=fullblock 2>> "${RUN}/agent.log"
  got=0
  [ -f "${RUN}/sample" ] && got=$(wc -c < "${RUN}/sample")
  v_samples=$((v_samples + 1))
  v_bytes=$((v_bytes + got))
  [ "$got" -ge "$v_want" ] || v_short=$((v_short + 1))
  [ "$got" -gt 0 ] && [ "$(tr -d '\000' < "${RUN}/sample" | wc -c)" -gt 0 ] && v_nonzero=$((v_nonzero + 1))
  rm -f "${RUN}/sample"
}

# random_block BLOCKS: a random block number below BLOCKS (> 0), from 48 bits of /dev/urandom
# (three 16-bit words: below 2^48, so r * 65536 + w never leaves the 64-bit arithmetic of
# busybox ash, which the byte sizes of disks over 2 GiB need already). 2^48 4 KiB blocks is an
# EiB; the modulo bias is below BLOCKS / 2^48.
random_block() {
  r=0
  for w in $(od -An -N6 -tu2 /dev/urandom); do r=$(( r * 65536 + w )); done
  echo $(( r % $1 ))
}

# verify_disk DEVICE BYTES MODE: reads back what the clean zeroed into the v_* counters (see
# read_back); returns 1 when a sample is not all zeros or could not be read whole.
# Both MiB that zero_ends wrote (lib-deploy.sh: the first, and the last whole one when the disk
# has more than one), and in mode erase VERIFY_BLOCKS random 4 KiB blocks of the whole disk.
verify_disk() {
  v_samples=0 v_bytes=0 v_nonzero=0 v_short=0
  # BLKFLSBUF: the kernel writes the device's dirty pages and drops its clean ones
  # (block/ioctl.c blkdev_flushbuf: sync_blockdev + invalidate_bdev), so a read that is not
  # O_DIRECT goes to the device too. Not a block device (the tests' regular files): ENOTTY.
  blockdev --flushbufs "$1" 2>/dev/null
  v_mib=$(( $2 / 1048576 ))
  v_want=$(( $2 < 1048576 ? $2 : 1048576 ))
  read_back "$1" 0 1048576
  [ "$v_mib" -gt 1 ] && read_back "$1" $(( v_mib - 1 )) 1048576
  v_blocks=$(( $2 / 4096 ))
  v_want=4096
  if [ "$3" = erase ] && [ "$v_blocks" -gt 0 ]; then
    i=0
    while [ "$i" -lt "$VERIFY_BLOCKS" ]; do
      read_back "$1" "$(random_block "$v_blocks")" 4096
      i=$((i + 1))
    done
  fi
  [ "$v_nonzero" -eq 0 ] && [ "$v_short" -eq 0 ]
}

# nvme_erase DEVICE: NVMe Format NVM with Secure Erase Settings (NVM Express Base Specification
# 2.0, Format NVM, CDW10 SES): a cryptographic erase when the controller supports one (Identify
# Controller FNA bit 2), else a user data erase. Unlike writing zeros through the block layer it
# reaches the blocks the drive keeps out of sight (over-provisioning, remapped sectors): a NIST
# SP 800-88 purge. Prints the method; fails without nvme-cli or when the drive refuses.
nvme_erase() {
  nvme=$(host_tool nvme) || return 1
  fna=$("$nvme" id-ctrl "$1" 2>/dev/null | sed -n 's/^fna *: *//p')
  case "$fna" in 0x[0-9a-fA-F]*|[0-9]*) ;; *) fna=0 ;; esac
  if [ $(( fna & 4 )) -ne 0 ]; then ses=2 nvme_method=nvme-crypto-erase; else ses=1 nvme_method=nvme-user-erase; fi
  say "clean: ${1}: NVMe format, secure erase setting ${ses}" >&2 # stdout is the method
  "$nvme" format "$1" --ses="$ses" --force >> "${RUN}/agent.log" 2>&1 || return 1
  echo "$nvme_method"
}

# zero_disk DEVICE BYTES: overwrites the whole device with zeros, printing the method:
# blkdiscard --zeroout (which the device may offload as WRITE ZEROES), else dd to the last byte.
zero_disk() {
  if blkdiscard=$(host_tool blkdiscard) && "$blkdiscard" --zeroout "$1" >> "${RUN}/agent.log" 2>&1; then
    echo zeroout
  elif dd if=/dev/zero of="$1" bs=1048576 count="$2" iflag=count_bytes conv=notrunc 2>> "${RUN}/agent.log"; then
    echo dd-zero
  else
    return 1
  fi
}

# clean_disk NAME MODE: prints the disk's report JSON object.
clean_disk() {
  dev="${DEV}/$1"
  bytes=$(disk_attr "$1" size)
  started=$(read_uptime)
  status=ok
  message=
  for part in "${SYSFS}/block/$1/$1"*; do
    [ -e "$part" ] || continue
    [ -e "${DEV}/${part##*/}" ] && wipe_signatures "${DEV}/${part##*/}"
  done
  wipe_signatures "$dev"
  method=metadata
  wiped=$(( bytes < 2097152 ? bytes : 2097152 ))
  if [ "$2" = erase ]; then
    # NVMe namespaces: the drive's own secure erase first; the others (or a drive that refuses
    # it) are overwritten with zeros.
    case "$1" in nvme*n*) method=$(nvme_erase "$dev") || method= ;; *) method= ;; esac
    if [ -z "$method" ] && ! method=$(zero_disk "$dev" "$bytes"); then
      method=metadata
      status=error
      message="erasing failed; see the log"
    fi
    [ "$status" = ok ] && wiped=$bytes
  fi
  zero_ends "$dev" "$bytes"
  blockdev --rereadpt "$dev" 2>/dev/null
  # After a format the spec leaves the content undefined (zeros, ones, or what decryption with a
  # new key makes of the old data): a drive that does not read back zeros is zeroed as well,
  # so the read-back can check the result.
  case "$method" in nvme-*)
    if ! verify_disk "$dev" "$bytes" "$2" && zero_disk "$dev" "$bytes" > /dev/null; then
      message="formatted, then zeroed: the drive did not read back zeros after the format"
    fi ;;
  esac
  # A sample with data fails the disk; a failed erase keeps its own message (the cause).
  if ! verify_disk "$dev" "$bytes" "$2" && [ "$status" = ok ]; then
    status=error
    if [ "$v_nonzero" -gt 0 ]; then
      message="verification found data in ${v_nonzero} of ${v_samples} samples"
    else
      message="verification could not read ${v_short} of ${v_samples} samples"
    fi
  fi
  finished=$(read_uptime)
  printf '{"name":%s,"serial":%s,"wwn":%s,"model":%s,"size":%s,"method":"%s","bytes_wiped":%s,"duration_seconds":%s,"verification":%s,"status":"%s","message":%s}' \
    "$(json_str "/dev/$1")" "$(json_str "$(disk_attr "$1" serial)")" "$(json_str "$(disk_wwn_id "$1")")" "$(json_str "$(disk_attr "$1" model)")" \
    "$bytes" "$method" "$wiped" "$(( finished - started ))" \
    "{\"samples\":${v_samples},\"bytes_read\":${v_bytes},\"nonzero_samples\":${v_nonzero}}" "$status" "$(json_str "$message")"
}

# disk_wwn_id NAME: the disk's WWN for the report, in the inventory's (udev ID_WWN) form. With
# the vendor extension when there is one: a 32-digit NAA type 6 id (SAN LUNs) shares its first
# 64 bits with the other LUNs of the array, which is why udev names /dev/disk/by-id/wwn-* after
# ID_WWN_WITH_EXTENSION; it equals the plain WWN otherwise.
disk_wwn_id() {
  disk_attr "$1" wwn_with_extension
}

# raid_member NAME: true when disk NAME or one of its partitions belongs to a software RAID: an
# md holder in sysfs (an assembled array), or an md superblock (`mdadm --examine --export` prints
# MD_UUID=; its exit status alone is 0 for any partition table, which it describes too).
raid_member() {
  mdadm=$(host_tool mdadm) || mdadm=
  for p in "${SYSFS}/block/$1" "${SYSFS}/block/$1/$1"*; do
    [ -e "$p" ] || continue
    for h in "$p"/holders/md*; do
      [ -e "$h" ] && return 0
    done
    [ -n "$mdadm" ] && [ -e "${DEV}/${p##*/}" ] && "$mdadm" --examine --export "${DEV}/${p##*/}" 2>/dev/null | grep -q '^MD_UUID=' && return 0
  done
  return 1
}

# kept_disk_json NAME: the report of a RAID member disk left alone.
# Nothing was written, so nothing is read back: verification null.
kept_disk_json() {
  printf '{"name":%s,"serial":%s,"wwn":%s,"model":%s,"size":%s,"method":"kept","bytes_wiped":0,"duration_seconds":0,"verification":null,"status":"ok","message":"software RAID member: kept"}' \
    "$(json_str "/dev/$1")" "$(json_str "$(disk_attr "$1" serial)")" "$(json_str "$(disk_wwn_id "$1")")" "$(json_str "$(disk_attr "$1" model)")" "$(disk_attr "$1" size)"
}

cmd_clean() { # ID
  mode=$(answer clean_mode)
  case "$mode" in ''|metadata) mode=metadata ;; erase) ;; *) report_result "$1" clean error "clean_mode must be metadata or erase, got ${mode}"; return ;; esac
  keep_raid=$(answer clean_keep_raid)
  say "clean: mode ${mode}$([ "$keep_raid" = 1 ] && echo ', software RAID kept')"
  if [ "$keep_raid" = 1 ]; then
    # The ramdisk has no udev to assemble arrays at boot; only on the real /dev (tests move DEV).
    if [ "$DEV" = /dev ] && mdadm=$(host_tool mdadm); then "$mdadm" --assemble --scan >> "${RUN}/agent.log" 2>&1; fi
  else
    stop_md_arrays
  fi
  disks=
  failed=0
  for d in $(list_disks); do
    if [ "$keep_raid" = 1 ] && raid_member "$d"; then
      say "clean: /dev/${d} is a software RAID member: kept"
      disks="${disks}${disks:+,}$(kept_disk_json "$d")"
      continue
    fi
    say "clean: /dev/${d}"
    one=$(clean_disk "$d" "$mode")
    case "$one" in *'"status":"error"'*) failed=$((failed + 1)) ;; esac
    disks="${disks}${disks:+,}${one}"
  done
  if [ "$keep_raid" = 1 ]; then
    for md in "${SYSFS}"/block/md*; do
      [ -e "$md" ] || continue
      say "clean: /dev/${md##*/} (software RAID)"
      one=$(clean_disk "${md##*/}" "$mode")
      case "$one" in *'"status":"error"'*) failed=$((failed + 1)) ;; esac
      disks="${disks}${disks:+,}${one}"
    done
  fi
  sync
  if [ "$failed" -gt 0 ]; then
    report_result "$1" clean error "${failed} disk(s) could not be erased" "{\"mode\":\"${mode}\",\"disks\":[${disks}]}"
  else
    say "clean: done"
    report_result "$1" clean ok "" "{\"mode\":\"${mode}\",\"disks\":[${disks}]}"
  fi
}

# part_name DISK N: the partition node name (vda1, nvme0n1p1).
part_name() {
  case "$1" in *[0-9]) echo "${1}p$2" ;; *) echo "$1$2" ;; esac
}

# wait_for_node PATH: waits up to 10 s for a device node to appear (devtmpfs, no udev).
wait_for_node() {
  i=0
  while [ ! -e "$1" ] && [ "$i" -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
  [ -e "$1" ]
}

cmd_raid() { # ID
  mdadm=$(host_tool mdadm) || { report_result "$1" raid error "mdadm is not in the ramdisk"; return; }
  sfdisk=$(host_tool sfdisk) || { report_result "$1" raid error "sfdisk is not in the ramdisk"; return; }
  count=$(answer raid_volumes)
  case "$count" in [12]) ;; *) report_result "$1" raid error "raid_volumes must be 1 or 2, got ${count:-nothing}"; return ;; esac
  volumes=
  v=0
  while [ "$v" -lt "$count" ]; do
    level=$(answer "raid_${v}_level")
    case "$level" in 0|1) mdlevel=$level ;; 1+0) mdlevel=10 ;; *) report_result "$1" raid error "volume ${v}: level must be 0, 1 or 1+0, got ${level}"; return ;; esac
    size_gib=$(answer "raid_${v}_size_gib")
    case "$size_gib" in ''|0) size= ;; *[!0-9]*) report_result "$1" raid error "volume ${v}: size_gib must be an integer"; return ;; *) size="size=$(( size_gib * 2097152 )), " ;; esac
    ndisks=$(answer "raid_${v}_disks")
    case "$ndisks" in ''|*[!0-9]*|0|1) report_result "$1" raid error "volume ${v}: at least 2 physical disks are needed"; return ;; esac
    members=
    d=0
    while [ "$d" -lt "$ndisks" ]; do
      if ! disk=$(pick_disk "raid_${v}_disk_${d}_" 2> "${RUN}/candidates"); then
        report_result "$1" raid error "volume ${v} disk ${d}: no disk matches ($(hints_text "raid_${v}_disk_${d}_")); candidates: $(cat "${RUN}/candidates")"
        return
      fi
      label=$("$sfdisk" -d "${DEV}/${disk}" 2>/dev/null | sed -n 's/^label: //p')
      if [ "$label" != gpt ]; then
        echo 'label: gpt' | "$sfdisk" -q "${DEV}/${disk}" >> "${RUN}/agent.log" 2>&1 || { report_result "$1" raid error "could not label /dev/${disk}"; return; }
      fi
      printf '%stype=A19D880F-05FC-4D3B-A006-743F0F84911E\n' "$size" | "$sfdisk" -q --append "${DEV}/${disk}" >> "${RUN}/agent.log" 2>&1 \
        || { report_result "$1" raid error "could not add a partition for volume ${v} on /dev/${disk}"; return; }
      n=$("$sfdisk" -d "${DEV}/${disk}" | grep -c 'start=')
      part=$(part_name "$disk" "$n")
      wait_for_node "${DEV}/${part}" || { report_result "$1" raid error "${DEV}/${part} did not appear"; return; }
      members="${members} ${DEV}/${part}"
      d=$((d + 1))
    done
    say "raid: creating /dev/md${v} (RAID ${level}) on${members}"
    # shellcheck disable=SC2086 # members is a list of device paths
    if ! "$mdadm" --create "${DEV}/md${v}" --run --metadata=1.2 --level="$mdlevel" --raid-devices="$ndisks" $members >> "${RUN}/agent.log" 2>&1; then
      report_result "$1" raid error "mdadm --create /dev/md${v} failed: $(tail -n 1 "${RUN}/agent.log")"
      return
    fi
    mjson=
    for m in $members; do mjson="${mjson}${mjson:+,}$(json_str "$m")"; done
    volumes="${volumes}${volumes:+,}{\"device\":\"/dev/md${v}\",\"level\":$(json_str "$level"),\"members\":[${mjson}],\"size\":$(( $(read_file "${SYSFS}/block/md${v}/size") * 512 ))}"
    v=$((v + 1))
  done
  say "raid: done"
  report_result "$1" raid ok "" "{\"volumes\":[${volumes}]}"
}
