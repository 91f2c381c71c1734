#!/bin/sh
# uninstall.sh — remove rackside: scripts/install.sh --uninstall [--purge] [--destdir DIR].
# Keeps /etc/rackside and /var/lib/rackside unless --purge.
set -eu
exec "$(dirname "$0")/install.sh" --uninstall "$@"
