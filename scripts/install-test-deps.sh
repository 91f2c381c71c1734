#!/usr/bin/env bash
# Installs the Debian packages the test suite's real peers need (run as root on Debian 12).
# The list is the single source of truth: .ci/run and the README both call this script.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
  cpio busybox-static zstd kmod shellcheck        # images: cpio cross-checks, ramdisk busybox, depmod, sh lint
  fdisk gdisk dmidecode mdadm nvme-cli            # images: host tools copied into the ramdisk
  gcc libc6-dev                                   # images: ramdisk helpers built static from images/helpers/*.c (rackside-lldp, rackside-dhcp6)
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross      # images: the same helpers cross-compiled static for the arm64 ramdisk
  xorriso mtools dosfstools isolinux syslinux-common  # images: ISO and config drive
  qemu-system-x86 qemu-utils ovmf ipxe-qemu       # images, e2e: boot guests under TCG
  iproute2 nftables                               # network namespaces, packet loss
  isc-dhcp-client udhcpc dnsmasq isc-dhcp-relay   # DHCP peers
  ndisc6                                           # DHCPv6 tests: rdisc6 checks rackside's own router advertisements
  kea-admin kea-dhcp4-server kea-dhcp6-server     # DHCP benchmark references (perfdhcp, kea; DHCPv6 too)
  tftp-hpa tftpd-hpa atftp                        # TFTP peers and references
  curl                                            # HTTP reference client; the ramdisk's TLS client (copied into the ramdisk build)
  ipxe                                            # iPXE binaries served by boot services
  openipmi ipmitool lldpd                         # IPMI simulator and reference client; lldpd: LLDP peer for inspection
  openssh-client openssh-server                   # SSH peers (client and bastion sshd)
  openssl                                         # test certificates; the boot CA (agent/boot/boot-ca.ts)
  systemd-boot-efi binutils                       # boot HTTPS: the unified kernel image's stub and objcopy (images/uki.ts)
  strace                                          # the systemd unit's system-call filter against what the agent calls
  faketime                                        # fault injection: wall-clock jumps for the agent process (libfaketime)
  chromium                                        # status page tests in a real browser
  nginx-light wrk                                 # benchmarks: the boot HTTP reference server and load tool
  postgresql-15                                   # the fleet controller's database (tests start private clusters with initdb)
  qemu-system-arm qemu-efi-aarch64                # e2e firmware matrix: arm64 guests (AAVMF); shim/GRUB are apt-get downloaded, never installed
)
if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-deps: run as root (sudo $0)" >&2
  exit 1
fi
# Packages such as tftpd-hpa, dnsmasq and kea start system services on install; the tests run
# their own instances on their own ports, so keep the system ones from starting.
policy=/usr/sbin/policy-rc.d
cleanup_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && cleanup_policy=1
fi
trap '[ "$cleanup_policy" = 1 ] && rm -f "$policy"' EXIT
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "install-test-deps: ${#packages[@]} packages present"
