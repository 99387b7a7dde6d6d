//! Scaffolding the models' tests share: the public sets of `../shared/data`, skipped with a
//! message when absent. (A fit stopped by the front end at a given iteration is
//! `jobs::experiment::fit_cancelled_at`: the fit loop belongs to the jobs, above the models.)
//! What each model's test asserts stays in its own `tests.rs`.

use crate::engine::data::{Dataset, LoadOptions, load};
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
