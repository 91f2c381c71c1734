#!/bin/sh
# shellcheck source-path=SCRIPTDIR
# rackside ramdisk agent (POSIX sh on busybox). It brings up the boot NIC with DHCP, then
# heartbeats to rackside's boot HTTP server and runs the commands it answers with.
#
# Usage: rackside-agent.sh run        network up, then heartbeat forever (what /init runs); with
#                                     rackside.mode=discovery, one discovery report (lib-discovery.sh)
#        rackside-agent.sh once       one heartbeat and its command, no network setup (tests)
#        rackside-agent.sh inventory  print the inventory JSON on stdout
#
# Protocol (images/ramdisk-protocol.ts is the server's side of it):
#   POST ${url}/ramdisk/v1/heartbeat  JSON {version, boot_mac, ip, uptime_seconds, last_command_id}
#     answer: text lines KEY=VALUE: command=none|inspect|deploy|clean|raid|poweroff|reboot|report,
#     command_id=ID, interval_seconds=N and the command's parameters (image_url=…, hint_serial=…,
#     clean_mode=…, raid_0_level=…). Values are looked up by exact key, never evaluated.
#     The next heartbeat follows after interval_seconds, or after FOLLOW_UP_SECONDS when a
#     command just ran (the next one is usually ready by then).
#     command=report asks for the saved inventory or result of command_id again: rackside got
#     a heartbeat naming that command as done without ever getting its report.
#   POST ${url}/ramdisk/v1/inventory  JSON {command_id, inventory: IPA-compatible inventory}
#   POST ${url}/ramdisk/v1/result     JSON {command_id, command, status: ok|error, message,
#     details: command-specific JSON or null, log: the last lines of the agent log}
#   Every request carries "Authorization: Bearer ${token}". busybox wget's -T option
#   segfaulted in guests, so every wget (and curl) runs under busybox `timeout` instead.
#   An https:// rackside.url (a host booted by UEFI HTTPS, docs/https-boot.md) is called with
#   curl, verifying rackside's certificate against ${ETC}/ca.pem (busybox wget has no TLS):
#   never `-k`, never back to http://. Without curl or the CA the agent says so and calls nothing.
#
# Configuration: rackside.url= and rackside.token= on the kernel command line, else the files
# /etc/rackside/url and /etc/rackside/token from the per-host overlay. For tests the roots can be
# moved: RACKSIDE_ETC, RACKSIDE_SYSFS, RACKSIDE_PROCFS, RACKSIDE_RUN, RACKSIDE_DEV (where the
# disk nodes are; regular files stand in for disks in the unit tests).

ETC=${RACKSIDE_ETC:-/etc/rackside}
SYSFS=${RACKSIDE_SYSFS:-/sys}
PROCFS=${RACKSIDE_PROCFS:-/proc}
RUN=${RACKSIDE_RUN:-/run/rackside}
DEV=${RACKSIDE_DEV:-/dev}
# The CA rackside's boot HTTPS certificate is verified against (in the unified image's initrd).
CA=${ETC}/ca.pem
LIB=${0%/*}
HTTP_TIMEOUT_SECONDS=30
FOLLOW_UP_SECONDS=2
LOG_TAIL_LINES=40
# A report (inventory, result) is what finishes an operation on rackside's side: it is posted
# again until rackside takes it, for up to REPORT_ATTEMPTS x REPORT_RETRY_SECONDS (an agent
# restarting, boot HTTP briefly unreachable). Tests shorten the wait.
REPORT_ATTEMPTS=${RACKSIDE_REPORT_ATTEMPTS:-60}
REPORT_RETRY_SECONDS=${RACKSIDE_REPORT_RETRY_SECONDS:-5}

say() {
  echo "rackside-ramdisk: $*"
  echo "$*" >> "${RUN}/agent.log" 2>/dev/null
}

# cmdline_value KEY: prints the value of KEY=value on the kernel command line.
cmdline_value() {
  line=
  read -r line < "${PROCFS}/cmdline" 2>/dev/null
  set -f
  for arg in $line; do
    case "$arg" in
      "$1"=*) set +f; printf '%s\n' "${arg#*=}"; return 0 ;;
    esac
  done
  set +f
  return 1
}

# config KEY: kernel command line rackside.KEY=, else the overlay file ETC/KEY.
config() {
  cmdline_value "rackside.$1" && return 0
  value=
  [ -r "${ETC}/$1" ] && read -r value < "${ETC}/$1"
  [ -n "$value" ] && printf '%s\n' "$value"
}

# read_file PATH: prints the first line of PATH with surrounding blanks removed, or nothing.
read_file() {
  value=
  [ -r "$1" ] && read -r value < "$1" 2>/dev/null
  printf '%s' "$value" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'
}

# json_str VALUE: a JSON string literal (RFC 8259 §7), or null when VALUE is empty.
json_str() {
  if [ -z "$1" ]; then
    printf 'null'
    return
  fi
  printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}

# json_num VALUE: VALUE when it is a decimal number, else null.
json_num() {
  case "$1" in
    ''|*[!0-9.]*|*.*.*) printf 'null' ;;
    *) printf '%s' "$1" ;;
  esac
}

json_bool() {
  case "$1" in
    1|true) printf 'true' ;;
    0|false) printf 'false' ;;
    *) printf 'null' ;;
  esac
}

cpu_json() {
  model=$(sed -n 's/^model name[[:space:]]*: //p' "${PROCFS}/cpuinfo" | head -n 1)
  mhz=$(sed -n 's/^cpu MHz[[:space:]]*: //p' "${PROCFS}/cpuinfo" | head -n 1)
  count=$(grep -c '^processor' "${PROCFS}/cpuinfo")
  flags=$(sed -n 's/^flags[[:space:]]*: //p' "${PROCFS}/cpuinfo" | head -n 1)
  printf '{"model_name":%s,"frequency":%s,"count":%s,"architecture":%s,"flags":[' \
    "$(json_str "$model")" "$(json_str "$mhz")" "$(json_num "$count")" "$(json_str "$(uname -m)")"
  sep=
  for flag in $flags; do
    printf '%s%s' "$sep" "$(json_str "$flag")"
    sep=,
  done
  printf ']}'
}

memory_json() {
  total_kb=$(sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\) kB/\1/p' "${PROCFS}/meminfo")
  physical_mb=
  block_hex=$(read_file "${SYSFS}/devices/system/memory/block_size_bytes")
  if [ -n "$block_hex" ]; then
    blocks=0
    for state in "${SYSFS}"/devices/system/memory/memory*/state; do
      [ "$(read_file "$state")" = online ] && blocks=$((blocks + 1))
    done
    physical_mb=$(( blocks * 0x${block_hex} / 1048576 ))
  fi
  [ -n "$physical_mb" ] && [ "$physical_mb" -gt 0 ] || physical_mb=$(( ${total_kb:-0} / 1024 ))
  printf '{"total":%s,"physical_mb":%s}' "$(json_num "$(( ${total_kb:-0} * 1024 ))")" "$(json_num "$physical_mb")"
}

# disk_json NAME: one disk in the IPA inventory shape.
disk_json() {
  printf '{"name":%s,"size":%s,"rotational":%s,"model":%s,"vendor":%s,"serial":%s,"wwn":%s,"wwn_with_extension":%s,"wwn_vendor_extension":%s,"hctl":%s,"by_path":%s}' \
    "$(json_str "/dev/$1")" "$(json_num "$(disk_attr "$1" size)")" "$(json_bool "$(read_file "${SYSFS}/block/$1/queue/rotational")")" \
    "$(json_str "$(disk_attr "$1" model)")" "$(json_str "$(disk_attr "$1" vendor)")" "$(json_str "$(disk_attr "$1" serial)")" \
    "$(json_str "$(disk_attr "$1" wwn)")" "$(json_str "$(disk_attr "$1" wwn_with_extension)")" \
    "$(json_str "$(disk_attr "$1" wwn_vendor_extension)")" "$(json_str "$(disk_attr "$1" hctl)")" "$(json_str "$(disk_attr "$1" by_path)")"
}

disks_json() {
  sep=
  for name in $(list_disks); do
    printf '%s%s' "$sep" "$(disk_json "$name")"
    sep=,
  done
}

# boot_mac: the MAC iPXE passed as BOOTIF=01-aa-bb-cc-dd-ee-ff, lowercased with colons.
boot_mac() {
  v=$(cmdline_value BOOTIF) || return 1
  printf '%s' "${v#01-}" | tr 'A-F-' 'a-f:'
}

nics_json() {
  bootmac=$(boot_mac)
  sep=
  for nic in "${SYSFS}"/class/net/*; do
    [ -e "${nic}/device" ] || continue # skip lo, bridges, VLANs: only NICs with a device
    name=${nic##*/}
    mac=$(read_file "${nic}/address")
    speed=$(read_file "${nic}/speed" 2>/dev/null)
    case "$speed" in ''|-*) speed= ;; esac
    driver=$(readlink "${nic}/device/driver" 2>/dev/null)
    pci=$(readlink -f "${nic}/device" 2>/dev/null)
    case "${pci##*/}" in virtio*) pci=${pci%/*} ;; esac # virtio NICs sit below their PCI function
    ipv4=$(ip -4 -o addr show dev "$name" 2>/dev/null | sed -n 's/.* inet \([0-9.]*\).*/\1/p' | head -n 1)
    ipv6=$(ip -6 -o addr show dev "$name" scope global 2>/dev/null | sed -n 's/.* inet6 \([0-9a-f:]*\).*/\1/p' | head -n 1)
    pxe=false
    [ -n "$bootmac" ] && [ "$bootmac" = "$mac" ] && pxe=true
    printf '%s{"name":%s,"mac_address":%s,"ipv4_address":%s,"ipv6_address":%s,"has_carrier":%s,"speed_mbps":%s,"driver":%s,"vendor":%s,"product":%s,"pci_address":%s,"pxe_enabled":%s}' \
      "$sep" "$(json_str "$name")" "$(json_str "$mac")" "$(json_str "$ipv4")" "$(json_str "$ipv6")" \
      "$(json_bool "$(read_file "${nic}/carrier" 2>/dev/null)")" "$(json_num "$speed")" "$(json_str "${driver##*/}")" \
      "$(json_str "$(read_file "${nic}/device/vendor")")" "$(json_str "$(read_file "${nic}/device/device")")" \
      "$(json_str "${pci##*/}")" "$pxe"
    sep=,
  done
}

# host_tool NAME: the copied host tool's path. busybox ash runs its own applet for a bare name
# even when a real binary of that name comes first in PATH (Debian's busybox-static is built
# with FEATURE_SH_STANDALONE), so util-linux tools such as blkdiscard are called by path.
host_tool() {
  for dir in /usr/sbin /usr/bin /sbin /bin; do
    if [ -f "${dir}/$1" ] && [ ! -L "${dir}/$1" ]; then
      echo "${dir}/$1"
      return 0
    fi
  done
  return 1
}

# dmi FIELD DMIDECODE_KEYWORD: sysfs DMI first, dmidecode when sysfs has nothing.
dmi() {
  v=$(read_file "${SYSFS}/class/dmi/id/$1")
  if [ -z "$v" ] && dmidecode=$(host_tool dmidecode); then
    v=$("$dmidecode" -s "$2" 2>/dev/null | grep -v '^#' | head -n 1)
  fi
  printf '%s' "$v"
}

system_json() {
  printf '{"manufacturer":%s,"product_name":%s,"serial_number":%s,"firmware":{"vendor":%s,"version":%s,"build_date":%s}}' \
    "$(json_str "$(dmi sys_vendor system-manufacturer)")" "$(json_str "$(dmi product_name system-product-name)")" \
    "$(json_str "$(dmi product_serial system-serial-number)")" "$(json_str "$(dmi bios_vendor bios-vendor)")" \
    "$(json_str "$(dmi bios_version bios-version)")" "$(json_str "$(dmi bios_date bios-release-date)")"
}

# secure_boot_json: true/false from the SecureBoot EFI variable (efivarfs file: 4 attribute bytes,
# then the UINT8; UEFI 2.10 §3.3), null without one (BIOS boot, firmware without Secure Boot).
secure_boot_json() {
  sbvar="${SYSFS}/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
  if [ "$SYSFS" = /sys ] && [ -d "${sbvar%/*}" ] && [ ! -e "$sbvar" ]; then mount -t efivarfs efivarfs "${sbvar%/*}" 2>/dev/null; fi
  case "$(od -An -tu1 -j4 -N1 "$sbvar" 2>/dev/null | tr -d ' \n')" in
    1) printf true ;;
    0) printf false ;;
    *) printf null ;;
  esac
}

inventory_json() {
  mode=bios
  [ -d "${SYSFS}/firmware/efi" ] && mode=uefi
  printf '{"cpu":%s,"memory":%s,"disks":[%s],"interfaces":[%s],"system_vendor":%s,"boot":{"current_boot_mode":"%s","pxe_interface":%s,"secure_boot":%s},"hostname":%s}\n' \
    "$(cpu_json)" "$(memory_json)" "$(disks_json)" "$(nics_json)" "$(system_json)" "$mode" \
    "$(json_str "$(boot_mac)")" "$(secure_boot_json)" "$(json_str "$(hostname 2>/dev/null)")"
}

# tls_ready: true for an http:// URL; for https:// true when curl and the CA are there, else
# says what is missing (the agent then calls nothing: no clear-text fallback).
tls_ready() {
  case "$URL" in https://*) ;; *) return 0 ;; esac
  if ! command -v curl >/dev/null 2>&1; then
    say "rackside.url is ${URL} but this ramdisk has no curl (busybox wget has no TLS): rebuild it with curl installed; not calling rackside"
    return 1
  fi
  if [ ! -s "$CA" ]; then
    say "rackside.url is ${URL} but ${CA} is missing: boot the host's unified image (it carries the CA); not calling rackside"
    return 1
  fi
}

# post PATH BODY_FILE OUT_FILE: POST BODY_FILE as JSON to ${URL}${PATH}; the answer goes to
# OUT_FILE, wget's or curl's complaint to stderr and ${RUN}/post.err.
post() {
  rc=0
  case "$URL" in
    https://*) timeout "$HTTP_TIMEOUT_SECONDS" curl -sS --fail --proto =https --cacert "$CA" -o "$3" \
      -H "Authorization: Bearer ${TOKEN}" -H 'Content-Type: application/json' \
      --data-binary "@$2" "${URL}$1" 2> "${RUN}/post.err" || rc=$? ;;
    *) timeout "$HTTP_TIMEOUT_SECONDS" wget -q -O "$3" \
      --header "Authorization: Bearer ${TOKEN}" --header 'Content-Type: application/json' \
      --post-file "$2" "${URL}$1" 2> "${RUN}/post.err" || rc=$? ;;
  esac
  cat "${RUN}/post.err" >&2
  return "$rc"
}

# report PATH BODY_FILE OUT_FILE WHAT: post a report until rackside takes it. Without the report
# rackside cannot tell the operation finished and waits for its timeout, so a refused connection
# or no answer (an agent restarting) is retried; a refusal (HTTP 4xx: a stale token, an
# unreadable report) is final. A report that arrives twice is harmless: rackside matches it to
# its command id and takes it once.
report() {
  n=1
  while ! post "$1" "$2" "$3"; do
    # wget: "server returned error: HTTP/1.1 401"; curl --fail: "returned error: 401".
    grep -qE 'server returned error: HTTP/1\.[01] 4|returned error: 4[0-9][0-9]' "${RUN}/post.err" 2>/dev/null && return 1
    [ "$n" -ge "$REPORT_ATTEMPTS" ] && return 1
    n=$((n + 1))
    say "${4}: ${URL} did not take the report; again in ${REPORT_RETRY_SECONDS} s (attempt ${n} of ${REPORT_ATTEMPTS})"
    sleep "$REPORT_RETRY_SECONDS"
  done
}

# log_json: the last LOG_TAIL_LINES lines of the agent log as a JSON array of strings.
log_json() {
  printf '['
  sep=
  tail -n "$LOG_TAIL_LINES" "${RUN}/agent.log" 2>/dev/null | while IFS= read -r line; do
    printf '%s%s' "$sep" "$(json_str "$line")"
    sep=,
  done
  printf ']'
}

# answer KEY: the value of KEY=VALUE in the last heartbeat answer (exact key; first one wins).
answer() {
  while IFS= read -r line; do
    case "$line" in "$1="*) printf '%s' "${line#*=}"; return 0 ;; esac
  done < "${RUN}/command.txt"
  return 1
}

# read_uptime: whole seconds since boot.
read_uptime() {
  up=
  read -r up _ < "${PROCFS}/uptime"
  echo "${up%%.*}"
}

report_result() { # ID COMMAND STATUS MESSAGE [DETAILS_JSON]
  printf '{"command_id":%s,"command":%s,"status":%s,"message":%s,"details":%s,"log":%s}\n' \
    "$(json_str "$1")" "$(json_str "$2")" "$(json_str "$3")" "$(json_str "$4")" "${5:-null}" "$(log_json)" > "${RUN}/result.json"
  report /ramdisk/v1/result "${RUN}/result.json" "${RUN}/result.out" "$2" || say "could not report the result of ${2}"
}

# resend_report ID: post the saved inventory or result of command ID again (rackside never got
# it: it was down for longer than report() kept trying). Without a saved one (the ramdisk
# restarted), an error result says so: the operation ends now instead of at its timeout.
resend_report() {
  for saved in inventory result; do
    if grep -qF "{\"command_id\":$(json_str "$1")," "${RUN}/${saved}.json" 2>/dev/null; then
      say "report: sending the ${saved} of ${1} again, as asked"
      report "/ramdisk/v1/${saved}" "${RUN}/${saved}.json" "${RUN}/${saved}.out" report || say "could not send the ${saved} of ${1} again"
      return 0
    fi
  done
  say "report: nothing saved for ${1}"
  report_result "$1" report error "the ramdisk has no saved report of command ${1} (did it restart?)"
}

run_command() { # COMMAND ID
  case "$1" in
    ''|none) return 0 ;;
    inspect)
      lldp_start
      say "inspect: collecting inventory"
      inventory=$(inventory_json)
      lldp_wait
      printf '{"command_id":%s,"inventory":%s,"lldp":%s}\n' "$(json_str "$2")" "$inventory" "$(lldp_json)" > "${RUN}/inventory.json"
      inventory=
      if report /ramdisk/v1/inventory "${RUN}/inventory.json" "${RUN}/inventory.out" inspect; then
        say "inspect: inventory sent"
      else
        say "inspect: sending the inventory failed"
      fi
      ;;
    deploy) cmd_deploy "$2" ;;
    clean) cmd_clean "$2" ;;
    raid) cmd_raid "$2" ;;
    report) resend_report "$2" ;;
    poweroff|reboot)
      say "${1}: as commanded"
      report_result "$2" "$1" ok ""
      sync
      "$1" -f
      ;;
    *)
      say "unknown command ${1}"
      report_result "$2" "$1" error "unknown command"
      ;;
  esac
  LAST_ID=$2
}

heartbeat() {
  uptime=
  read -r uptime _ < "${PROCFS}/uptime"
  printf '{"version":%s,"boot_mac":%s,"ip":%s,"uptime_seconds":%s,"last_command_id":%s}\n' \
    "$(json_str "$(read_file "${ETC}/version")")" "$(json_str "$(boot_mac)")" "$(json_str "$LEASE_IP")" \
    "$(json_num "${uptime%%.*}")" "$(json_str "$LAST_ID")" > "${RUN}/heartbeat.json"
  if ! post /ramdisk/v1/heartbeat "${RUN}/heartbeat.json" "${RUN}/heartbeat.out"; then
    say "heartbeat to ${URL} failed"
    return 1
  fi
  cp "${RUN}/heartbeat.out" "${RUN}/command.txt"
  command=$(answer command) || command=none
  command_id=$(answer command_id)
  value=$(answer interval_seconds)
  case "$value" in ''|*[!0-9]*) ;; *) INTERVAL=$value ;; esac
  run_command "$command" "$command_id"
  RAN=$command
}

# dhcp4_on NAME MAC: a DHCPv4 lease on NAME (udhcpc.script writes ${RUN}/lease).
dhcp4_on() {
  ip link set dev "$1" up
  say "network: DHCP on $1 ($2)"
  udhcpc -i "$1" -f -q -n -t 5 -T 2 -s /usr/lib/rackside/udhcpc.script >/dev/null 2>&1 || return 1
  read -r _ LEASE_IP < "${RUN}/lease"
  say "network: $1 has ${LEASE_IP}"
}

network_up() {
  # An IPv6 literal in rackside.url: the host booted over IPv6 (lib-net6.sh).
  case "$URL" in *://\[*) network_up6; return ;; esac
  each_nic_boot_first dhcp4_on && return 0
  say "network: no DHCP lease on any interface"
  return 1
}

# shellcheck source=lib-disks.sh
. "${LIB}/lib-disks.sh"
# shellcheck source=lib-deploy.sh
. "${LIB}/lib-deploy.sh"
# shellcheck source=lib-clean.sh
. "${LIB}/lib-clean.sh"
# shellcheck source=lib-ipmi.sh
. "${LIB}/lib-ipmi.sh"
# shellcheck source=lib-lldp.sh
. "${LIB}/lib-lldp.sh"
# shellcheck source=lib-discovery.sh
. "${LIB}/lib-discovery.sh"
# shellcheck source=lib-nics.sh
. "${LIB}/lib-nics.sh"
# shellcheck source=lib-net6.sh
. "${LIB}/lib-net6.sh"

main() {
  mkdir -p "$RUN"
  URL=$(config url)
  TOKEN=$(config token)
  INTERVAL=10
  LAST_ID=
  LEASE_IP=
  # An https:// URL without curl or the CA: the agent stops before the network comes up; init
  # restarts it every 10 s and the console repeats why.
  [ "${1:-run}" = inventory ] || tls_ready || return 1
  case "${1:-run}" in
    inventory) inventory_json; return 0 ;;
    once) ;;
    run) until network_up; do sleep 5; done ;;
    *) echo "usage: $0 run|once|inventory" >&2; return 2 ;;
  esac
  if [ -z "$URL" ] || [ -z "$TOKEN" ]; then
    say "no rackside.url/rackside.token on the kernel command line or in ${ETC}; nothing to report to"
    return 1
  fi
  say "agent: reporting to ${URL}"
  # Booted for discovery (an unknown MAC, docs/discovery.md): one report instead of heartbeats.
  if [ "$(config mode)" = discovery ]; then
    discover_main
    return
  fi
  if [ "$1" = once ]; then
    heartbeat
    return
  fi
  while :; do
    RAN=
    heartbeat
    # Right after a command the server usually has the next one ready (fast track: deploy after
    # clean), so ask again soon instead of a whole interval later.
    case "$RAN" in
      ''|none) sleep "$INTERVAL" ;;
      *) sleep "$FOLLOW_UP_SECONDS" ;;
    esac
  done
}

main "$@"
