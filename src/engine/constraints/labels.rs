//! Partial labels: a class index or nothing per sample, with named classes (DESIGN.md §3).
//! Ground-truth labels or labels painted by the user; the label matrix feeds 2-STGINMF
//! (docs/models.md §7, `Y_L`).

use super::ConstraintError;
use ndarray::Array2;

/// Per-sample optional class index into `class_names`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Labels {
    of: Vec<Option<usize>>,
    class_names: Vec<String>,
}

impl Labels {
    /// n unlabelled samples, no classes.
    pub fn new(n: usize) -> Self {
        Self {
            of: vec![None; n],
            class_names: Vec::new(),
        }
    }

    /// Labels from parts, checked: `of.len() == n`, every index names a class, class names
    /// non-empty and distinct.
    pub fn from_parts(
        n: usize,
        of: Vec<Option<usize>>,
        class_names: Vec<String>,
    ) -> Result<Self, ConstraintError> {
        if of.len() != n {
            return Err(ConstraintError::LabelCount { got: of.len(), n });
        }
        let mut out = Self::new(n);
        for name in class_names {
            out.add_class(&name)?;
        }
        for (i, c) in of.into_iter().enumerate() {
            out.set(i, c)?;
        }
        Ok(out)
    }

    /// Number of samples.
    pub fn n(&self) -> usize {
        self.of.len()
    }

    /// The class of sample i, if labelled (None also when i is out of range).
    pub fn get(&self, i: usize) -> Option<usize> {
        self.of.get(i).copied().flatten()
    }

    /// Every sample's label.
    pub fn as_slice(&self) -> &[Option<usize>] {
        &self.of
    }

    pub fn class_names(&self) -> &[String] {
        &self.class_names
    }

    pub fn n_classes(&self) -> usize {
        self.class_names.len()
    }

    /// Number of labelled samples.
    pub fn n_labelled(&self) -> usize {
        self.of.iter().filter(|c| c.is_some()).count()
    }

    /// Class index of a name.
    pub fn class_index(&self, name: &str) -> Option<usize> {
        self.class_names.iter().position(|c| c == name)
    }

    /// Set sample i's label; returns the previous one.
    pub fn set(
        &mut self,
        i: usize,
        class: Option<usize>,
    ) -> Result<Option<usize>, ConstraintError> {
        let n = self.of.len();
        if let Some(c) = class
            && c >= self.class_names.len()
        {
            return Err(ConstraintError::UnknownClass {
                class: c,
                n_classes: self.class_names.len(),
            });
        }
        let slot = self
            .of
            .get_mut(i)
            .ok_or(ConstraintError::SampleOutOfRange { index: i, n })?;
        Ok(std::mem::replace(slot, class))
    }

    /// Add a class; returns its index.
    pub fn add_class(&mut self, name: &str) -> Result<usize, ConstraintError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(ConstraintError::EmptyClassName);
        }
        if let Some(index) = self.class_index(name) {
            return Err(ConstraintError::DuplicateClass {
                name: name.to_owned(),
                index,
            });
        }
        self.class_names.push(name.to_owned());
        Ok(self.class_names.len() - 1)
    }

    /// Remove the last class (undo of [`Self::add_class`]); samples still using it lose their
    /// label. Returns its name.
    pub(crate) fn pop_class(&mut self) -> Option<String> {
        let name = self.class_names.pop()?;
        let gone = self.class_names.len();
        for c in &mut self.of {
            if *c == Some(gone) {
                *c = None;
            }
        }
        Some(name)
    }

    /// Label matrix `Y` (n × c): row i is the one-hot code of i's class, zero when unlabelled.
    pub fn label_matrix(&self) -> Array2<f64> {
        let mut y = Array2::zeros((self.of.len(), self.class_names.len()));
        for (i, c) in self.of.iter().enumerate() {
            if let Some(c) = *c {
                y[[i, c]] = 1.0;
            }
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_matrix() {
        let mut l = Labels::new(3);
        assert!(matches!(
            l.set(0, Some(0)),
            Err(ConstraintError::UnknownClass { .. })
        ));
        assert_eq!(l.add_class("cat").unwrap(), 0);
        assert_eq!(l.add_class(" dog ").unwrap(), 1);
        assert_eq!(
            l.add_class("cat").unwrap_err().to_string(),
            "a class named `cat` already exists (class 0)"
        );
        assert!(l.add_class("  ").is_err());
        l.set(2, Some(1)).unwrap();
        assert_eq!(l.set(2, Some(0)).unwrap(), Some(1));
        assert!(matches!(
            l.set(3, None),
            Err(ConstraintError::SampleOutOfRange { .. })
        ));
        assert_eq!(l.n_labelled(), 1);
        let y = l.label_matrix();
        assert_eq!(y.dim(), (3, 2));
        assert_eq!(y.row(2).to_vec(), vec![1.0, 0.0]);
        assert_eq!(y.row(0).sum(), 0.0);
        assert!(Labels::from_parts(2, vec![None], vec![]).is_err());
    }
}
