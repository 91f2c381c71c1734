# shellcheck shell=sh
# The NIC walk of the ramdisk's network set-up, sourced by rackside-agent.sh: IPv4 (network_up)
# and IPv6 (lib-net6.sh network_up6) try the boot NIC first, then any NIC.

# each_nic_boot_first FN: runs `FN NAME MAC` for the boot NIC (BOOTIF), then for every NIC,
# until one returns 0 (then 0; else 1).
each_nic_boot_first() {
  want=$(boot_mac)
  for pass in boot any; do
    for nic in "${SYSFS}"/class/net/*; do
      [ -e "${nic}/device" ] || continue
      mac=$(read_file "${nic}/address")
      [ "$pass" = boot ] && [ "$mac" != "$want" ] && continue
      "$1" "${nic##*/}" "$mac" && return 0
    done
  done
  return 1
}
