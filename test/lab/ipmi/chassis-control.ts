/**
 * @module The chassis-control program ipmi_sim runs for chassis commands (docs/test-peers.md, "IPMI"):
 * `<prog> STATE_DIR get power|boot …` prints `power:0|1` / `boot:<dev>`; `<prog> STATE_DIR set
 * power 0|1 | reset 1 | shutdown 1 | boot pxe|none|default|cdrom|bios` changes them. A POSIX sh
 * script (it runs on every chassis status, so it must start fast), written into the simulator's
 * scratch directory. Every call is appended to STATE_DIR/calls.log.
 *
 * Two modes, chosen by STATE_DIR/qmp.conf:
 * - file mode (no qmp.conf): power and boot live in STATE_DIR/power and STATE_DIR/boot;
 *   `shutdown` powers off at once (an OS that honours ACPI);
 * - QEMU mode (qmp.conf sets NODE, QMP_CLIENT, QMP_SOCKET and optionally START): power is "is the
 *   guest answering QMP", `power 1` runs START (which reads STATE_DIR/boot to choose bootindex),
 *   `power 0` is QMP `quit`, `reset` is `system_reset`, `shutdown` is `system_powerdown`.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The script text. */
export const CHASSIS_CONTROL_SCRIPT = `#!/bin/sh
# rackside chassis-control for ipmi_sim; see test/lab/ipmi/chassis-control.ts
S="$1"; shift
echo "$*" >> "$S/calls.log"
QMP_SOCKET=
[ -f "$S/qmp.conf" ] && . "$S/qmp.conf"
put() { printf '%s\\n' "$2" > "$S/$1.tmp" && mv "$S/$1.tmp" "$S/$1"; }
qmp() { "$NODE" "$QMP_CLIENT" "$QMP_SOCKET" "$@" >> "$S/qmp.log" 2>&1; }
power() {
  if [ -n "$QMP_SOCKET" ]; then
    if [ -S "$QMP_SOCKET" ] && qmp query-status; then echo 1; else echo 0; fi
  else
    cat "$S/power" 2>/dev/null || echo 0
  fi
}
verb="$1"; shift
while [ $# -gt 0 ]; do
  what="$1"; shift
  case "$verb:$what" in
    get:power) echo "power:$(power)" ;;
    get:boot) echo "boot:$(cat "$S/boot" 2>/dev/null || echo none)" ;;
    set:power)
      v="$1"; shift
      if [ -n "$QMP_SOCKET" ]; then
        if [ "$v" = 1 ]; then
          if [ -n "$START" ] && [ "$(power)" = 0 ]; then (setsid "$START" "$S" </dev/null >>"$S/guest.log" 2>&1 &); fi
        else
          qmp quit
        fi
      fi
      put power "$v" ;;
    set:reset) shift; if [ -n "$QMP_SOCKET" ]; then qmp system_reset; fi ;;
    set:shutdown)
      shift
      if [ -n "$QMP_SOCKET" ]; then qmp system_powerdown; else put power 0; fi ;;
    set:boot) put boot "$1"; shift ;;
    *) echo "chassis-control: unknown request $verb $what" >&2; exit 1 ;;
  esac
done
`;

/** QEMU mode settings written to STATE_DIR/qmp.conf. */
export interface QemuChassisOptions {
  /** QEMU's QMP unix socket (`-qmp unix:SOCK,server=on,wait=off`). */
  readonly qmpSocket: string;
  /** Executable run as `START STATE_DIR` on power on; reads STATE_DIR/boot. */
  readonly startCommand?: string;
  /** Path of the compiled qmp-command.js. */
  readonly qmpClient: string;
  /** Node binary; default the running one. */
  readonly node?: string;
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Writes the script to `dir/chassis-control` (mode 0755) and initial state; returns its path. */
export async function writeChassisControl(
  dir: string, stateDir: string, initial: { readonly power: 0 | 1; readonly boot: string }, qemu?: QemuChassisOptions,
): Promise<string> {
  const path = join(dir, 'chassis-control');
  await writeFile(path, CHASSIS_CONTROL_SCRIPT);
  await chmod(path, 0o755);
  await writeFile(join(stateDir, 'power'), `${initial.power}\n`);
  await writeFile(join(stateDir, 'boot'), `${initial.boot}\n`);
  await writeFile(join(stateDir, 'calls.log'), '');
  if (qemu !== undefined) {
    const lines = [
      `NODE=${shellQuote(qemu.node ?? process.execPath)}`, `QMP_CLIENT=${shellQuote(qemu.qmpClient)}`,
      `QMP_SOCKET=${shellQuote(qemu.qmpSocket)}`, `START=${shellQuote(qemu.startCommand ?? '')}`,
    ];
    await writeFile(join(stateDir, 'qmp.conf'), `${lines.join('\n')}\n`);
  }
  return path;
}
