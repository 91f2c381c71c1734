/**
 * @module The `/init` of the firmware tests' test OS (test-os.ts): a busybox shell script that
 * proves a network boot chain reached userspace and reports it two ways — on the serial console
 * (`rackside-test-os: …` lines the test reads) and back to rackside's boot HTTP server (a GET of
 * `<rackside.url>/ramdisk/marker`, which the flight recorder files under the booted MAC once the
 * OS's own DHCPACK taught it the address) — then powers off.
 *
 * What it prints: the kernel release and machine, the UEFI Secure Boot state read from the
 * `SecureBoot` EFI variable (efivarfs; byte 5 of the file, after the 4 attribute bytes; no such
 * variable reads `unknown`), the address the OS's own DHCP lease gave the boot interface (picked by `BOOTIF=01-<mac>`, which
 * rackside's iPXE and GRUB configs both pass), and the marker's content (a per-run nonce the
 * lab writes, so the line proves this very rackside answered).
 *
 * Every message goes to `/dev/console` and also to whichever of `ttyS0` (x86) and `ttyAMA0`
 * (the PL011 of QEMU's arm64 `virt`) is not already the console (the last entry of
 * `/sys/class/tty/console/active`), so the test reads it even when the kernel command line
 * names another console; the first line names the console, which the arm64 test checks. busybox's `wget -T`
 * crashes in guests here (docs/test-peers.md), so the fetch runs under busybox `timeout`.
 * @pure
 */

/** The prefix of every line the test OS prints. */
export const TEST_OS_PREFIX = 'rackside-test-os:';

/** The path (under boot HTTP) the test OS fetches as its marker. */
export const TEST_OS_MARKER_PATH = '/ramdisk/marker';

/** The script text (POSIX sh for busybox ash, PID 1). */
export const TEST_OS_INIT = `#!/bin/sh
# rackside firmware-test OS /init (test/lab/firmware/test-os-init.ts): report, fetch the
# marker from rackside, power off. PID 1: it never exits (poweroff -f ends the machine).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mount -t devtmpfs -o mode=0755 devtmpfs /dev 2>/dev/null
mount -t proc proc /proc
mount -t sysfs sysfs /sys

# The last active console is the one /dev/console writes to.
active=$(cat /sys/class/tty/console/active 2>/dev/null)
console=\${active##* }
say() {
  echo "${TEST_OS_PREFIX} $*" > /dev/console
  for tty in ttyS0 ttyAMA0; do
    [ "$tty" = "$console" ] && continue
    [ -e "/sys/class/tty/$tty" ] && echo "${TEST_OS_PREFIX} $*" > "/dev/$tty" 2>/dev/null
  done
}
arg() {
  for word in $(cat /proc/cmdline); do
    case "$word" in "$1"=*) echo "\${word#*=}"; return 0 ;; esac
  done
  return 1
}
finish() {
  say "powering off"
  sync
  poweroff -f
  sleep 3600
}

say "userspace reached: kernel $(uname -r) on $(uname -m), console $console"
release=$(uname -r)
while IFS= read -r module; do
  [ -n "$module" ] || continue
  insmod "/lib/modules/$release/$module" 2>/dev/null
done < /etc/rackside/modules.load

secure=unknown
if [ -d /sys/firmware/efi ]; then
  mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2>/dev/null
  var=/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c
  if [ -r "$var" ]; then
    # 4 attribute bytes, then the value (busybox od ignores -j with -N: read it all).
    set -- $(od -An -tu1 "$var")
    case "$5" in
      1) secure=enabled ;;
      0) secure=disabled ;;
    esac
  fi
  say "firmware: UEFI, Secure Boot $secure"
else
  say "firmware: legacy BIOS"
fi

bootif=$(arg BOOTIF | sed 's/^01-//; s/-/:/g')
iface=
for dev in /sys/class/net/*; do
  name=\${dev##*/}
  [ "$name" = lo ] && continue
  [ -z "$iface" ] && iface=$name
  [ -n "$bootif" ] && [ "$(cat "$dev/address")" = "$bootif" ] && iface=$name
done
if [ -z "$iface" ]; then
  say "no network interface (BOOTIF=$bootif)"
  finish
fi

cat > /run-udhcpc <<'HOOK'
#!/bin/sh
case "$1" in
  bound|renew)
    ifconfig "$interface" "$ip" netmask "\${subnet:-255.255.255.0}" up
    echo "$ip" > /tmp/address
    ;;
esac
HOOK
chmod 755 /run-udhcpc
mkdir -p /tmp
ip link set lo up
ip link set "$iface" up
if ! udhcpc -i "$iface" -f -q -n -t 10 -T 2 -s /run-udhcpc >/dev/null 2>&1; then
  say "DHCP on $iface failed"
  finish
fi
say "DHCP: $iface $(cat /tmp/address)"

url=$(arg rackside.url)
marker=$(timeout 30 wget -q -O - "$url${TEST_OS_MARKER_PATH}" 2>/dev/null)
if [ -n "$marker" ]; then
  say "marker: $marker"
else
  say "marker fetch from $url${TEST_OS_MARKER_PATH} failed"
fi
finish
`;
