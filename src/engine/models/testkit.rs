//! Scaffolding the models' tests share: the public sets of `../shared/data`, skipped with a
//! message when absent, and a fit stopped by the front end at a given iteration. What each
//! model's test asserts stays in its own `tests.rs`.

use crate::engine::data::{Dataset, LoadOptions, load};
use crate::engine::jobs::experiment::{FitOptions, FitOutcome, fit};
use crate::engine::models::Model;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

/// `../shared/data/<rel>` loaded with `opts`, or `None` after saying it is absent (the test
/// then skips).
pub(crate) fn public_set(rel: &str, opts: &LoadOptions) -> Option<Arc<Dataset>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(rel);
    if !path.exists() {
        eprintln!("skipped: {} is absent", path.display());
        return None;
    }
    Some(Arc::new(load(&path, opts).unwrap()))
}

/// Fit `m` with no tolerance and a large cap, the front end cancelling after iteration `at`.
pub(crate) fn fit_cancelled_at(m: &mut dyn Model, at: usize) -> FitOutcome {
    let opts = FitOptions {
        max_iter: 1000,
        tol: 0.0,
    };
    let stop = |t: usize| {
        if t == at {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    fit(m, &opts, |t, _, _| stop(t)).unwrap()
}
