#!/usr/bin/env bash
# Install the Debian packages needed to build the GUI, only those that are missing
# (idempotent; a no-op on a machine that has them). Runs apt-get as root or through sudo.
set -euo pipefail
need=(pkg-config libwayland-dev libxkbcommon-dev libgl1-mesa-dev libegl1 libxkbcommon-x11-0 libxcursor1 libxi6 libxrandr2)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "setup: installing missing Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
