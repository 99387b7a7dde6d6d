"""NMF Playground from Python: scikit-learn-style estimators for the eleven models of the
engine (the same Rust code as the app and the CLI, so the same numbers bit for bit), the
evaluation protocol's metrics, the triplet protocol, and ``show()`` to open the app on arrays.

>>> import nmf_playground as npg
>>> H = npg.RPNMF(n_components=10, random_state=0).fit_transform(X, triplets=T)
"""

from . import _core, metrics
from ._estimators import (
    MODELS,
    NMFPlaygroundClassifier,
    NMFPlaygroundClusterer,
    NMFPlaygroundEstimator,
)
from ._show import find_app, show
from .metrics import generate_triplets, preprocess

__version__ = _core.__version__

# One class per registered model, under its display name (NMF, GNMF, RPNMF, STGINMF, …).
globals().update({cls.__name__: cls for cls in MODELS.values()})

__all__ = [
    "MODELS",
    "NMFPlaygroundEstimator",
    "NMFPlaygroundClassifier",
    "NMFPlaygroundClusterer",
    "generate_triplets",
    "metrics",
    "preprocess",
    "find_app",
    "show",
    *sorted(cls.__name__ for cls in MODELS.values()),
]
