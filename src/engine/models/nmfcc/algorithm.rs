//! The NMFCC iteration of docs/models.md §3.5 (see the module above for the math): NMF's
//! iteration ([`crate::engine::models::nmf`]) with the link addends of [`LinkTerms`] in the H
//! rule, built from the same kit functions in the same order, so that α = β = 0 gives NMF's
//! iterates bit for bit.

use super::links::LinkTerms;
use super::params::NmfccParams;
use crate::engine::constraints::{Links, SideInfo};
use crate::engine::data::Dataset;
use crate::engine::models::mu::{
    Addends, Block, HRule, MuState, checked_start, mu_rule, update_h_columns_plus,
};
use crate::engine::models::{Model, ModelError, ModelKind, ModelSpec, Objective, Term};
use ndarray::{Array2, ArrayView2, Zip};
use std::sync::Arc;

/// NMF with must-link and cannot-link constraints (docs/models.md §3.5, reconstructed).
///
/// One [`Model::step`] is `H ← H ⊙ (WᵀX + αHA) ⊘ max(WᵀW H + αH(A⊙HᵀH) + βH(B⊙HᵀH), ε)` with
/// the link parts at the H of the start of the step ([`LinkRule`]), then NMF's W rule, then
/// the link terms and addends at the new H (one pass over the pairs, which the next step's H
/// rule reuses). Everything else is NMF's ([`MuState`]): the products into preallocated
/// workspaces, nothing m×n, the trace-identity objective with an exact recomputation every 50
/// iterations, and on a large X the blocked single pass that reads X once per iteration.
pub struct Nmfcc {
    pub(crate) mu: MuState,
    params: NmfccParams,
    links: LinkTerms,
    /// The reconstruction term of the current iterate.
    recon: f64,
}

impl Nmfcc {
    /// Seeded start (NMF's, docs/models.md §3.1) or the spec's warm start, from a spec checked
    /// here; the links come from `side` ([`SideInfo::links`]).
    pub fn new(data: Arc<Dataset>, spec: &ModelSpec, side: &SideInfo) -> Result<Self, ModelError> {
        let params = NmfccParams::from_checked(&spec.validate(data.m(), data.n())?)?;
        Self::start(data, spec, params, side)
    }

    /// The same with parameters already checked (the registry's build path).
    pub(super) fn start(
        data: Arc<Dataset>,
        spec: &ModelSpec,
        params: NmfccParams,
        side: &SideInfo,
    ) -> Result<Self, ModelError> {
        let (w, h) = checked_start(&data, spec)?;
        Self::with_factors(data, params, &side.links(), w, h)
    }

    /// Start from these factors exactly (the seeded draw or a warm start; the first update's
    /// floor lifts any zero entry, docs/models.md §10.1). Needs at least one link.
    pub fn with_factors(
        data: Arc<Dataset>,
        params: NmfccParams,
        links: &Links,
        w: Array2<f64>,
        h: Array2<f64>,
    ) -> Result<Self, ModelError> {
        if links.must.is_empty() && links.cannot.is_empty() {
            // `build` checks this for every front end; direct callers (tests, warm starts) too.
            super::KIND.check_side(&SideInfo::default())?;
        }
        let links = LinkTerms::new(data.n(), w.ncols(), links, params.alpha, params.beta)?;
        let mu = MuState::new(data, w, h);
        let mut s = Self {
            recon: mu.trace_recon(),
            mu,
            params,
            links,
        };
        s.links.update(s.mu.h.view());
        Ok(s)
    }

    /// The checked hyperparameters.
    pub fn params(&self) -> NmfccParams {
        self.params
    }

    /// `(must-links, cannot-links, pairs in both)` the model uses.
    pub fn link_counts(&self) -> (usize, usize, usize) {
        self.links.counts()
    }
}

/// NMFCC's terms of the H rule: `+ αHA` in the numerator and `+ αH(A⊙G) + βH(B⊙G)` in the
/// denominator (k×n each, of the H of the start of the step).
struct LinkRule<'a> {
    num: &'a Array2<f64>,
    den: &'a Array2<f64>,
}

impl HRule for LinkRule<'_> {
    const WTWH_IN_BLOCKED_PASS: bool = false;

    fn update_whole(&self, h: &mut Array2<f64>, wtx: &Array2<f64>, wtwh: &Array2<f64>) {
        Zip::from(h)
            .and(wtx)
            .and(wtwh)
            .and(self.num)
            .and(self.den)
            .for_each(|z, &x, &g, &na, &da| *z = mu_rule(*z, x + na, g + da));
    }

    /// The kit's fused pass with the link addends ([`update_h_columns_plus`]). The addends were
    /// computed from the H of the start of the step, so updating H block by block changes none
    /// of them.
    fn update_block(&self, b: Block<'_>) {
        let (Some(num), Some(den)) = (self.num.as_slice(), self.den.as_slice()) else {
            return;
        };
        let Block {
            hpass,
            wtw,
            h,
            wtx,
            n,
            j0,
            len,
            ..
        } = b;
        let add = Addends { num, den };
        update_h_columns_plus(hpass, wtw, h, n, j0, wtx, n, j0, len, add);
    }
}

/// The objective `reconstruction + must_link + cannot_link`, with its three terms.
fn objective_of(recon: f64, links: &LinkTerms) -> Objective {
    let (must, cannot) = (links.must_loss(), links.cannot_loss());
    Objective {
        total: recon + must + cannot,
        terms: vec![
            Term {
                name: "reconstruction".into(),
                value: recon,
            },
            Term {
                name: "must_link".into(),
                value: must,
            },
            Term {
                name: "cannot_link".into(),
                value: cannot,
            },
        ],
    }
}

impl Model for Nmfcc {
    fn kind(&self) -> ModelKind {
        super::KIND
    }

    fn step(&mut self) -> Result<Objective, ModelError> {
        let rule = LinkRule {
            num: self.links.num(),
            den: self.links.den(),
        };
        self.mu.h_step(&rule);
        // W ← W ⊙ (XHᵀ) ⊘ max(W HHᵀ, ε): the links do not involve W.
        self.mu.w_step();
        self.recon = self.mu.advance();
        // The link terms of the new H, and the addends of the next H rule.
        self.links.update(self.mu.h.view());
        Ok(self.objective())
    }

    fn h(&self) -> ArrayView2<'_, f64> {
        self.mu.h.view()
    }

    fn w(&self) -> Option<ArrayView2<'_, f64>> {
        Some(self.mu.work.w.view())
    }

    fn objective(&self) -> Objective {
        objective_of(self.recon, &self.links)
    }

    /// No rescaling: the must-link term fixes the scale of H (docs/models.md §3.5, §10.3).
    fn finish(&mut self) {}

    /// Pairs that are both a must-link and a cannot-link (contradictory constraints).
    fn notes(&self) -> Vec<String> {
        let (must, cannot, both) = self.links.counts();
        if both == 0 {
            return Vec::new();
        }
        vec![format!(
            "{both} of the {must} must-link pairs are also among the {cannot} cannot-link \
             pairs (contradictory constraints): both terms apply to them"
        )]
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
