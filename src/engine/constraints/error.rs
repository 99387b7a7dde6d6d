use super::Triplet;

/// A refused constraint edit; the message names the triplet, sample or class at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConstraintError {
    #[error("triplet {t}: {role} = {index} is out of range (the dataset has {n} samples)")]
    IndexOutOfRange {
        t: Triplet,
        role: &'static str,
        index: usize,
        n: usize,
    },
    #[error("triplet {t}: i, j and q must be three different samples")]
    NotDistinct { t: Triplet },
    #[error("triplet {t} is already in the list (at position {pos})")]
    Duplicate { t: Triplet, pos: usize },
    #[error("triplet {t} is not in the list")]
    NotFound { t: Triplet },
    #[error("sample {index} is out of range (the dataset has {n} samples)")]
    SampleOutOfRange { index: usize, n: usize },
    #[error("class {class} does not exist ({n_classes} classes are defined)")]
    UnknownClass { class: usize, n_classes: usize },
    #[error("a class named `{name}` already exists (class {index})")]
    DuplicateClass { name: String, index: usize },
    #[error("a class name must not be empty")]
    EmptyClassName,
    #[error("{got} labels given for {n} samples")]
    LabelCount { got: usize, n: usize },
}
