#!/usr/bin/env python3
"""NMF from Python: `nmf_playground.NMF` against `sklearn.decomposition.NMF(solver="mu")`, same
problem, same iteration count, one thread each (threadpoolctl for scikit-learn's BLAS, the
estimator's `n_threads=1` for ours), timed interleaved in one run.

    python3 -m venv v && v/bin/pip install ./python scikit-learn threadpoolctl
    v/bin/python benches/peers/python_nmf.py [--repeats 5] [--digits PATH]

Problems: the public digits set (1,797 × 64, k = 10, 200 iterations) and a seeded Uniform[0, 1)
4096 × 10000 matrix (features × samples, as docs/performance.md's NMF problem; given to both as
10000 samples × 4096 features), k = 20, 50 iterations. Both start from their own random draw
and do no early stop (tol = 0); ours gets `preprocess="none"` so both factorize the same X.
The whole `fit` call is timed (input checks and copies included), min and median of the
repeats (the digits get eight times `--repeats`, being short); the ratio is scikit-learn's
time over ours.
"""

import argparse
import pathlib
import statistics
import time

import numpy as np
from sklearn.decomposition import NMF as SkNMF
from threadpoolctl import threadpool_limits

import nmf_playground as npg


def timed(fit, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit()
        times.append(time.perf_counter() - start)
    return times


def compare(name, X, k, iters, repeats):
    ours = npg.NMF(n_components=k, max_iter=iters, tol=0.0, preprocess="none", n_threads=1,
                   random_state=0)
    theirs = SkNMF(n_components=k, solver="mu", max_iter=iters, tol=0.0, init="random",
                   random_state=0)
    with threadpool_limits(limits=1):
        ours.fit(X), theirs.fit(X)  # warm-up
        t_ours, t_theirs = [], []
        for _ in range(repeats):  # interleaved, so load drifts hit both
            t_ours += timed(lambda: ours.fit(X), 1)
            t_theirs += timed(lambda: theirs.fit(X), 1)
    assert ours.n_iter_ == iters and theirs.n_iter_ == iters
    med_o, med_t = statistics.median(t_ours), statistics.median(t_theirs)
    print(f"{name}: {X.shape[0]} samples × {X.shape[1]} features, k = {k}, {iters} iterations, "
          f"1 thread")
    print(f"  nmf_playground.NMF   min {min(t_ours):.3f} s  median {med_o:.3f} s")
    print(f"  sklearn NMF(mu)      min {min(t_theirs):.3f} s  median {med_t:.3f} s")
    print(f"  ratio (sklearn / ours): {med_t / med_o:.2f}× (median), "
          f"{min(t_theirs) / min(t_ours):.2f}× (min)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--digits", default=str(pathlib.Path(__file__).resolve().parents[3]
                                            / "shared/data/digits_sklearn/digits_sklearn.csv"))
    args = ap.parse_args()
    digits = pathlib.Path(args.digits)
    if digits.exists():
        X = np.loadtxt(digits, delimiter=",", skiprows=1)[:, :-1]
        # A fit of 27 ms is at the mercy of one descheduling: eight times the repeats.
        compare("digits", X, 10, 200, 8 * args.repeats)
    else:
        print(f"{digits} absent: digits skipped")
    X = np.random.default_rng(0).random((10000, 4096))
    compare("random", X, 20, 50, args.repeats)


if __name__ == "__main__":
    main()
