#!/usr/bin/env python3
"""A straightforward NumPy/SciPy GNMF (docs/models.md §3.2) on one thread, timed per
iteration, to set against `nmf-playground run --model gnmf` on the same data and start.

    python3 -m venv /work/venv-peers
    /work/venv-peers/bin/pip install numpy scipy
    /work/venv-peers/bin/python benches/peers/gnmf_numpy.py DIR            # writes DIR, times
    nmf-playground run --data DIR/X.npy --preprocess none --k 20 --model gnmf \\
        --init DIR --max-iter 100 --tol 0 --json > DIR/rust.json
    /work/venv-peers/bin/python benches/peers/gnmf_numpy.py DIR --rust DIR/rust.json

The problem (written once into DIR, kept if present): X m×n (default 1024×1440, the size of
COIL20) with seeded Uniform[0, 1) entries, stored as `X.npy` with samples as rows (n×m, as
`run` reads a .npy), and the start `W.npy` (m×k), `H.npy` (k×n), Uniform(0, 1] scaled by
sqrt(mean(X)/k) as the Rust models draw theirs (docs/models.md (3.2)).

The implementation is what one writes from the paper: the 5-NN graph by brute-force
distances (p nearest others, ties to the smaller index, S = max(S, Sᵀ), binary, as
scipy.sparse CSR), then per iteration

    H ← max(H ⊙ (WᵀX + λ H S) ⊘ max(WᵀW H + λ H D, ε), φ)
    W ← max(W ⊙ (X Hᵀ) ⊘ max(W (H Hᵀ), ε), φ)

with ε = 1e-12 and the floor φ = 2⁻³⁰⁰ of the Rust rule, so both compute the same iterates.
Only the updates are timed (no objective per iteration: that favours NumPy, whose objective
would need WH or the trace identity). BLAS and OpenMP are limited to one thread before NumPy is
imported. With `--rust FILE` (the `run --json` output of the same problem and iteration count)
the final objective terms of both are printed side by side, and the per-iteration ratio.
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402

EPS = 1e-12
FLOOR = 2.0**-300


def write_problem(d, m, n, k, seed):
    rng = np.random.default_rng(seed)
    x = rng.random((m, n))
    scale = np.sqrt(x.mean() / k)
    w = (1.0 - rng.random((m, k))) * scale
    h = (1.0 - rng.random((k, n))) * scale
    d.mkdir(parents=True, exist_ok=True)
    np.save(d / "X.npy", np.ascontiguousarray(x.T))
    np.save(d / "W.npy", w)
    np.save(d / "H.npy", h)


def knn_graph(x, p):
    """Binary symmetrised p-NN graph of the columns of x (brute force, float64)."""
    sq = (x * x).sum(axis=0)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (x.T @ x)
    np.fill_diagonal(d2, np.inf)
    n = x.shape[1]
    # A stable sort ranks ties by index, as the Rust search does.
    nbr = np.argsort(d2, axis=1, kind="stable")[:, :p]
    rows = np.repeat(np.arange(n), p)
    s = sp.csr_matrix((np.ones(n * p), (rows, nbr.ravel())), shape=(n, n))
    s = s.maximum(s.T).tocsr()
    s.setdiag(0)
    s.eliminate_zeros()
    return s


def gnmf_iterations(x, w, h, s, lam, iters):
    d = np.asarray(s.sum(axis=1)).ravel()
    for _ in range(iters):
        num = w.T @ x + lam * (s.T @ h.T).T  # H·S (S symmetric)
        den = (w.T @ w) @ h + lam * (h * d)
        h = np.maximum(h * num / np.maximum(den, EPS), FLOOR)
        num = x @ h.T
        den = w @ (h @ h.T)
        w = np.maximum(w * num / np.maximum(den, EPS), FLOOR)
    return w, h


def objective(x, w, h, s, lam):
    d = np.asarray(s.sum(axis=1)).ravel()
    recon = ((x - w @ h) ** 2).sum()
    hs = (s.T @ h.T).T
    graph = lam * float((h * (h * d - hs)).sum())
    return recon, graph


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=pathlib.Path)
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1440)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--lam", type=float, default=100.0)
    ap.add_argument("--p", type=int, default=5)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rust", type=pathlib.Path, help="`run --json` output to compare with")
    args = ap.parse_args()

    if not (args.dir / "X.npy").exists():
        write_problem(args.dir, args.m, args.n, args.k, args.seed)
    x = np.ascontiguousarray(np.load(args.dir / "X.npy").T)
    w0 = np.load(args.dir / "W.npy")
    h0 = np.load(args.dir / "H.npy")
    m, n = x.shape
    k = w0.shape[1]
    t = time.perf_counter()
    s = knn_graph(x, args.p)
    graph_s = time.perf_counter() - t
    print(f"numpy {np.__version__}, scipy {scipy.__version__}, 1 thread")
    print(f"X {m}×{n}, k = {k}, λ = {args.lam}, {args.p}-NN graph: {s.nnz} nonzeros in {graph_s:.2f} s")

    per_iter = []
    for _ in range(args.reps):
        t = time.perf_counter()
        w, h = gnmf_iterations(x, w0.copy(), h0.copy(), s, args.lam, args.iters)
        per_iter.append((time.perf_counter() - t) / args.iters * 1e3)
    med = statistics.median(per_iter)
    print(f"numpy gnmf: {med:.3f} ms/iteration (min {min(per_iter):.3f}, max {max(per_iter):.3f}, "
          f"{args.reps} fits of {args.iters})")
    recon, graph = objective(x, w, h, s, args.lam)
    print(f"numpy after {args.iters}: reconstruction {recon:.12e}, graph {graph:.12e}")
    if args.rust:
        run = json.loads(args.rust.read_text())
        iters = run["iterations"]
        ms = run["seconds"] / iters * 1e3
        r_recon = run["terms"]["reconstruction"][-1]
        r_graph = run["terms"]["graph"][-1]
        print(f"rust  after {iters}: reconstruction {r_recon:.12e}, graph {r_graph:.12e}")
        print(f"relative differences: reconstruction {abs(r_recon - recon) / recon:.2e}, "
              f"graph {abs(r_graph - graph) / graph:.2e}")
        print(f"rust gnmf: {ms:.3f} ms/iteration (fit time of `run`); numpy / rust = {med / ms:.2f}")


if __name__ == "__main__":
    main()
