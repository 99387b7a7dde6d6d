//! Triplets kept: the share of triplets (i, j, q) a representation orders as the triplet says,
//! ‖z_i − z_j‖² < ‖z_i − z_q‖² (docs/models.md §4, §8.4; used on X and on H, and by the GUI's
//! "show violations").

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
