#!/bin/sh
# install.sh — install, upgrade or remove rackside on a Debian head node.
#
#   scripts/install.sh [--destdir DIR] [--source DIR]          install or upgrade
#   scripts/install.sh --uninstall [--purge] [--destdir DIR]   remove (keeps state and config unless --purge)
#
# DESTDIR (or --destdir) installs into a staging root: files only — no user, no systemctl,
# no ownership changes, no store migration. With an empty DESTDIR (a real install) it also
# creates the rackside system user (systemd-sysusers, else useradd --system), the state and
# cache directories (systemd-tmpfiles), migrates an existing store as that user, and runs
# systemctl daemon-reload when systemd is PID 1. A running service is stopped for the upgrade
# and started again afterwards. Running it twice is harmless.
#
# Layout (FHS, Debian):
#   /usr/lib/rackside/              dist/, node_modules/ (production), images/ramdisk/,
#                                   native addon, package.json, README.md, docs/, scripts/
#   /usr/bin/rackside               wrapper: exec node /usr/lib/rackside/dist/agent/cli.js
#   /etc/rackside/rackside.yaml     from docs/rackside.example.yaml, only when absent
#   /etc/rackside/rackside.yaml.example   always refreshed
#   /lib/systemd/system/rackside.service
#   /usr/lib/sysusers.d/rackside.conf, /usr/lib/tmpfiles.d/rackside.conf
#   /var/lib/rackside (0700), /var/cache/rackside (0700)   state and cache, never removed without --purge
set -eu

APP_USER=rackside
LIBDIR=/usr/lib/rackside
BINDIR=/usr/bin
CONFDIR=/etc/rackside
UNITDIR=/lib/systemd/system
SYSUSERSDIR=/usr/lib/sysusers.d
TMPFILESDIR=/usr/lib/tmpfiles.d
STATEDIR=/var/lib/rackside
CACHEDIR=/var/cache/rackside

MODE=install
PURGE=0
DESTDIR=${DESTDIR:-}
SOURCE=

say() { printf 'rackside install: %s\n' "$*"; }
die() { printf 'rackside install: error: %s\n' "$*" >&2; exit 1; }
usage() {
  cat <<'EOF'
usage: install.sh [--destdir DIR] [--source DIR]
       install.sh --uninstall [--purge] [--destdir DIR]
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --uninstall) MODE=uninstall ;;
    --purge) PURGE=1 ;;
    --destdir) [ $# -ge 2 ] || die "--destdir needs a directory"; DESTDIR=$2; shift ;;
    --destdir=*) DESTDIR=${1#--destdir=} ;;
    --source) [ $# -ge 2 ] || die "--source needs a directory"; SOURCE=$2; shift ;;
    --source=*) SOURCE=${1#--source=} ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
  shift
done
if [ "$PURGE" = 1 ] && [ "$MODE" != uninstall ]; then die "--purge applies to --uninstall only"; fi

# A relative DESTDIR would move with every cd; make it absolute, and drop a trailing slash.
if [ -n "$DESTDIR" ]; then
  mkdir -p "$DESTDIR"
  DESTDIR=$(cd "$DESTDIR" && pwd)
  [ "$DESTDIR" != / ] || DESTDIR=
fi
REAL=0
[ -n "$DESTDIR" ] || REAL=1
if [ "$REAL" = 1 ] && [ "$(id -u)" != 0 ]; then die "a real install needs root (or set DESTDIR to stage into a directory)"; fi

# sd_booted(3): /run/systemd/system exists; and PID 1 really is systemd (not a container's init).
systemd_running() { [ "$REAL" = 1 ] && [ -d /run/systemd/system ] && [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ]; }

service_active() { systemd_running && systemctl is-active --quiet rackside.service; }

# --- uninstall ---------------------------------------------------------------------------
if [ "$MODE" = uninstall ]; then
  if systemd_running; then
    systemctl disable --now rackside.service >/dev/null 2>&1 || true
  fi
  rm -rf "$DESTDIR$LIBDIR" "$DESTDIR$LIBDIR.new" "$DESTDIR$LIBDIR.old"
  rm -f "$DESTDIR$BINDIR/rackside" "$DESTDIR$UNITDIR/rackside.service" \
    "$DESTDIR$SYSUSERSDIR/rackside.conf" "$DESTDIR$TMPFILESDIR/rackside.conf" \
    "$DESTDIR$CONFDIR/rackside.yaml.example"
  if [ "$PURGE" = 1 ]; then
    rm -rf "$DESTDIR$CONFDIR" "$DESTDIR$STATEDIR" "$DESTDIR$CACHEDIR"
    if [ "$REAL" = 1 ] && getent passwd "$APP_USER" >/dev/null 2>&1; then
      userdel "$APP_USER" 2>/dev/null || say "could not remove user $APP_USER (still in use?)"
    fi
    say "removed rackside, its configuration ($CONFDIR) and state ($STATEDIR, $CACHEDIR)"
  else
    rmdir "$DESTDIR$CONFDIR" 2>/dev/null || true
    say "removed rackside; kept $CONFDIR and $STATEDIR (use --purge to remove them)"
  fi
  if systemd_running; then systemctl daemon-reload; fi
  exit 0
fi

# --- install / upgrade -------------------------------------------------------------------
if [ -z "$SOURCE" ]; then SOURCE=$(cd "$(dirname "$0")/.." && pwd); fi
SOURCE=$(cd "$SOURCE" && pwd)
[ -f "$SOURCE/dist/agent/cli.js" ] || die "$SOURCE/dist/agent/cli.js is missing: run npm run build first"
[ -f "$SOURCE/package.json" ] || die "$SOURCE/package.json is missing"
[ -d "$SOURCE/node_modules" ] || die "$SOURCE/node_modules is missing: run npm ci first"
[ -f "$SOURCE/systemd/rackside.service" ] || die "$SOURCE/systemd/rackside.service is missing"
[ -f "$SOURCE/docs/rackside.example.yaml" ] || die "$SOURCE/docs/rackside.example.yaml is missing"

NODE=${NODE:-/usr/bin/node}
[ -x "$NODE" ] || NODE=$(command -v node || true)
[ -n "$NODE" ] || die "node not found (apt-get install nodejs, Node 20 or newer)"

# Stage the app next to its final place, then swap it in, so a failed copy leaves the
# installed version alone.
STAGE="$DESTDIR$LIBDIR.new"
rm -rf "$STAGE"
mkdir -p "$STAGE"
copy() { # copy SOURCE-RELATIVE-PATH into the stage, if it exists
  if [ -e "$SOURCE/$1" ]; then
    mkdir -p "$STAGE/$(dirname "$1")"
    cp -R "$SOURCE/$1" "$STAGE/$1"
  fi
}
for path in dist package.json package-lock.json README.md LICENSE docs images/ramdisk \
  native/udp-bind/build/Release/udp_bind.node native/sendfile/build/Release/sendfile_range.node \
  systemd scripts/install.sh scripts/uninstall.sh; do
  copy "$path"
done
rm -rf "$STAGE/dist/test"
cp -R "$SOURCE/node_modules" "$STAGE/node_modules"
if [ -f "$STAGE/package-lock.json" ] && command -v npm >/dev/null 2>&1; then
  # Drop devDependencies (typescript, eslint, …) from the copy; offline, from the lock file.
  (cd "$STAGE" && npm prune --omit=dev --no-audit --no-fund --ignore-scripts --offline >/dev/null 2>&1) \
    || say "npm prune failed; keeping every module from $SOURCE/node_modules"
fi
find "$STAGE" -type d -exec chmod 0755 {} +
find "$STAGE" -type f -exec chmod go-w,a+r {} +

WAS_ACTIVE=0
if service_active; then
  WAS_ACTIVE=1
  say "stopping rackside.service for the upgrade"
  systemctl stop rackside.service
fi

if [ -d "$DESTDIR$LIBDIR" ]; then
  rm -rf "$DESTDIR$LIBDIR.old"
  mv "$DESTDIR$LIBDIR" "$DESTDIR$LIBDIR.old"
fi
mv "$STAGE" "$DESTDIR$LIBDIR"
rm -rf "$DESTDIR$LIBDIR.old"

mkdir -p "$DESTDIR$BINDIR"
cat >"$DESTDIR$BINDIR/rackside.tmp" <<EOF
#!/bin/sh
# rackside CLI and agent (installed by scripts/install.sh)
exec $NODE $LIBDIR/dist/agent/cli.js "\$@"
EOF
chmod 0755 "$DESTDIR$BINDIR/rackside.tmp"
mv "$DESTDIR$BINDIR/rackside.tmp" "$DESTDIR$BINDIR/rackside"

install -d -m 0755 "$DESTDIR$UNITDIR" "$DESTDIR$SYSUSERSDIR" "$DESTDIR$TMPFILESDIR"
if [ "$NODE" = /usr/bin/node ]; then
  install -m 0644 "$SOURCE/systemd/rackside.service" "$DESTDIR$UNITDIR/rackside.service"
else
  sed "s#^ExecStart=/usr/bin/node #ExecStart=$NODE #" "$SOURCE/systemd/rackside.service" >"$DESTDIR$UNITDIR/rackside.service"
  chmod 0644 "$DESTDIR$UNITDIR/rackside.service"
fi

cat >"$DESTDIR$SYSUSERSDIR/rackside.conf" <<EOF
# rackside provisioning agent's system user (sysusers.d(5))
u $APP_USER - "rackside provisioning agent" $STATEDIR /usr/sbin/nologin
EOF
chmod 0644 "$DESTDIR$SYSUSERSDIR/rackside.conf"

cat >"$DESTDIR$TMPFILESDIR/rackside.conf" <<EOF
# rackside state and cache (tmpfiles.d(5)); rackside.service's StateDirectory= and
# CacheDirectory= also create them on start.
d $STATEDIR 0700 $APP_USER $APP_USER -
d $CACHEDIR 0700 $APP_USER $APP_USER -
EOF
chmod 0644 "$DESTDIR$TMPFILESDIR/rackside.conf"

install -d -m 0750 "$DESTDIR$CONFDIR"
install -m 0644 "$SOURCE/docs/rackside.example.yaml" "$DESTDIR$CONFDIR/rackside.yaml.example"
if [ -e "$DESTDIR$CONFDIR/rackside.yaml" ]; then
  say "kept the existing $CONFDIR/rackside.yaml (the new example is rackside.yaml.example)"
else
  install -m 0640 "$SOURCE/docs/rackside.example.yaml" "$DESTDIR$CONFDIR/rackside.yaml"
  say "installed $CONFDIR/rackside.yaml from the example: edit provisioning and dhcp before starting"
fi

if [ "$REAL" = 1 ]; then
  if ! getent passwd "$APP_USER" >/dev/null 2>&1; then
    if command -v systemd-sysusers >/dev/null 2>&1; then
      systemd-sysusers "$SYSUSERSDIR/rackside.conf"
    else
      useradd --system --user-group --home-dir "$STATEDIR" --no-create-home --shell /usr/sbin/nologin \
        --comment "rackside provisioning agent" "$APP_USER"
    fi
  fi
  if command -v systemd-tmpfiles >/dev/null 2>&1; then
    systemd-tmpfiles --create "$TMPFILESDIR/rackside.conf"
  else
    install -d -m 0700 -o "$APP_USER" -g "$APP_USER" "$STATEDIR" "$CACHEDIR"
  fi
  chgrp "$APP_USER" "$CONFDIR" "$CONFDIR/rackside.yaml"
  if [ -d "$STATEDIR/db" ]; then
    say "upgrading the store in $STATEDIR"
    if command -v runuser >/dev/null 2>&1; then
      runuser -u "$APP_USER" -- "$BINDIR/rackside" migrate --state-dir "$STATEDIR" || MIGRATE_FAILED=1
    else
      "$BINDIR/rackside" migrate --state-dir "$STATEDIR" || MIGRATE_FAILED=1
      chown -R "$APP_USER:$APP_USER" "$STATEDIR"
    fi
    if [ "${MIGRATE_FAILED:-0}" = 1 ]; then
      die "store migration failed (see above); rackside.service was not started. Fix the cause and run install.sh again"
    fi
  fi
  if systemd_running; then
    systemctl daemon-reload
    if [ "$WAS_ACTIVE" = 1 ]; then
      systemctl start rackside.service
      say "rackside.service restarted"
    else
      say "start it with: systemctl enable --now rackside.service   (check first: rackside doctor)"
    fi
  fi
fi
say "installed into ${DESTDIR:-/}"
