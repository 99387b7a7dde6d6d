"""The protocol's metrics are the engine's, checked against hand-computed values."""

import numpy as np
import pytest
from sklearn.metrics import normalized_mutual_info_score

import nmf_playground as npg


def test_acc_matches_clusters_to_classes_one_to_one():
    truth = [0, 0, 0, 1, 1, 2, 2, 2]
    pred = [1, 1, 0, 0, 0, 2, 2, 1]
    # Best map: 1→0, 0→1, 2→2: samples 0, 1, 3, 4, 5, 6 right = 6 of 8.
    assert npg.metrics.acc(truth, pred) == pytest.approx(0.75, abs=1e-15)
    assert npg.metrics.acc(["a", "b", "b"], [5, 7, 7]) == 1.0


def test_nmi_normalisations_agree_with_scikit_learn():
    rng = np.random.default_rng(1)
    t, p = rng.integers(0, 4, 200), rng.integers(0, 3, 200)
    for ours, theirs in [("max", "max"), ("sqrt", "geometric"), ("arithmetic", "arithmetic")]:
        assert npg.metrics.nmi(t, p, ours) == pytest.approx(
            normalized_mutual_info_score(t, p, average_method=theirs), abs=1e-12)


def test_kmeans_protocol_on_separated_clusters(blobs):
    X, y = blobs
    s = npg.metrics.kmeans_scores(X, y, restarts=5, random_state=0)
    # Random starts: some restarts merge two clusters; the lowest-inertia one separates all.
    assert s["restarts"] == 5 and 0.6 < s["acc"] <= 1.0 and s["acc_std"] > 0
    assert npg.metrics.acc(y, s["labels"]) == 1.0


def test_preprocess_reports_its_choice(blobs):
    X, _ = blobs
    Xp, method, reason = npg.preprocess(X)
    assert method == "l2" and reason
    assert np.allclose(np.linalg.norm(Xp, axis=1), 1.0)
