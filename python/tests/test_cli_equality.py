"""The same numbers as the CLI: for a fixed seed, a fit from Python is the CLI's H.npy bit for
bit, and the triplet protocol gives the CLI's triplets."""

import subprocess

import numpy as np

import nmf_playground as npg


def _write_npy(tmp_path, X, y):
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "labels.npy", y)  # the sibling labels the CLI picks up
    return tmp_path / "X.npy"


def test_triplets_equal_the_cli_protocol(cli, iris, tmp_path):
    X, y = iris
    data = _write_npy(tmp_path, X, y)
    out = tmp_path / "T.csv"
    subprocess.run([cli, "triplets", "--data", data, "--seed", "4", "-o", out], check=True,
                   capture_output=True)
    cli_t = np.loadtxt(out, delimiter=",", skiprows=1, dtype=np.int64)
    py_t = npg.generate_triplets(X, y, random_state=4)
    assert py_t.shape == cli_t.shape and py_t.shape[0] > 0
    assert np.array_equal(py_t, cli_t)


def test_rpnmf_fit_transform_is_the_cli_h_bit_for_bit(cli, iris, tmp_path):
    X, y = iris
    data = _write_npy(tmp_path, X, y)
    T = npg.generate_triplets(X, y, random_state=1)
    np.savetxt(tmp_path / "T.csv", T, fmt="%d", delimiter=",", header="i,j,q", comments="")
    out = tmp_path / "run"
    subprocess.run([cli, "run", "--data", data, "--model", "rpnmf", "--k", "3", "--seed", "1",
                    "--max-iter", "40", "--triplets", tmp_path / "T.csv", "--param", "alpha=0.5",
                    "--kmeans-repeats", "1", "--out", out], check=True, capture_output=True)
    H_cli = np.load(out / "H.npy")
    W_cli = np.load(out / "W.npy")
    est = npg.RPNMF(n_components=3, random_state=1, max_iter=40, alpha=0.5)
    H = est.fit_transform(X, triplets=T)
    assert H.shape == (150, 3)
    assert np.array_equal(H, H_cli.T), "H differs from the CLI's"
    assert np.array_equal(est.components_, W_cli.T), "W differs from the CLI's"


def test_every_unsupervised_model_matches_the_cli(cli, iris, tmp_path):
    X, y = iris
    data = _write_npy(tmp_path, X, y)
    for name in ["nmf", "gnmf", "rnmf", "fnmf", "rmnmf", "psmf", "can"]:
        out = tmp_path / name
        subprocess.run([cli, "run", "--data", data, "--model", name, "--seed", "2",
                        "--max-iter", "15", "--kmeans-repeats", "1", "--out", out],
                       check=True, capture_output=True)
        H = npg.MODELS[name](n_components=3, random_state=2, max_iter=15).fit_transform(X)
        assert np.array_equal(H, np.load(out / "H.npy").T), name


def test_a_classifier_predicts_what_the_cli_predicts(cli, iris, tmp_path):
    X, y = iris
    data = _write_npy(tmp_path, X, y)
    known = np.full(150, -1)
    known[::10] = y[::10]
    (tmp_path / "known.txt").write_text("\n".join("" if v < 0 else str(v) for v in known) + "\n")
    out = tmp_path / "stg"
    subprocess.run([cli, "run", "--data", data, "--model", "stginmf", "--seed", "0",
                    "--known-labels", tmp_path / "known.txt", "--kmeans-repeats", "1",
                    "--out", out], check=True, capture_output=True)
    est = npg.STGINMF(n_components=3, random_state=0)
    pred = est.fit_predict(X, labels=known)
    cli_pred = np.loadtxt(out / "predictions.csv", delimiter=",", skiprows=1, usecols=3,
                          dtype=np.int64)
    assert np.array_equal(pred, cli_pred)
    assert np.array_equal(est.embedding_, np.load(out / "H.npy").T)
