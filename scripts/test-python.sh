#!/usr/bin/env bash
# The Python package's tests: a virtual environment in target/python-venv with the build and
# test requirements (from PyPI), the package built in place from this checkout (maturin
# develop, the dev profile the Rust tests share), then pytest. The bit-equality tests call
# the CLI binary the Rust tests build (target/debug/nmf-playground).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.9,<2" numpy scikit-learn pytest pandas
cargo build --quiet --bin nmf-playground
PIP_QUIET=1 VIRTUAL_ENV="$PWD/$venv" PATH="$PWD/$venv/bin:$PATH" maturin develop --quiet -m python/Cargo.toml
NMF_PLAYGROUND_BIN="$PWD/target/debug/nmf-playground" "$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
