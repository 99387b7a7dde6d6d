#!/usr/bin/env bash
# Build (release) and run NMF Playground. No arguments: the GUI on the bundled sample.
# With arguments: passed to the binary, e.g. `scripts/run.sh run --data sample:glyphs --json`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh
cargo build --release --quiet
exec target/release/nmf-playground "$@"
