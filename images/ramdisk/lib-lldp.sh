# shellcheck shell=sh
# LLDP for the rackside ramdisk agent (sourced by rackside-agent.sh): discovery and inspection
# listen for the switch's LLDP frames on every NIC while they collect the inventory, and send the
# neighbours heard as the report's `lldp` list (agent/provisioner/local/lldp.ts decodes it).

# How long to listen for LLDP (IEEE 802.1AB: switches send every 30 s by default); kernel
# parameter rackside.lldp_seconds, 0 for not at all.
LLDP_SECONDS_DEFAULT=30

# lldp_start: listens for LLDP on every NIC in the background (rackside-lldp, built from
# images/helpers/rackside-lldp.c, which brings a NIC that is down up; test hook RACKSIDE_LLDP),
# while the inventory is collected.
lldp_start() {
  LLDP_PID=
  seconds=$(config lldp_seconds)
  seconds=${seconds:-$LLDP_SECONDS_DEFAULT}
  tool=${RACKSIDE_LLDP:-$(host_tool rackside-lldp)}
  [ -n "$tool" ] && [ "$seconds" != 0 ] || return 0
  nics=
  for nic in "${SYSFS}"/class/net/*; do
    [ -e "${nic}/device" ] || continue # NICs only, as in the inventory
    nics="${nics} ${nic##*/}"
  done
  [ -n "$nics" ] || return 0
  say "lldp: listening on${nics} (at most ${seconds} s)"
  # shellcheck disable=SC2086 # one argument per NIC
  "$tool" "$seconds" $nics > "${RUN}/lldp.out" 2>/dev/null &
  LLDP_PID=$!
}

# lldp_wait: waits for the listener (in this shell: a $(…) subshell cannot wait for it).
lldp_wait() {
  [ -n "$LLDP_PID" ] && wait "$LLDP_PID"
  LLDP_PID=
}

# lldp_json: the neighbours lldp_start heard (one JSON object a line) as a JSON list.
lldp_json() {
  [ -f "${RUN}/lldp.out" ] || { printf '[]'; return 0; }
  awk 'BEGIN { printf "[" } /^\{.*\}$/ { printf "%s%s", (n++ ? "," : ""), $0 } END { printf "]" }' "${RUN}/lldp.out"
  rm -f "${RUN}/lldp.out"
}
