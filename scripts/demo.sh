#!/usr/bin/env bash
# The demo command: installs what is missing, builds, starts every part on 127.0.0.1 and prints the URL.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec npx tsx scripts/demo.ts "$@"
