# shellcheck shell=sh
# IPv6 on the boot NIC, sourced by rackside-agent.sh (docs/ipv6.md). Used when rackside.url names
# an IPv6 literal (`http://[fd00:1::1]:8081`): the host booted over IPv6 and calls back over it.
# The kernel configures SLAAC addresses by itself from router advertisements carrying the A flag
# (RFC 4862); a DHCPv6 address (IA_NA) comes from rackside-dhcp6 (images/helpers/rackside-dhcp6.c:
# Debian's busybox has no udhcpc6), is added with `ip -6 addr add` and used once duplicate
# address detection (RFC 4862 §5.4) passed. Either kind of address will do; DHCPv6's is preferred.
# RACKSIDE_DHCP6 names the helper and RACKSIDE_RESOLV_CONF the resolver file (tests);
# NET6_WAIT_SECONDS bounds each wait.
NET6_WAIT_SECONDS=${NET6_WAIT_SECONDS:-10}
RESOLV_CONF=${RACKSIDE_RESOLV_CONF:-/etc/resolv.conf}

# net6_ready IFACE [ADDRESS]: prints the first global IPv6 address of IFACE (or ADDRESS itself)
# once it is neither tentative nor failed in duplicate address detection.
net6_ready() {
  ip -6 -o addr show dev "$1" scope global 2>/dev/null | while read -r _ _ _ cidr rest; do
    case " $rest " in *" tentative "*|*" dadfailed "*) continue ;; esac
    [ -n "$2" ] && [ "${cidr%/*}" != "$2" ] && continue
    printf '%s\n' "${cidr%/*}"
    break
  done
}

# net6_poll CMD [ARG…]: runs CMD every 0.25 s until it succeeds, for up to NET6_WAIT_SECONDS.
net6_poll() {
  i=0
  while [ "$i" -lt $((NET6_WAIT_SECONDS * 4)) ]; do
    "$@" && return 0
    sleep 0.25
    i=$((i + 1))
  done
  return 1
}

# net6_found IFACE [ADDRESS]: net6_ready, failing when it prints nothing.
net6_found() {
  a=$(net6_ready "$1" "$2")
  [ -n "$a" ] && printf '%s\n' "$a"
}

# net6_wait IFACE [ADDRESS]: net6_found, polled for up to NET6_WAIT_SECONDS.
net6_wait() {
  net6_poll net6_found "$1" "$2"
}

# net6_link_local IFACE: waits until IFACE's link-local address passed duplicate address
# detection (DHCPv6 messages leave from it).
net6_link_local() {
  net6_poll net6_has_link_local "$1"
}

net6_has_link_local() {
  ip -6 -o addr show dev "$1" scope link 2>/dev/null | grep -v -e ' tentative' -e ' dadfailed' | grep -q 'inet6 fe80:'
}

# net6_configure IFACE: DHCPv6, else SLAAC, on IFACE; sets LEASE_IP and writes ${RUN}/lease.
net6_configure() {
  name=$1
  echo 0 > "${PROCFS}/sys/net/ipv6/conf/${name}/disable_ipv6" 2>/dev/null
  ip link set dev "$name" up
  net6_link_local "$name" || say "network: ${name} has no usable IPv6 link-local address yet"
  helper=${RACKSIDE_DHCP6:-$(host_tool rackside-dhcp6)}
  addr=
  if [ -n "$helper" ] && out=$("$helper" "$name" "$NET6_WAIT_SECONDS" 2>>"${RUN}/agent.log"); then
    addr=$(printf '%s\n' "$out" | sed -n 's/^ADDRESS=//p')
    plen=$(printf '%s\n' "$out" | sed -n 's/^PREFIXLEN=//p')
    dns=$(printf '%s\n' "$out" | sed -n 's/^DNS=//p')
    # busybox ip has no valid_lft: the address stays while the ramdisk runs (rackside keeps one
    # address per MAC, so a later Solicit of this host gets it again).
    ip -6 addr add "${addr}/${plen:-64}" dev "$name" 2>/dev/null
    if [ -n "$dns" ]; then
      : > "$RESOLV_CONF" 2>/dev/null
      for server in $dns; do echo "nameserver ${server}" >> "$RESOLV_CONF" 2>/dev/null; done
    fi
    net6_wait "$name" "$addr" > /dev/null || { say "network: ${addr} on ${name} failed duplicate address detection"; addr=; }
    [ -n "$addr" ] && say "network: DHCPv6 gave ${name} ${addr}"
  fi
  # No DHCPv6 lease: an address the kernel made from a router advertisement (SLAAC).
  [ -z "$addr" ] && addr=$(net6_wait "$name") && say "network: SLAAC gave ${name} ${addr}"
  [ -n "$addr" ] || return 1
  # shellcheck disable=SC2034 # read by rackside-agent.sh's heartbeat
  LEASE_IP=$addr
  echo "${name} ${addr}" > "${RUN}/lease"
}

# net6_on NAME MAC: IPv6 on NAME.
net6_on() {
  say "network: IPv6 on $1 ($2)"
  net6_configure "$1"
}

# network_up6: IPv6 on the boot NIC (BOOTIF), then on any NIC.
network_up6() {
  each_nic_boot_first net6_on && return 0
  say "network: no IPv6 address on any interface"
  return 1
}
