"""scikit-learn-style estimators, one class per model of the engine's registry.

Each class is made from its registry entry when the package is imported, so a model registered
in the engine appears here without a line of Python. Its constructor takes the common
arguments (``n_components``, ``max_iter``, ``tol``, ``random_state``, ``preprocess``,
``n_threads``) and the model's hyperparameters by their engine names (``lambda`` is spelled
``lam``, a Python keyword otherwise).
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

try:  # scikit-learn's own bookkeeping of the fitted features, without its value checks
    from sklearn.utils.validation import _check_feature_names, _check_n_features
except ImportError:  # pragma: no cover - older scikit-learn: every X takes validate_data
    _check_feature_names = _check_n_features = None

from . import _core

#: Python names of engine parameters that are Python keywords.
_KEYWORDS = {"lambda": "lam"}


def _py_name(engine_name: str) -> str:
    return _KEYWORDS.get(engine_name, engine_name)


def _engine_name(py_name: str) -> str:
    for engine, py in _KEYWORDS.items():
        if py == py_name:
            return engine
    return py_name


def _seed(random_state) -> int:
    """An integer seed: the engine's runs are repeatable bit for bit from one integer."""
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(f"random_state must be a nonnegative integer, not {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(
        f"random_state must be None, an integer or a numpy RandomState, not {random_state!r}"
    )


def _as_samples(estimator, X, reset):
    """X as a float64 (n, m) array (any order; no copy when it already is one): at least 3
    samples to fit on, any number to transform.

    A plain float64 2-D array to fit on skips scikit-learn's value checks: the engine checks
    every value in its own pass (NaN, Inf, and negatives for the models that need X ≥ 0) and
    its ValueError names the row and column. That is a tenth of a millisecond, a third of
    what separates a fit on the digits from twice scikit-learn's speed. Anything else (lists,
    DataFrames, other dtypes, too few samples), and X to transform, goes through
    ``validate_data``."""
    if (
        reset
        and _check_n_features is not None
        and type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.shape[0] >= 3
        and X.shape[1] >= 1
    ):
        _check_feature_names(estimator, X, reset=True)
        _check_n_features(estimator, X, reset=True)
        return X
    X = validate_data(
        estimator,
        X,
        reset=reset,
        dtype=np.float64,
        order=None,
        ensure_min_samples=3 if reset else 1,
        ensure_all_finite=True,
    )
    return X


def _fingerprint(X):
    """Shape and a 64-bit hash of the values, the same for any memory order: is this the X
    the estimator was fitted on?"""
    return _core.fingerprint(X)


def _as_triplets(triplets):
    if triplets is None:
        return None
    t = np.asarray(triplets)
    if t.size == 0:
        return None
    if t.ndim != 2 or t.shape[1] != 3:
        raise ValueError(
            f"triplets: expected an array of shape (t, 3), one row i, j, q per triplet; got "
            f"shape {t.shape}"
        )
    if not np.issubdtype(t.dtype, np.integer):
        if not np.all(np.equal(np.mod(t, 1), 0)):
            raise ValueError("triplets: indices must be whole numbers")
    return np.ascontiguousarray(t, dtype=np.int64)


def _as_labels(labels, n):
    if labels is None:
        return None
    lab = np.asarray(labels)
    if lab.ndim != 1:
        raise ValueError(f"labels: expected a vector of length {n} (-1 for unknown), got shape {lab.shape}")
    if not np.issubdtype(lab.dtype, np.integer):
        raise ValueError("labels: expected integer class indices (-1 for unknown)")
    return np.ascontiguousarray(lab, dtype=np.int64)


class NMFPlaygroundEstimator(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Common behaviour of every model's estimator (the subclasses carry the registry entry).

    Fitted attributes: ``components_`` (k, m): W transposed, as scikit-learn's NMF (models
    with a basis); ``embedding_`` (n, k): H transposed, the representation of the fitted
    samples; ``n_iter_``; ``objective_`` (one value per iteration) and ``objective_terms_``;
    ``reconstruction_err_`` (the last objective); ``labels_`` for models with their own
    labels; ``predictions_``/``confidence_`` for a classifier; ``exports_`` for arrays beyond
    W and H; ``stop_reason_``; ``notes_``; ``preprocess_`` (the preprocessing applied).
    """

    _model: dict = {}

    def _engine_params(self) -> dict:
        return {p["name"]: getattr(self, _py_name(p["name"])) for p in self._model["params"]}

    def fit(self, X, y=None, *, triplets=None, labels=None):
        """Fit the model to X (n_samples, n_features).

        ``y`` (ground truth) is not used: labels guide a fit only when given as ``labels``
        (partial: -1 for unknown), never silently. ``triplets`` is a (t, 3) integer array of
        rows (i, j, q): sample i is closer to j than to q.
        """
        X = _as_samples(self, X, reset=True)
        n, m = X.shape
        k = self.n_components if self.n_components is not None else min(n, m)
        if not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"n_components must be a positive integer or None, not {k!r}")
        out = _core.fit(
            self._model["name"],
            X,
            int(k),
            _seed(self.random_state),
            int(self.max_iter),
            float(self.tol),
            params=self._engine_params(),
            preprocess=self.preprocess,
            triplets=_as_triplets(triplets),
            labels=_as_labels(labels, n),
            threads=int(self.n_threads or 0),
        )
        self._set_fitted(out)
        self._fit_fingerprint = _fingerprint(X)
        return self

    def _set_fitted(self, out):
        self.embedding_ = np.ascontiguousarray(out["H"].T)
        if out["W"] is not None:
            self.components_ = np.ascontiguousarray(out["W"].T)
        self.n_components_ = self.embedding_.shape[1]
        self.n_iter_ = out["n_iter"]
        self.objective_ = np.asarray(out["objective"])
        self.objective_terms_ = {k: np.asarray(v) for k, v in out["terms"].items()}
        self.initial_objective_ = out["initial_objective"]
        self.reconstruction_err_ = (
            float(self.objective_[-1]) if len(self.objective_) else out["initial_objective"]
        )
        self.stop_reason_ = out["stop"]
        self.notes_ = list(out["notes"])
        self.preprocess_ = out["preprocess"]
        self.preprocess_reason_ = out["preprocess_reason"]
        if out["labels"] is not None:
            self.labels_ = np.asarray(out["labels"], dtype=np.int64)
        if "predictions" in out:
            self.predictions_ = np.asarray(out["predictions"], dtype=np.int64)
            self.confidence_ = np.asarray(out["confidence"])
        self.exports_ = dict(out["exports"])
        self._preprocess_steps = list(out["preprocess_steps"])
        self._n_features_out = self.n_components_

    def fit_transform(self, X, y=None, *, triplets=None, labels=None):
        """Fit, and return the representation of X: H transposed, (n_samples, n_components)."""
        return self.fit(X, y, triplets=triplets, labels=labels).embedding_

    def transform(self, X):
        """The representation of X, (n_samples, n_components).

        For the samples the model was fitted on (the same values, in any memory order) it is
        ``embedding_``: H was learned with their side information and graph. Models whose data
        term is the reconstruction ``‖X − WH‖²`` (NMF, GNMF, NMFCC, RPNMF) also express new
        samples in the fitted basis: X preprocessed with the fitted samples' statistics, then
        H ≥ 0 by the multiplicative rule with W fixed (``max_iter``, ``tol``), as
        scikit-learn's ``NMF.transform`` does. The other models are transductive and refuse a
        new X."""
        check_is_fitted(self, "embedding_")
        X = _as_samples(self, X, reset=False)
        if _fingerprint(X) == self._fit_fingerprint:
            return self.embedding_
        if not self._model["projects_new_samples"]:
            projecting = ", ".join(m["label"] for m in _core.registry() if m["projects_new_samples"])
            raise ValueError(
                f"{self._model['label']} is transductive: transform returns the representation "
                f"of the samples it was fitted on, and this X differs from them; fit on the new "
                f"samples (with their side information) instead (new samples can be transformed "
                f"by {projecting})"
            )
        out = _core.transform(self.components_.T, X, self.preprocess_, self._preprocess_steps,
                              int(self.max_iter), float(self.tol))
        if out["clipped"]:
            warnings.warn(
                f"{out['clipped']} value(s) of X fell below the fitted samples' range after "
                f"{self.preprocess_} preprocessing and were set to 0",
                stacklevel=2,
            )
        return np.ascontiguousarray(out["H"].T)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Negative values are refused only where nothing shifts them away: `auto` scales a
        # table with negative values into [0, 1] (as the CLI and the app do).
        shifts = self.preprocess in ("auto", "shift", "minmax", "minmax,l2", "standardize")
        tags.input_tags.positive_only = self._model["has_w"] and not shifts
        tags.non_deterministic = False
        tags.requires_fit = True
        return tags


class NMFPlaygroundClassifier(NMFPlaygroundEstimator):
    """A model that classifies the samples left unlabelled (2-STGINMF): ``predict`` gives the
    class of every fitted sample (the given ones keep their label)."""

    def predict(self, X):
        """Classes of the fitted samples (transductive: X must be the data given to fit)."""
        self.transform(X)
        return self.predictions_

    def fit_predict(self, X, y=None, *, triplets=None, labels=None):
        return self.fit(X, y, triplets=triplets, labels=labels).predictions_


class NMFPlaygroundClusterer(NMFPlaygroundEstimator):
    """A model with its own cluster labels (CAN, PSMF): ``fit_predict`` gives them."""

    def fit_predict(self, X, y=None, *, triplets=None, labels=None):
        return self.fit(X, y, triplets=triplets, labels=labels).labels_


_COMMON = [
    ("n_components", None),
    ("max_iter", 500),
    ("tol", 1e-5),
    ("random_state", None),
    ("preprocess", "auto"),
    ("n_threads", None),
]


def _class_name(label: str) -> str:
    name = label.replace("-", "").replace(" ", "")
    return {"2STGINMF": "STGINMF", "tSTE": "TSTE"}.get(name, name)


def _docstring(model: dict) -> str:
    lines = [
        f"{model['label']}: {model['description']}",
        "",
        f"The math: docs/models.md {model['section']}.",
        "",
        "Parameters",
        "----------",
        "n_components : int or None, default=None",
        "    The rank k (None: min(n_samples, n_features)).",
        "max_iter : int, default=500",
        "    Iteration cap.",
        "tol : float, default=1e-5",
        "    Relative objective change below which the fit stops.",
        "random_state : int, RandomState or None, default=None",
        "    Seed of every random choice; None is seed 0 (runs are repeatable bit for bit).",
        "preprocess : str, default='auto'",
        "    auto, none, l2, max, shift, minmax, minmax,l2 or standardize (as the CLI's --preprocess).",
        "n_threads : int or None, default=None",
        "    Threads of one fit (None: every core); the result is the same bits for any count.",
    ]
    for p in model["params"]:
        lines.append(f"{_py_name(p['name'])} : {p['kind']}, default={p['default']!r}")
        lines.append(f"    {p['help']} Range: {p['domain']}.")
    needs = {
        "triplets": "Needs `triplets` in fit.",
        "links": "Needs `triplets` or `labels` (two or more known) in fit.",
        "labels": "Needs some known `labels` in fit (-1 for unknown).",
    }.get(model["needs"])
    if needs:
        lines += ["", needs]
    return "\n".join(lines)


def _make_class(model: dict):
    names = [name for name, _ in _COMMON] + [_py_name(p["name"]) for p in model["params"]]
    defaults = dict(_COMMON)
    for p in model["params"]:
        default = p["default"]
        if p["kind"] == "count":
            default = int(default)
        defaults[_py_name(p["name"])] = default

    def __init__(self, **kwargs):
        unknown = set(kwargs) - set(names)
        if unknown:
            raise TypeError(
                f"{model['label']}: unknown argument(s) {sorted(unknown)}; its arguments: "
                f"{', '.join(names)}"
            )
        for name in names:
            setattr(self, name, kwargs.get(name, defaults[name]))

    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=defaults[name])
            for name in names
        ]
    )
    base = {
        "class_predictions": NMFPlaygroundClassifier,
        "cluster_labels": NMFPlaygroundClusterer,
    }.get(model["output"], NMFPlaygroundEstimator)
    cls_name = _class_name(model["label"])
    cls = type(
        cls_name,
        (base,),
        {"__init__": __init__, "_model": model, "__doc__": _docstring(model), "__module__": __name__},
    )
    __init__.__qualname__ = f"{cls_name}.__init__"
    # Importable by name (pickle, joblib, clone across processes).
    globals()[cls_name] = cls
    return cls


#: The estimator class of every registered model, by the engine's model name.
MODELS = {m["name"]: _make_class(m) for m in _core.registry()}
