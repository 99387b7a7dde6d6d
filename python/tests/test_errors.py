"""Bad input raises ValueError with the engine's message, never a panic or an abort."""

import numpy as np
import pytest

import nmf_playground as npg


def test_non_finite_x(blobs):
    X, _ = blobs
    X = X.copy()
    X[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"X: row 5, column 3.*NaN"):
        npg.NMF(n_components=2).fit(X)  # a float64 array: the engine's check names the place
    X[4, 2] = np.inf
    with pytest.raises(ValueError, match="inf"):
        npg.NMF(n_components=2).fit(X[:, :4])  # a column slice: rows contiguous apart
    with pytest.raises(ValueError, match="NaN|inf"):
        npg.NMF(n_components=2).fit(X.tolist())  # anything else: scikit-learn's check


def test_negative_x_where_nothing_shifts_it(blobs):
    X, _ = blobs
    X = X.copy()
    X[7, 1] = -0.5
    with pytest.raises(ValueError, match=r"X: row 8, column 2.*negative"):
        npg.NMF(n_components=2, preprocess="l2").fit(X)
    npg.NMF(n_components=2, max_iter=5).fit(X)  # auto scales a table with negatives


def test_parameters_out_of_their_range_give_the_table_message(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match="alpha"):
        npg.RPNMF(alpha=-1.0).fit(X, triplets=[[0, 1, 2]])
    with pytest.raises(ValueError, match="neighbors"):
        npg.GNMF(neighbors=2.5).fit(X)
    with pytest.raises(ValueError, match="1 ≤ k"):
        npg.NMF(n_components=99).fit(X)
    with pytest.raises(ValueError, match="preprocess|unknown"):
        npg.NMF(preprocess="zscore").fit(X)


def test_side_information_is_checked(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match="needs"):
        npg.RPNMF(n_components=3).fit(X)
    with pytest.raises(ValueError, match=r"shape \(t, 3\)"):
        npg.RPNMF(n_components=3).fit(X, triplets=np.zeros((4, 2), int))
    with pytest.raises(ValueError, match="row 1"):
        npg.RPNMF(n_components=3).fit(X, triplets=[[0, 1, 2], [0, 1, 60]])
    with pytest.raises(ValueError, match="distinct|differ"):
        npg.RPNMF(n_components=3).fit(X, triplets=[[0, 0, 2]])
    with pytest.raises(ValueError, match="row 1: .*already in the list"):
        npg.RPNMF(n_components=3).fit(X, triplets=[[0, 1, 2], [0, 1, 2]])
    with pytest.raises(ValueError, match="60 samples"):
        npg.STGINMF(n_components=3).fit(X, labels=np.zeros(59, int))


def test_wrong_shapes(blobs):
    X, _ = blobs
    with pytest.raises(ValueError):
        npg.NMF().fit(X[0])
    with pytest.raises(ValueError):
        npg.NMF().fit(X[:2])
