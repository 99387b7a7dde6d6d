//! CAN's hyperparameter table (docs/models.md §2.7) and its typed parameters, built once from the
//! checked table.

use crate::engine::models::{Checked, HyperParam, ModelError, ParamKind};

/// CAN's hyperparameters, in the order the GUI shows them.
pub const TABLE: &[HyperParam] = &[
    HyperParam {
        name: "neighbors",
        kind: ParamKind::Count {
            default: 15,
            min: 1,
            max: 100,
            grid: &[5, 10, 15, 20],
        },
        help: "k, neighbours per sample of the adaptive graph: each sample may only link to its \
               k nearest others, and the initial weights use the (k + 1)-th distance \
               (docs/models.md §2.7 step 1, §2.2). A whole number, capped at n − 2. Default 15, \
               as in the authors' public code.",
    },
    HyperParam {
        name: "rounds",
        kind: ParamKind::Count {
            default: 30,
            min: 1,
            max: 1000,
            grid: &[10, 30, 100],
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
            neighbors: p.count("neighbors")?,
            rounds: p.count("rounds")?,
        })
    }

    /// The defaults of the table.
    pub fn defaults() -> Result<Self, ModelError> {
        Self::from_checked(&Checked::new("CAN", TABLE, &Default::default())?)
    }
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
        // The table's check refuses the fraction (the parameter is a count).
        let e = spec.checked().unwrap_err().to_string();
        assert!(e.contains("`neighbors`") && e.contains("not a whole number"), "{e}");
    }
}
