//! Triplets kept: the share of triplets (i, j, q) a representation orders as the triplet says,
//! ‖z_i − z_j‖² < ‖z_i − z_q‖² (docs/models.md §4, §8.4; used on X and on H, and by the GUI's
//! "show violations", and by the side-by-side comparison of two runs: [`kept_by_one`]).

use super::EvalError;
use crate::engine::constraints::Triplet;
use ndarray::ArrayView2;

fn sq_dist(points: ArrayView2<'_, f64>, a: usize, b: usize) -> f64 {
    points
        .column(a)
        .iter()
        .zip(points.column(b))
        .map(|(x, y)| (x - y) * (x - y))
        .sum()
}

/// For each triplet, whether ‖z_i − z_j‖² < ‖z_i − z_q‖² holds (strictly; a tie is a violation)
/// for the points given as the columns of `points`.
pub fn triplets_satisfied(
    points: ArrayView2<'_, f64>,
    triplets: &[Triplet],
) -> Result<Vec<bool>, EvalError> {
    let n = points.ncols();
    triplets
        .iter()
        .enumerate()
        .map(|(position, t)| {
            if t.i >= n || t.j >= n || t.q >= n {
                return Err(EvalError::TripletOutOfRange {
                    position,
                    i: t.i,
                    j: t.j,
                    q: t.q,
                    n,
                });
            }
            Ok(sq_dist(points, t.i, t.j) < sq_dist(points, t.i, t.q))
        })
        .collect()
}

/// The share (0..=1) of triplets kept by the points (columns of `points`).
pub fn triplets_kept(points: ArrayView2<'_, f64>, triplets: &[Triplet]) -> Result<f64, EvalError> {
    if triplets.is_empty() {
        return Err(EvalError::NoTriplets);
    }
    let ok = triplets_satisfied(points, triplets)?;
    Ok(ok.iter().filter(|&&b| b).count() as f64 / ok.len() as f64)
}

/// Which triplets each of two representations of the same samples keeps, and those kept by
/// one and violated by the other (positions in the triplet list, in order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeptByOne {
    pub kept_a: Vec<bool>,
    pub kept_b: Vec<bool>,
    /// Kept by A, violated by B.
    pub only_a: Vec<usize>,
    /// Kept by B, violated by A.
    pub only_b: Vec<usize>,
}

impl KeptByOne {
    /// Triplets kept by both.
    pub fn both(&self) -> usize {
        self.kept_a
            .iter()
            .zip(&self.kept_b)
            .filter(|(a, b)| **a && **b)
            .count()
    }

    /// Triplets violated by both.
    pub fn neither(&self) -> usize {
        self.kept_a.len() - self.both() - self.only_a.len() - self.only_b.len()
    }
}

/// [`triplets_satisfied`] for the points of A and of B (columns; the dimensions may differ,
/// e.g. two runs' H with different k), and the triplets on which they disagree.
pub fn kept_by_one(
    a: ArrayView2<'_, f64>,
    b: ArrayView2<'_, f64>,
    triplets: &[Triplet],
) -> Result<KeptByOne, EvalError> {
    if a.ncols() != b.ncols() {
        return Err(EvalError::LengthMismatch {
            what_a: "the first representation's samples",
            len_a: a.ncols(),
            what_b: "the second's",
            len_b: b.ncols(),
        });
    }
    let kept_a = triplets_satisfied(a, triplets)?;
    let kept_b = triplets_satisfied(b, triplets)?;
    let pick = |x: &[bool], y: &[bool]| -> Vec<usize> {
        (0..x.len()).filter(|&t| x[t] && !y[t]).collect()
    };
    Ok(KeptByOne {
        only_a: pick(&kept_a, &kept_b),
        only_b: pick(&kept_b, &kept_a),
        kept_a,
        kept_b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn t(i: usize, j: usize, q: usize) -> Triplet {
        Triplet { i, j, q }
    }

    /// Points (columns) z0 = (0,0), z1 = (1,0), z2 = (0,2), z3 = (3,0), z4 = (−1,0).
    /// (0,1,2): 1 < 4 kept.      (0,2,1): 4 < 1 violated.   (1,0,3): 1 < 4 kept.
    /// (2,0,1): 4 < 5 kept.      (3,1,0): 4 < 9 kept.       (2,1,0): 5 < 4 violated.
    /// (0,1,4): 1 < 1 is a tie, violated. Kept: 4 of 7.
    #[test]
    fn hand_example() {
        let z = array![[0.0, 1.0, 0.0, 3.0, -1.0], [0.0, 0.0, 2.0, 0.0, 0.0]];
        let ts = [
            t(0, 1, 2),
            t(0, 2, 1),
            t(1, 0, 3),
            t(2, 0, 1),
            t(3, 1, 0),
            t(2, 1, 0),
            t(0, 1, 4),
        ];
        assert_eq!(
            triplets_satisfied(z.view(), &ts).unwrap(),
            vec![true, false, true, true, true, false, false]
        );
        assert!((triplets_kept(z.view(), &ts).unwrap() - 4.0 / 7.0).abs() < 1e-15);
    }

    /// Two representations of four samples, by hand: A on a line at z = (0, 1, 3, 10), B at
    /// z = (0, 5, 4, 1) in two dimensions (k may differ). Squared distances A | B:
    /// (0,1,2): 1 < 9 kept | 25 < 16 violated: only A.   (0,2,1): no | 16 < 25 kept: only B.
    /// (0,3,1): 100 < 1 no | 1 < 25 kept: only B.        (1,2,3): 4 < 81 | 1 < 16: both.
    /// (3,0,1): 100 < 81 no | 1 < 16 kept: only B.       (2,3,0): 49 < 9 no | 9 < 16: only B.
    /// (1,0,3): 1 < 81 kept | 25 < 16 no: only A.        (2,1,3): 4 < 49 | 1 < 9: both.
    #[test]
    fn kept_by_one_run_and_not_the_other_by_hand() {
        let a = array![[0.0, 1.0, 3.0, 10.0]];
        let b = array![[0.0, 5.0, 4.0, 1.0], [0.0, 0.0, 0.0, 0.0]];
        let ts = [
            t(0, 1, 2),
            t(0, 2, 1),
            t(0, 3, 1),
            t(1, 2, 3),
            t(3, 0, 1),
            t(2, 3, 0),
            t(1, 0, 3),
            t(2, 1, 3),
        ];
        let k = kept_by_one(a.view(), b.view(), &ts).unwrap();
        assert_eq!(k.only_a, vec![0, 6]);
        assert_eq!(k.only_b, vec![1, 2, 4, 5]);
        assert_eq!((k.both(), k.neither()), (2, 0));
        // Swapping the runs swaps the lists.
        let s = kept_by_one(b.view(), a.view(), &ts).unwrap();
        assert_eq!((s.only_a, s.only_b), (k.only_b.clone(), k.only_a.clone()));
        // Violated by both: j and q at the same distance from i (a tie is a violation).
        let c = array![[0.0, 1.0, -1.0]];
        let tie = kept_by_one(c.view(), c.view(), &[t(0, 1, 2)]).unwrap();
        assert_eq!((tie.both(), tie.neither()), (0, 1));
        assert!(matches!(
            kept_by_one(a.view(), b.slice(ndarray::s![.., ..3]), &ts),
            Err(EvalError::LengthMismatch { .. })
        ));
    }

    #[test]
    fn errors() {
        let z = array![[0.0, 1.0]];
        assert_eq!(triplets_kept(z.view(), &[]), Err(EvalError::NoTriplets));
        assert!(matches!(
            triplets_kept(z.view(), &[t(0, 1, 2)]),
            Err(EvalError::TripletOutOfRange {
                position: 0,
                n: 2,
                ..
            })
        ));
    }
}
