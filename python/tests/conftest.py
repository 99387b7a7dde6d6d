"""Shared fixtures: the CLI binary (for bit-equality tests) and the public datasets."""

import os
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def cli():
    """The nmf-playground binary: $NMF_PLAYGROUND_BIN, else target/debug, else target/release."""
    candidates = [os.environ.get("NMF_PLAYGROUND_BIN")] + [
        str(ROOT / "target" / p / "nmf-playground") for p in ("debug", "release")
    ]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    pytest.skip("no nmf-playground binary (cargo build first, or set NMF_PLAYGROUND_BIN)")


def _table(name):
    path = DATA / name / f"{name}.csv"
    if not path.exists():
        pytest.skip(f"{path} is absent (the public datasets live in ../shared/data)")
    raw = np.loadtxt(path, delimiter=",", skiprows=1)
    return raw[:, :-1], raw[:, -1].astype(np.int64)


@pytest.fixture(scope="session")
def iris():
    return _table("iris")


@pytest.fixture(scope="session")
def digits():
    return _table("digits_sklearn")


@pytest.fixture
def blobs():
    """Three nonnegative clusters in 6 features, 60 samples, with their labels."""
    rng = np.random.default_rng(0)
    centres = np.array([[5, 1, 1, 0, 0, 1], [0, 4, 1, 5, 0, 0], [1, 0, 0, 1, 6, 3]], float)
    y = np.repeat(np.arange(3), 20)
    X = np.abs(centres[y] + 0.3 * rng.standard_normal((60, 6)))
    return X, y
