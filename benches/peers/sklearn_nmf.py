#!/usr/bin/env python3
"""Time scikit-learn's multiplicative-update NMF on the problems exported by
`nmf-playground bench --export DIR`, on `--threads N` BLAS threads (default 1, through
threadpoolctl), so the ratio to the Rust iteration can be measured in one sitting.

    python3 -m venv .venv-peers
    .venv-peers/bin/pip install scikit-learn numpy threadpoolctl
    nmf-playground bench --export /tmp/nmf-bench
    .venv-peers/bin/python benches/peers/sklearn_nmf.py /tmp/nmf-bench [--reps 5] [--max-iter 200]

For each problem found in DIR (`digits_*.npy`, `random_*.npy`: X, W0, H0 with X m×n, columns
= samples, W0 m×k, H0 k×n), sklearn factorizes the samples-as-rows matrix Xᵀ (n×m), so its
W is our Hᵀ and its H is our Wᵀ. `init='custom'` starts from the exported factors (the same
start as the Rust bench); `init='random'` is reported too. `tol=0` so all `max_iter`
iterations run. Prints the per-iteration median (and min/max) over `--reps` fits, and the
BLAS library and kernel that ran (where OPENBLAS_CORETYPE is set to work around old OpenBLAS
builds, unset it and OPENBLAS_L2_SIZE for this command alone, or NumPy runs a slower kernel).
`benches/peers/threads_scaling.sh` runs this at 1 and 2 threads beside `bench --threads-scaling`.
"""

import argparse
import pathlib
import statistics
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits


def time_fits(make, x, reps, max_iter, **fit_kw):
    per_iter = []
    for _ in range(reps):
        model = make()
        t = time.perf_counter()
        model.fit_transform(x, **fit_kw)
        elapsed = time.perf_counter() - t
        per_iter.append(elapsed / max(model.n_iter_, 1) * 1e3)
    return statistics.median(per_iter), min(per_iter), max(per_iter), model.n_iter_


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=pathlib.Path, help="folder written by `bench --export`")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--max-iter", type=int, default=200)
    ap.add_argument("--problems", default="digits,random", help="comma-separated subset")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (threadpoolctl)")
    args = ap.parse_args()

    import sklearn
    from sklearn.decomposition import NMF
    from sklearn.exceptions import ConvergenceWarning

    warnings.simplefilter("ignore", ConvergenceWarning)
    from threadpoolctl import threadpool_info

    blas = ", ".join(
        f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture', '?')})"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    )
    print(f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, {blas}, {args.threads} thread(s)")
    print(f"{'problem':<22} {'init':<8} {'median ms/iter':>15} {'min':>9} {'max':>9} {'iters':>6}")
    found = False
    with threadpool_limits(limits=args.threads):
        for tag in args.problems.split(","):
            paths = {p: args.dir / f"{tag}_{p}.npy" for p in ("X", "W0", "H0")}
            if not paths["X"].exists():
                continue
            found = True
            x = np.ascontiguousarray(np.load(paths["X"]).T)  # n×m, samples as rows
            k = np.load(paths["W0"]).shape[1]
            w0 = np.ascontiguousarray(np.load(paths["H0"]).T)  # sklearn W: n×k
            h0 = np.ascontiguousarray(np.load(paths["W0"]).T)  # sklearn H: k×m
            label = f"{tag} {x.shape[1]}x{x.shape[0]} k={k}"
            # sklearn's MU with solver='mu' needs beta_loss='frobenius' (the default).
            common = dict(n_components=k, solver="mu", tol=0.0, max_iter=args.max_iter)
            for init in ("custom", "random"):
                if init == "custom":
                    make = lambda: NMF(init="custom", **common)
                    kw = dict(W=w0.copy(), H=h0.copy())
                else:
                    make = lambda: NMF(init="random", random_state=0, **common)
                    kw = {}
                reps = args.reps if x.size < 10**7 else max(1, min(args.reps, 3))
                med, lo, hi, it = time_fits(make, x, reps, args.max_iter, **kw)
                print(f"{label:<22} {init:<8} {med:>15.4f} {lo:>9.4f} {hi:>9.4f} {it:>6}")
                sys.stdout.flush()
    if not found:
        sys.exit(f"no digits_X.npy / random_X.npy in {args.dir}: run `nmf-playground bench --export {args.dir}` first")


if __name__ == "__main__":
    main()
