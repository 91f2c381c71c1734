# shellcheck shell=sh
# Discovery mode of the rackside ramdisk agent (sourced by rackside-agent.sh; rackside's side is
# agent/discovery/, docs/discovery.md). Booted with rackside.mode=discovery and a discovery token
# bound to the boot MAC, the agent inspects the host, makes its BMC user in-band when booted with
# rackside.enroll_bmc=1 (lib-ipmi.sh), listens for LLDP meanwhile (lib-lldp.sh), and posts one
# report to /ramdisk/v1/discovery. Taken, the host powers off as the answer says (rackside powers it on through its BMC when it needs it).
# Refused (a 4xx: an expired token, discovery limits), it reboots after DISCOVERY_RETRY_SECONDS
# to network-boot again and get a fresh token. The report, which may hold the BMC password, lives
# only in ${RUN} (tmpfs) until it is sent, and is never logged.

DISCOVERY_RETRY_SECONDS=${RACKSIDE_DISCOVERY_RETRY_SECONDS:-60}
# discovery_answer KEY: the value of KEY=VALUE in rackside's answer to the report.
discovery_answer() {
  sed -n "s/^${1}=//p" "${RUN}/discovery.out" 2>/dev/null | head -n 1
}

# discover_main: one discovery (see the file comment). ACTION overrides the final power action (tests).
discover_main() {
  lldp_start
  say "discovery: collecting inventory"
  bmc=null
  if [ "$(config enroll_bmc)" = 1 ]; then
    say "discovery: making rackside's BMC user in-band"
    bmc=$(ipmi_enroll)
  fi
  umask 077
  inventory=$(inventory_json)
  lldp_wait
  printf '{"inventory":%s,"bmc":%s,"lldp":%s}\n' "$inventory" "$bmc" "$(lldp_json)" > "${RUN}/discovery.json"
  bmc=
  if report /ramdisk/v1/discovery "${RUN}/discovery.json" "${RUN}/discovery.out" discovery; then
    rm -f "${RUN}/discovery.json"
    say "discovery: recorded as $(discovery_answer name)"
    action=$(discovery_answer command)
    [ "$action" = poweroff ] || action=none
  else
    rm -f "${RUN}/discovery.json"
    say "discovery: rackside did not take the report ($(discovery_answer error)); network-booting again in ${DISCOVERY_RETRY_SECONDS} s"
    sleep "$DISCOVERY_RETRY_SECONDS"
    action=reboot
  fi
  case "${RACKSIDE_DISCOVERY_ACTION:-$action}" in
    poweroff|reboot) sync; "${RACKSIDE_DISCOVERY_ACTION:-$action}" -f ;;
    *) return 0 ;;
  esac
}
