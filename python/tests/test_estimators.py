"""scikit-learn conventions: one class per registered model, parameters, clone, pipelines,
fitted attributes, input types, repeatability."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

import nmf_playground as npg


def test_one_class_per_registered_model_with_its_table():
    names = {m["name"] for m in npg._core.registry()}
    assert names == set(npg.MODELS) and len(names) == 11
    gnmf = npg.GNMF()
    assert gnmf.lam == 10.0, "the engine's default, under the Python spelling of `lambda`"
    assert set(npg.RPNMF().get_params()) == {
        "n_components", "max_iter", "tol", "random_state", "preprocess", "n_threads",
        "alpha", "delta", "safeguard", "normalize_w"}
    with pytest.raises(TypeError, match="unknown argument"):
        npg.NMF(alpha=1.0)


def test_params_round_trip_and_clone():
    est = npg.RPNMF(n_components=4, alpha=0.25, random_state=7)
    params = est.get_params()
    again = npg.RPNMF(**params)
    assert again.get_params() == params
    est.set_params(alpha=2.0, max_iter=10)
    assert est.alpha == 2.0 and est.max_iter == 10
    c = clone(est)
    assert c is not est and c.get_params() == est.get_params()
    assert pickle.loads(pickle.dumps(est)).get_params() == est.get_params()


def test_fitted_attributes(blobs):
    X, _ = blobs
    est = npg.NMF(n_components=3, random_state=1, max_iter=50).fit(X)
    assert est.components_.shape == (3, 6) and est.embedding_.shape == (60, 3)
    assert est.n_iter_ == len(est.objective_) <= 50
    assert est.reconstruction_err_ == est.objective_[-1]
    assert np.all(np.diff(est.objective_) <= 1e-12), "NMF's objective does not increase"
    assert est.preprocess_ == "l2" and "one scale" in est.preprocess_reason_
    can = npg.CAN(n_components=3, random_state=0).fit(X)
    assert can.labels_.shape == (60,) and set(can.labels_) <= {0, 1, 2}
    assert not hasattr(can, "components_"), "CAN has no basis"


def test_same_bits_for_any_dtype_order_threads_and_dataframes(blobs):
    pd = pytest.importorskip("pandas")
    X, _ = blobs
    ref = npg.GNMF(n_components=3, random_state=3, max_iter=30).fit_transform(X)
    wider = np.hstack([X, np.ones((X.shape[0], 1))])  # wider[:, :-1]: rows contiguous apart
    for variant in [np.asfortranarray(X), pd.DataFrame(X, columns=list("abcdef")), wider[:, :-1],
                    np.repeat(X, 2, axis=1)[:, ::2]]:
        got = npg.GNMF(n_components=3, random_state=3, max_iter=30).fit_transform(variant)
        assert np.array_equal(got, ref)
    for threads in (1, 2, 3):
        got = npg.GNMF(n_components=3, random_state=3, max_iter=30,
                       n_threads=threads).fit_transform(X)
        assert np.array_equal(got, ref), f"{threads} threads"
    f32 = npg.GNMF(n_components=3, random_state=3, max_iter=30).fit_transform(X.astype(np.float32))
    assert f32.dtype == np.float64 and f32.shape == ref.shape
    other = npg.GNMF(n_components=3, random_state=4, max_iter=30).fit_transform(X)
    assert not np.array_equal(other, ref), "the seed matters"


def test_transform_knows_the_fitted_samples_in_any_memory_order(blobs):
    X, _ = blobs
    can = npg.CAN(n_components=3, random_state=0).fit(X)  # transductive: no basis
    wider = np.hstack([X, np.ones((X.shape[0], 1))])
    for same in [np.asfortranarray(X), np.repeat(X, 2, axis=1)[:, ::2], X.copy(), wider[:, :-1]]:
        assert np.array_equal(can.transform(same), can.embedding_)
    changed = X.copy()
    changed[17, 4] = np.nextafter(changed[17, 4], np.inf)
    with pytest.raises(ValueError, match="transductive.*NMF, GNMF"):
        can.transform(changed)
    with pytest.raises(ValueError, match="transductive"):
        can.transform(X[::-1])
    # GNMF expresses new samples in its basis.
    gnmf = npg.GNMF(n_components=3, random_state=3, max_iter=10).fit(X)
    assert np.array_equal(gnmf.transform(X.copy()), gnmf.embedding_)
    assert gnmf.transform(X[::-1]).shape == (60, 3)


def test_new_samples_are_expressed_in_the_fitted_basis(blobs):
    X, _ = blobs
    nmf = npg.NMF(n_components=3, random_state=0, max_iter=2000, tol=1e-10,
                  preprocess="none").fit(X)
    W = nmf.components_.T
    # A known answer: mixtures of the basis come back as their coefficients.
    coef = np.array([[1.0, 0.5, 0.2], [0.1, 2.0, 0.3], [0.4, 0.4, 1.5]])
    got = nmf.transform(coef @ W.T)
    assert np.allclose(got, coef, rtol=1e-3, atol=1e-3), got
    # The fitted samples, perturbed by one ulp (so not recognised as the fitted X), land where
    # the fit put them: at convergence the fit's H is the nonnegative least-squares answer
    # (entries the fit drove to 0 approach it slowly under the multiplicative rule: atol).
    near = np.nextafter(X, np.inf)
    assert np.allclose(nmf.transform(near), nmf.embedding_, rtol=1e-3, atol=1e-2)
    # Preprocessed by the fitted samples' ranges: a value below the fitted minimum is clipped,
    # with a warning.
    mm = npg.NMF(n_components=3, random_state=0, max_iter=50, preprocess="minmax").fit(X)
    low = X[:2].copy()
    low[0, 0] = X[:, 0].min() - 1.0
    with pytest.warns(UserWarning, match="1 value.*below the fitted samples' range"):
        assert mm.transform(low).shape == (2, 3)
    with pytest.raises(ValueError, match="features"):
        nmf.transform(X[:, :5])


def test_pipeline_and_grid_search(blobs):
    X, y = blobs

    def score(est, X, y):
        return npg.metrics.kmeans_scores(est.transform(X), y, restarts=3)["acc"]

    pipe = Pipeline([("scale", MinMaxScaler()),
                     ("nmf", npg.GNMF(n_components=3, max_iter=30, random_state=0))])
    search = GridSearchCV(pipe, {"nmf__lam": [0.1, 10.0]}, cv=[(np.arange(60), np.arange(60))],
                          scoring=lambda est, X, y: score(est[-1], est[:-1].transform(X), y))
    search.fit(X, y)
    assert search.best_params_["nmf__lam"] in (0.1, 10.0)
    assert search.best_score_ > 0.9


def test_a_classifier_predicts_the_unlabelled_samples(blobs):
    X, y = blobs
    known = np.full(60, -1)
    known[::6] = y[::6]
    est = npg.STGINMF(n_components=3, random_state=0)
    pred = est.fit_predict(X, labels=known)
    assert np.array_equal(pred[known >= 0], y[known >= 0]), "given labels are kept"
    assert np.mean(pred == y) > 0.9
    assert np.array_equal(est.predict(X), pred)
    with pytest.raises(ValueError, match="transductive"):
        est.predict(X[::-1])
