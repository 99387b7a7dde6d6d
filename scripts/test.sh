#!/usr/bin/env bash
# Run every test (unit, integration, CLI, worker, sweep, UI via egui_kittest, frame budget;
# no display needed), plus one pass of each criterion benchmark as a smoke test, then the
# Python package's tests (scripts/test-python.sh: a venv, the package built in place, pytest).
# Tests that use ../shared/data skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
cargo test --bench engine
cargo test --lib --bins --tests "$@"
bash scripts/test-python.sh
