#!/usr/bin/env bash
# The demo command: installs what is missing, builds, starts every part on 127.0.0.1 and prints the URL.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# node itself (no npx/tsx wrapper processes): the supervisor is this very process, and its parts watch it.
exec node --import tsx scripts/demo.ts "$@"
