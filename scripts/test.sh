#!/usr/bin/env bash
# Run every test (unit, integration, CLI, worker, UI via egui_kittest; no display needed).
# Tests that use ../shared/data skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
cargo test --all-targets "$@"
