//! 2-STGINMF's bench case (docs/models.md §7) as `run --model stginmf --reveal 0.1` fits it on
//! the digits: a stratified, seeded 10 % of the labels given, the default parameters, both
//! stages and every self-training round to the model's own stop.

use super::KIND;
use crate::engine::constraints::SideInfo;
use crate::engine::constraints::generate::reveal_stratified;
use crate::engine::data::Dataset;
use crate::engine::models::bench::{Bench, BenchError};
use crate::engine::models::{ModelSpec, build};
use std::sync::Arc;

/// The fit on the digits, when they have labels.
pub(super) fn cases(b: &mut dyn Bench) -> Result<(), BenchError> {
    let Some(p) = b.digits().filter(|p| !p.labels.is_empty()) else {
        return Ok(());
    };
    let classes = p.labels.iter().copied().max().map_or(0, |c| c + 1);
    let given = reveal_stratified(&p.labels, 0.1, 0)?;
    let n_given = given.iter().flatten().count();
    let data = Arc::new(Dataset::from_parts(p.x, None, vec![], "digits"));
    let side = SideInfo::new(Vec::new(), given);
    let spec = ModelSpec::new(KIND, classes, 0);
    let (mut rounds, mut steps) = (0, 0);
    let name =
        format!("stginmf_fit 10 % labels ({n_given} given), self-training [digits, k={classes}]");
    let reps = b.reps().min(3);
    let mut make = || build(&spec, data.clone(), &side).ok();
    if let Some((s, phase)) = b.time_fit(&name, reps, &mut make) {
        steps = s;
        rounds = phase.map_or(0, |p| p.round + 1);
    }
    b.note(format!(
        "stginmf [digits, 10 % labels]: {steps} ALS steps in {rounds} round(s) per fit"
    ));
    Ok(())
}
