#!/usr/bin/env bash
# Installs everything Hopscope needs on a fresh Debian bookworm machine with Node 20, idempotently:
# Debian packages (as root), npm packages (npm ci when the lock file changed), tracefs, and the plugin build.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBIAN_PACKAGES=(chromium prometheus prometheus-alertmanager bpftrace nftables iproute2 openssl gcc libc6-dev docker-compose postgresql)

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

missing=()
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    log "missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})"
    exit 1
  fi
  log "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# eBPF needs tracefs; nothing mounts it on these machines.
if [ "$(id -u)" = 0 ] && [ ! -e /sys/kernel/tracing/events ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || log "could not mount tracefs: eBPF probes will report why they are not attached"
fi

stamp=node_modules/.hopscope-lock-hash
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi

if [ "${HOPSCOPE_SKIP_BUILD:-}" != 1 ]; then
  log "building the plugin (dist/)"
  npm run --silent build
fi
