"""The evaluation protocol's metrics and helpers, computed by the engine (docs/models.md §8)."""

from __future__ import annotations

import numpy as np

from . import _core


def _labels(name, y):
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name}: expected a vector of labels, got shape {y.shape}")
    if y.dtype.kind not in "iu":
        _, y = np.unique(y, return_inverse=True)
    return np.ascontiguousarray(y, dtype=np.int64)


def _pair(y_true, y_pred):
    t, p = _labels("y_true", y_true), _labels("y_pred", y_pred)
    if t.shape != p.shape:
        raise ValueError(f"y_true has {t.size} labels but y_pred has {p.size}")
    return t, p


def acc(y_true, y_pred) -> float:
    """Clustering accuracy: clusters mapped to classes by the best one-to-one matching."""
    return _core.acc(*_pair(y_true, y_pred))


def nmi(y_true, y_pred, norm: str = "max") -> float:
    """Normalised mutual information: norm 'max' (RPNMF's tables), 'sqrt' (PSMF's) or
    'arithmetic' (scikit-learn's default)."""
    return _core.nmi(*_pair(y_true, y_pred), norm)


def kmeans_scores(H, y, *, restarts: int = 50, random_state: int = 0, n_clusters=None) -> dict:
    """The clustering protocol: k-means restarted ``restarts`` times on the rows of H
    (n_samples, k), each restart scored against y; means and standard deviations of ACC and
    NMI, and the labels of the lowest-inertia restart."""
    H = np.asarray(H, dtype=np.float64)
    if H.ndim != 2:
        raise ValueError(f"H: expected a 2-D array (n_samples, k), got shape {H.shape}")
    return _core.kmeans_scores(H, _labels("y", y), restarts, random_state, n_clusters)


def generate_triplets(X, y, *, anchors: float = 0.1, per_anchor: int = 30, random_state: int = 0,
                      preprocess: str = "auto"):
    """Triplets (t, 3) by the RPNMF protocol from the ground truth y and X (n_samples,
    n_features); with the same seed, the CLI's ``--triplets generate``."""
    X = np.asarray(X, dtype=np.float64)
    return _core.generate_triplets(X, _labels("y", y), anchors, per_anchor, random_state,
                                   preprocess)


def preprocess(X, method: str = "auto"):
    """X as a fit sees it after ``preprocess=method``: (array, resolved method, reason)."""
    return _core.preprocess(np.asarray(X, dtype=np.float64), method)
