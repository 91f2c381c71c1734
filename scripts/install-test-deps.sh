#!/usr/bin/env bash
# Installs the Debian packages the test suite's real peers need (run as root on Debian 12).
# The list is the single source of truth: .ci/run and the README both call this script.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
  cpio busybox-static zstd        # images: cpio cross-checks, the ramdisk's busybox, zstd
  qemu-system-x86 qemu-utils      # images/e2e: boot the ramdisk under TCG
  iproute2 nftables               # network namespaces, packet loss
  isc-dhcp-client udhcpc dnsmasq  # DHCP peers
  tftp-hpa curl                   # TFTP/HTTP peers
)
if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-deps: run as root (sudo $0)" >&2
  exit 1
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "install-test-deps: ${#packages[@]} packages present"
