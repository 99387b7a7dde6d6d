#!/usr/bin/env bash
# One fit on 1 and 2 threads against scikit-learn's MU NMF on as many, in one sitting
# (docs/performance.md, "One fit on all cores"):
#
#     benches/peers/threads_scaling.sh [ROUNDS] [VENV]
#
# Each round runs `nmf-playground bench --threads-scaling` (our NMF iteration on 1 and 2
# threads, interleaved rep by rep, and the streaming-read probe), then scikit-learn's
# `NMF(solver='mu')` on the same problems (exported once) with 1 and with 2 BLAS threads.
# Rounds alternate the two programs, so a drift of a shared machine's speed moves both.
# VENV is a virtual environment with scikit-learn, numpy and threadpoolctl
# (default /work/venv-peers; `python3 -m venv DIR && DIR/bin/pip install scikit-learn
# numpy threadpoolctl`). The binary is target/release/nmf-playground (`cargo build --release`).
set -euo pipefail
rounds=${1:-3}
venv=${2:-/work/venv-peers}
bin=${BIN:-target/release/nmf-playground}
dir=${EXPORT_DIR:-/tmp/nmf-bench-threads}
if [[ ! -f $dir/random_X.npy ]]; then
    "$bin" bench --models-only --quick --full-random --export "$dir" > /dev/null
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
    echo "== round $r: nmf-playground"
    "$bin" bench --threads-scaling
    for t in 1 2; do
        echo "== round $r: scikit-learn, $t thread(s)"
        env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$venv/bin/python" benches/peers/sklearn_nmf.py \
            "$dir" --threads "$t" --reps 3 --max-iter 10 --problems random
        env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$venv/bin/python" benches/peers/sklearn_nmf.py \
            "$dir" --threads "$t" --reps 5 --max-iter 200 --problems digits
    done
    echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
done
