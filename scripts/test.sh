#!/usr/bin/env bash
# The test command: installs what is missing, builds, then runs every suite and prints one total line.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec npx tsx tests/run.ts "$@"
