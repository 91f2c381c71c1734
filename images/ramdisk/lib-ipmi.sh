# shellcheck shell=sh
# In-band BMC enlistment for the rackside ramdisk agent (sourced by rackside-agent.sh; the
# server's side is agent/discovery/report.ts). Over the host's own IPMI system interface
# (/dev/ipmi0 from the ipmi_si and ipmi_devintf modules) with ipmitool's `open` interface:
#   1. find the BMC's LAN channel among 1..11 (IPMI 2.0 §6.3: channel medium 802.3 LAN) and read
#      its IPv4 address, MAC and IPv6 addresses; 0.0.0.0 and link-local addresses do not count;
#   2. pick a user slot: the one already named ${IPMI_USER_NAME} (a host discovered again), else
#      the first empty slot above 1 (slot 1 is the anonymous user, IPMI 2.0 §13.23);
#   3. set the name, a random 16-character password stored as a 16-byte password (§22.30: a
#      BMC may keep 20, but ipmi_sim and older BMCs compare only 16, and a 20-byte key then fails
#      RAKP), ADMINISTRATOR privilege with IPMI messaging on that LAN channel (§22.26), enable it;
#   4. keep cipher suites 3 and 17 (rackside's RMCP+ suites) at ADMINISTRATOR in the channel's
#      cipher suite privilege levels (§23.2 parameter 24).
# ipmi_enroll prints the report's "bmc" JSON object on stdout (its log lines go to stderr). The
# password never goes to the log, and every message taken from ipmitool has it removed.
# Test hooks: RACKSIDE_IPMITOOL (the client to run), RACKSIDE_IPMI_PASSWORD (a fixed password).

IPMI_USER_NAME=rackside
IPMI_PASSWORD_LENGTH=16
# Cipher suites rackside's IPMI driver negotiates (drivers/ipmi): 17 (HMAC-SHA256/AES), 3 (HMAC-SHA1/AES).
IPMI_KEEP_SUITES="3 17"

# ipmi_tool ARGS...: ipmitool over the system interface; stderr joins stdout.
ipmi_tool() {
  "$IPMITOOL" -I open "$@" 2>&1
}

# ipmi_json_error CHANNEL MESSAGE
ipmi_json_error() {
  msg=$(printf '%s' "$2" | tr '\n' ' ')
  [ -n "$IPMI_PASSWORD" ] && msg=$(printf '%s' "$msg" | sed "s/${IPMI_PASSWORD}/[password]/g")
  if [ -n "$1" ]; then
    printf '{"status":"error","channel":%s,"message":%s}' "$1" "$(json_str "$msg")"
  else
    printf '{"status":"error","message":%s}' "$(json_str "$msg")"
  fi
}

# ipmi_field TEXT KEY: the value of "KEY   : value" in ipmitool's listing.
ipmi_field() {
  printf '%s\n' "$1" | sed -n "s/^${2}[[:space:]]*:[[:space:]]*//p" | head -n 1 | sed 's/[[:space:]]*$//'
}

# ipmi_usable_v4 ADDRESS: true for an address rackside can reach (not unset or link-local).
ipmi_usable_v4() {
  case "$1" in ''|0.0.0.0|169.254.*) return 1 ;; esac
  return 0
}

# ipmi_v6_addresses CHANNEL: the channel's global IPv6 addresses, one a line (lan6 is optional).
ipmi_v6_addresses() {
  ipmi_tool lan6 print "$1" | sed -n 's/^[[:space:]]*Address:[[:space:]]*\([0-9a-fA-F:]*\)\/.*/\1/p' |
    grep -v -i -e '^fe[89ab]' -e '^::$' -e '^$' | head -n 16
}

# ipmi_password: IPMI_PASSWORD_LENGTH random letters and digits.
ipmi_password() {
  if [ -n "$RACKSIDE_IPMI_PASSWORD" ]; then
    printf '%s' "$RACKSIDE_IPMI_PASSWORD"
    return
  fi
  pw=
  while [ "${#pw}" -lt "$IPMI_PASSWORD_LENGTH" ]; do
    pw="${pw}$(head -c 256 /dev/urandom | tr -dc 'A-Za-z0-9')"
  done
  printf '%s' "$pw" | head -c "$IPMI_PASSWORD_LENGTH"
}

# ipmi_find_channel: sets CHANNEL, BMC_V4, BMC_MAC, BMC_V6 for the first LAN channel with a
# usable address (else the first LAN channel, its address as the BMC has it). False when none.
ipmi_find_channel() {
  CHANNEL=
  for ch in 1 2 3 4 5 6 7 8 9 10 11; do
    info=$(ipmi_tool channel info "$ch") || continue
    printf '%s\n' "$info" | grep -q 'Channel Medium Type[[:space:]]*: 802.3 LAN' || continue
    lan=$(ipmi_tool lan print "$ch") || continue
    v4=$(ipmi_field "$lan" 'IP Address')
    v6=$(ipmi_v6_addresses "$ch")
    if [ -z "$CHANNEL" ] || { ! ipmi_usable_v4 "$BMC_V4" && [ -z "$BMC_V6" ]; }; then
      CHANNEL=$ch BMC_V4=${v4:-0.0.0.0} BMC_MAC=$(ipmi_field "$lan" 'MAC Address') BMC_V6=$v6 BMC_LAN=$lan
    fi
    if ipmi_usable_v4 "$v4" || [ -n "$v6" ]; then return 0; fi
  done
  [ -n "$CHANNEL" ]
}

# ipmi_user_slot CHANNEL: the slot named IPMI_USER_NAME, else the first empty one above 1.
ipmi_user_slot() {
  list=$(ipmi_tool user list "$1") || return 1
  # ipmitool prints "%-4d%-17s…": the id in columns 1-4, the name in 5-21.
  own=$(printf '%s\n' "$list" | awk -v n="$IPMI_USER_NAME" 'NR > 1 { id = substr($0, 1, 4) + 0; name = substr($0, 5, 17); gsub(/ +$/, "", name); if (name == n) { print id; exit } }')
  if [ -n "$own" ]; then echo "$own"; return 0; fi
  printf '%s\n' "$list" | awk 'NR > 1 { id = substr($0, 1, 4) + 0; name = substr($0, 5, 17); gsub(/ +$/, "", name); if (id > 1 && name == "") { print id; exit } }'
}

# ipmi_keep_suites CHANNEL: raises suites IPMI_KEEP_SUITES to ADMINISTRATOR in the cipher suite
# privilege levels when the BMC lists them lower (or disabled, "X").
ipmi_keep_suites() {
  suites=$(ipmi_field "$BMC_LAN" 'RMCP+ Cipher Suites')
  privs=$(ipmi_field "$BMC_LAN" 'Cipher Suite Priv Max')
  [ -n "$suites" ] && [ -n "$privs" ] || return 0
  wanted=$(awk -v s="$suites" -v p="$privs" -v keep="$IPMI_KEEP_SUITES" 'BEGIN {
    n = split(s, ids, ","); split(keep, k, " "); out = p
    for (i = 1; i <= n; i++) for (j in k) if (ids[i] + 0 == k[j] + 0 && substr(out, i, 1) != "a") out = substr(out, 1, i - 1) "a" substr(out, i + 1)
    print out }')
  [ "$wanted" = "$privs" ] && return 0
  ipmi_tool lan set "$1" cipher_privs "$wanted" >/dev/null
}

# ipmi_enroll: the report's "bmc" object (see the file comment).
ipmi_enroll() {
  IPMI_PASSWORD=
  IPMITOOL=${RACKSIDE_IPMITOOL:-$(host_tool ipmitool)}
  if [ -z "$IPMITOOL" ]; then
    printf '{"status":"none","message":"ipmitool is not in this ramdisk"}'
    return 0
  fi
  if [ -z "$RACKSIDE_IPMITOOL" ]; then
    n=0
    while [ ! -e "${DEV}/ipmi0" ] && [ ! -e "${DEV}/ipmi/0" ] && [ "$n" -lt 5 ]; do sleep 1; n=$((n + 1)); done
    if [ ! -e "${DEV}/ipmi0" ] && [ ! -e "${DEV}/ipmi/0" ]; then
      printf '{"status":"none","message":"no IPMI system interface (/dev/ipmi0)"}'
      return 0
    fi
  fi
  if ! ipmi_find_channel; then
    ipmi_json_error '' 'the BMC has no LAN channel (1..11)'
    return 0
  fi
  slot=$(ipmi_user_slot "$CHANNEL")
  if [ -z "$slot" ]; then
    ipmi_json_error "$CHANNEL" 'no free user slot on the BMC'
    return 0
  fi
  IPMI_PASSWORD=$(ipmi_password)
  for step in name password access enable suites; do
    case "$step" in
      name) out=$(ipmi_tool user set name "$slot" "$IPMI_USER_NAME") ;;
      password) out=$(ipmi_tool user set password "$slot" "$IPMI_PASSWORD" 16) ;;
      access) out=$(ipmi_tool channel setaccess "$CHANNEL" "$slot" callin=on ipmi=on link=on privilege=4) ;;
      enable) out=$(ipmi_tool user enable "$slot") ;;
      suites) out=$(ipmi_keep_suites "$CHANNEL") ;;
    esac || {
      ipmi_json_error "$CHANNEL" "user ${slot} ${step}: ${out}"
      return 0
    }
  done
  say "discovery: BMC user ${IPMI_USER_NAME} (slot ${slot}) made on LAN channel ${CHANNEL}, BMC at ${BMC_V4}" >&2
  v6json=
  for a in $BMC_V6; do v6json="${v6json}${v6json:+,}$(json_str "$a")"; done
  printf '{"status":"ok","channel":%s,"address":%s,"mac":%s,"ipv6":[%s],"user_id":%s,"username":%s,"password":%s}' \
    "$CHANNEL" "$(json_str "$BMC_V4")" "$(json_str "$BMC_MAC")" "$v6json" "$slot" "$(json_str "$IPMI_USER_NAME")" "$(json_str "$IPMI_PASSWORD")"
}
