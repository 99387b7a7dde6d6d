//! CAN's hyperparameter table (docs/models.md §2.7) and its typed parameters, built once from the
//! checked table.

use crate::engine::models::{Checked, HyperParam, ModelError, ParamKind};

/// CAN's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam {
        name: "neighbors",
        kind: ParamKind::Number {
            default: 15.0,
            min: 1.0,
            max: 100.0,
            log_scale: false,
            grid: &[5.0, 10.0, 15.0, 20.0],
        },
        help: "k, neighbours per sample of the adaptive graph: each sample may only link to its \
               k nearest others, and the initial weights use the (k + 1)-th distance \
               (docs/models.md §2.7 step 1, §2.2). A whole number, capped at n − 2. Default 15, \
               as in the authors' public code.",
    },
    HyperParam {
        name: "rounds",
        kind: ParamKind::Number {
            default: 30.0,
            min: 1.0,
            max: 1000.0,
            log_scale: false,
            grid: &[10.0, 30.0, 100.0],
        },
        help: "Most graph updates before CAN stops (docs/models.md §2.7 step 3: 30 in the \
               authors' code). It stops earlier once the graph has exactly c connected \
               components.",
    },
];

/// Typed CAN parameters ([`CanParams::from_checked`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CanParams {
    /// k ≥ 1: neighbours per sample.
    pub neighbors: usize,
    /// Most graph updates.
    pub rounds: usize,
}

impl CanParams {
    /// The typed parameters of a checked table; both must be whole numbers.
    pub fn from_checked(p: &Checked) -> Result<Self, ModelError> {
        Ok(Self {
            neighbors: whole(p, "neighbors")?,
            rounds: whole(p, "rounds")?,
        })
    }

    /// The defaults of the table.
    pub fn defaults() -> Result<Self, ModelError> {
        Self::from_checked(&Checked::new("CAN", TABLE, &Default::default())?)
    }
}

fn whole(p: &Checked, name: &str) -> Result<usize, ModelError> {
    let v = p.number(name)?;
    if v.fract() != 0.0 {
        return Err(ModelError::InvalidParam {
            model: "CAN",
            name: name.into(),
            why: format!("= {v} is not a whole number"),
        });
    }
    Ok(v as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::models::can::KIND;
    use crate::engine::models::{ModelSpec, ParamValue};

    #[test]
    fn defaults_come_from_the_table_and_fractions_are_refused() {
        assert_eq!(CanParams::defaults().unwrap(), CanParams {
            neighbors: 15,
            rounds: 30
        });
        let spec = ModelSpec::new(KIND, 2, 0).with("neighbors", ParamValue::Number(2.5));
        let e = CanParams::from_checked(&spec.checked().unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("`neighbors`") && e.contains("not a whole number"), "{e}");
    }
}
