"""scikit-learn's own estimator checks on the unsupervised estimators.

The checks that cannot hold, and why (each is asserted to be the only failures):
- check_methods_sample_order_invariance, check_methods_subset_invariance,
  check_fit_idempotent: these models are transductive. H is learned jointly for the samples
  it was fitted on (through W, a sample graph, or the clustering), so `transform` returns the
  fitted representation and refuses another X; a reordered or partial X is another problem.
- check_fit2d_1feature (PSMF, CAN): one feature under the default `auto` preprocessing is
  scaled to unit length, so every sample becomes 1.0 and the engine refuses the data as
  "all samples coincide", a message the check does not expect.
"""

import warnings

import pytest
from sklearn.utils.estimator_checks import check_estimator

import nmf_playground as npg

TRANSDUCTIVE = {
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_fit_idempotent",
}
EXPECTED = {name: TRANSDUCTIVE for name in ["nmf", "gnmf", "rnmf", "fnmf", "rmnmf"]}
EXPECTED.update({name: TRANSDUCTIVE | {"check_fit2d_1feature"} for name in ["psmf", "can"]})


@pytest.mark.parametrize("model", sorted(EXPECTED))
def test_check_estimator(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(npg.MODELS[model](max_iter=20), on_fail=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    assert failed <= EXPECTED[model], f"unexpected failures: {sorted(failed - EXPECTED[model])}"
    assert len(passed) >= 35, f"only {len(passed)} checks passed"
