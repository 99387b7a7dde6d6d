//! NMFCC's link terms over the must-link and cannot-link pairs only (docs/models.md §3.5): for
//! every pair its inner product `s = h_iᵀh_j`, the two terms of the objective, and the parts
//! they add to the H rule — never the n×n `HᵀH` or the masks A, B.
//!
//! With `A`, `B` the symmetric 0/1 masks of the must- and cannot-links (each unordered pair set
//! at (i, j) and (j, i)) and `G = HᵀH`,
//!
//! * `must_link   = (α/2)‖A ⊙ (G − 11ᵀ)‖²_F = α Σ_{(i,j)∈ML} (1 − s_ij)²`,
//! * `cannot_link = (β/2)‖B ⊙ G‖²_F         = β Σ_{(i,q)∈CL} s_iq²`,
//! * numerator addend   `α H A`                      (column i: `α Σ_{j: (i,j)∈ML} h_j`),
//! * denominator addend `α H (A ⊙ G) + β H (B ⊙ G)`  (column i: `α Σ_ML s_ij h_j + β Σ_CL s_iq h_q`),
//!
//! so that the gradient of the two terms is `2 (den − num)`. One pass over the pairs, each
//! O(k): the dot product of two rows of Hᵀ (contiguous, one sample each) and its contributions
//! scattered into the rows of both samples, in the pairs' order (sorted), so the sums are
//! repeatable bit for bit. H is transposed into Hᵀ before the pass and the addends back into
//! k×n after it, the layout of `WᵀX` that the H rule reads them in. The plain reference (the
//! masks and `HᵀH` dense, as the formulas read) is in the tests.

use crate::engine::constraints::Links;
use faer::traits::pulp;
use crate::engine::models::ModelError;
use ndarray::{Array2, ArrayView2};

/// The link pairs, the terms and addends at the last H given to [`LinkTerms::update`], and
/// the n×k workspaces of the pass.
#[derive(Debug, Clone)]
pub struct LinkTerms {
    k: usize,
    n: usize,
    must: Vec<(usize, usize)>,
    cannot: Vec<(usize, usize)>,
    alpha: f64,
    beta: f64,
    /// Pairs that are in both lists (contradictory constraints; both terms apply).
    both: usize,
    h_t: Vec<f64>,   // n×k  Hᵀ
    num_t: Vec<f64>, // n×k  (α H A)ᵀ
    den_t: Vec<f64>, // n×k  (α H (A ⊙ G) + β H (B ⊙ G))ᵀ
    num: Array2<f64>,
    den: Array2<f64>,
    must_loss: f64,
    cannot_loss: f64,
}

impl LinkTerms {
    /// The pairs of `links` over n samples for rank k, with weights α (must) and β (cannot).
    /// Refuses a pair that is not two distinct samples below n. The terms are those of H = 0
    /// until [`Self::update`] is called.
    pub fn new(
        n: usize,
        k: usize,
        links: &Links,
        alpha: f64,
        beta: f64,
    ) -> Result<Self, ModelError> {
        for (kind, pairs) in [("must-link", &links.must), ("cannot-link", &links.cannot)] {
            if let Some(&(i, j)) = pairs.iter().find(|&&(i, j)| i == j || i.max(j) >= n) {
                return Err(ModelError::InvalidParam {
                    model: "NMFCC",
                    name: "links".into(),
                    why: format!(
                        "contain the {kind} ({i}, {j}), which is not two distinct samples below \
                         n = {n}"
                    ),
                });
            }
        }
        let both = count_common(&links.must, &links.cannot);
        Ok(Self {
            k,
            n,
            must: links.must.clone(),
            cannot: links.cannot.clone(),
            alpha,
            beta,
            both,
            h_t: vec![0.0; n * k],
            num_t: vec![0.0; n * k],
            den_t: vec![0.0; n * k],
            num: Array2::zeros((k, n)),
            den: Array2::zeros((k, n)),
            must_loss: 0.0,
            cannot_loss: 0.0,
        })
    }

    /// The terms and addends at `h` (k×n), in one pass over the pairs.
    pub fn update(&mut self, h: ArrayView2<'_, f64>) {
        transpose_into(h, &mut self.h_t);
        // Compiled for the CPU's instruction set, so that the dot products' `mul_add` are FMA
        // instructions, not calls into the software `fma` (docs/performance.md, "The baselines' own passes").
        pulp::Arch::new().dispatch(PairPass(self));
        untranspose_into(&self.num_t, self.n, &mut self.num);
        untranspose_into(&self.den_t, self.n, &mut self.den);
    }

    /// The pass over the pairs, from `h_t` into `num_t`, `den_t` and the two terms.
    #[inline(always)]
    fn pair_pass(&mut self) {
        let k = self.k;
        self.num_t.fill(0.0);
        self.den_t.fill(0.0);
        let (alpha, beta) = (self.alpha, self.beta);
        let ht = &self.h_t[..];
        let (num_t, den_t) = (&mut self.num_t[..], &mut self.den_t[..]);
        let mut must = 0.0;
        for &(i, j) in &self.must {
            let (hi, hj) = (&ht[i * k..(i + 1) * k], &ht[j * k..(j + 1) * k]);
            let s = dot(hi, hj);
            must += (1.0 - s) * (1.0 - s);
            let c = alpha * s;
            axpy2(alpha, c, hj, &mut num_t[i * k..(i + 1) * k], &mut den_t[i * k..(i + 1) * k]);
            axpy2(alpha, c, hi, &mut num_t[j * k..(j + 1) * k], &mut den_t[j * k..(j + 1) * k]);
        }
        let mut cannot = 0.0;
        for &(i, q) in &self.cannot {
            let (hi, hq) = (&ht[i * k..(i + 1) * k], &ht[q * k..(q + 1) * k]);
            let s = dot(hi, hq);
            cannot += s * s;
            let c = beta * s;
            axpy(c, hq, &mut den_t[i * k..(i + 1) * k]);
            axpy(c, hi, &mut den_t[q * k..(q + 1) * k]);
        }
        self.must_loss = alpha * must;
        self.cannot_loss = beta * cannot;
    }

    /// `α H A` (k×n): the numerator addend of the H rule at the last H.
    pub fn num(&self) -> &Array2<f64> {
        &self.num
    }

    /// `α H (A ⊙ HᵀH) + β H (B ⊙ HᵀH)` (k×n): the denominator addend at the last H.
    pub fn den(&self) -> &Array2<f64> {
        &self.den
    }

    /// `α Σ_ML (1 − h_iᵀh_j)²` at the last H.
    pub fn must_loss(&self) -> f64 {
        self.must_loss
    }

    /// `β Σ_CL (h_iᵀh_q)²` at the last H.
    pub fn cannot_loss(&self) -> f64 {
        self.cannot_loss
    }

    /// `(must-links, cannot-links, pairs in both lists)`.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.must.len(), self.cannot.len(), self.both)
    }
}

/// [`LinkTerms::pair_pass`] as a pulp job.
struct PairPass<'a>(&'a mut LinkTerms);

impl pulp::WithSimd for PairPass<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        self.0.pair_pass();
    }
}

/// Pairs common to two sorted lists of unordered pairs.
fn count_common(a: &[(usize, usize)], b: &[(usize, usize)]) -> usize {
    let (mut p, mut q, mut common) = (0, 0, 0);
    while p < a.len() && q < b.len() {
        match a[p].cmp(&b[q]) {
            std::cmp::Ordering::Less => p += 1,
            std::cmp::Ordering::Greater => q += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                p += 1;
                q += 1;
            }
        }
    }
    common
}

/// `Σ a_l b_l` in four partial sums by index mod 4, added in a fixed order (four short chains
/// instead of one latency-bound chain of k; repeatable bit for bit).
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    let (ac, bc) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ar, br) = (ac.remainder(), bc.remainder());
    for (x, y) in ac.zip(bc) {
        for l in 0..4 {
            s[l] = x[l].mul_add(y[l], s[l]);
        }
    }
    for (l, (x, y)) in ar.iter().zip(br).enumerate() {
        s[l] = x.mul_add(*y, s[l]);
    }
    (s[0] + s[1]) + (s[2] + s[3])
}

/// `num += α v`, `den += c v`.
#[inline(always)]
fn axpy2(alpha: f64, c: f64, v: &[f64], num: &mut [f64], den: &mut [f64]) {
    for ((n, d), &x) in num.iter_mut().zip(den.iter_mut()).zip(v) {
        *n += alpha * x;
        *d += c * x;
    }
}

/// `y += c v`.
#[inline(always)]
fn axpy(c: f64, v: &[f64], y: &mut [f64]) {
    for (d, &x) in y.iter_mut().zip(v) {
        *d += c * x;
    }
}

/// Columns per block of the transposes: a block's rows of the n×k side stay in L1.
const T_BLOCK: usize = 64;

/// `out (n×k, row-major) ← hᵀ` for h k×n, in blocks of [`T_BLOCK`] samples.
fn transpose_into(h: ArrayView2<'_, f64>, out: &mut [f64]) {
    let (k, n) = h.dim();
    for j0 in (0..n).step_by(T_BLOCK) {
        let j1 = (j0 + T_BLOCK).min(n);
        for a in 0..k {
            let row = h.row(a);
            for j in j0..j1 {
                out[j * k + a] = row[j];
            }
        }
    }
}

/// `out (k×n) ← tᵀ` for t n×k row-major, in blocks of [`T_BLOCK`] samples.
fn untranspose_into(t: &[f64], n: usize, out: &mut Array2<f64>) {
    let k = out.nrows();
    for j0 in (0..n).step_by(T_BLOCK) {
        let j1 = (j0 + T_BLOCK).min(n);
        for a in 0..k {
            let mut row = out.row_mut(a);
            for j in j0..j1 {
                row[j] = t[j * k + a];
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::engine::models::mu::fd;
    use ndarray::Array2;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The terms and addends as docs/models.md §3.5 writes them: dense masks A, B (both
    /// (i, j) and (j, i) set), G = HᵀH, `(α/2)‖A ⊙ (G − 11ᵀ)‖²`, `(β/2)‖B ⊙ G‖²`, `α H A` and
    /// `α H (A ⊙ G) + β H (B ⊙ G)`.
    pub(crate) fn reference(
        h: &Array2<f64>,
        links: &Links,
        alpha: f64,
        beta: f64,
    ) -> (f64, f64, Array2<f64>, Array2<f64>) {
        let n = h.ncols();
        let mask = |pairs: &[(usize, usize)]| {
            let mut m = Array2::<f64>::zeros((n, n));
            for &(i, j) in pairs {
                m[[i, j]] = 1.0;
                m[[j, i]] = 1.0;
            }
            m
        };
        let (a, b) = (mask(&links.must), mask(&links.cannot));
        let g = h.t().dot(h);
        let must = 0.5 * alpha * (&a * &(&g - 1.0)).mapv(|v| v * v).sum();
        let cannot = 0.5 * beta * (&b * &g).mapv(|v| v * v).sum();
        let num = h.dot(&a) * alpha;
        let den = h.dot(&(&a * &g)) * alpha + h.dot(&(&b * &g)) * beta;
        (must, cannot, num, den)
    }

    /// Random links over n samples, a pair possibly in both lists, one sample in many pairs.
    pub(crate) fn random_links(n: usize, count: usize, seed: u64) -> Links {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut draw = |count: usize| {
            let mut set = std::collections::BTreeSet::new();
            while set.len() < count {
                let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
                if i != j {
                    set.insert((i.min(j), i.max(j)));
                }
            }
            set.into_iter().collect::<Vec<_>>()
        };
        let mut must = draw(count);
        let mut cannot = draw(count);
        // Sample 0 in many pairs of both kinds, one pair in both lists.
        must.extend((1..6).map(|j| (0, j)));
        cannot.extend((3..9).map(|j| (0, j)));
        for l in [&mut must, &mut cannot] {
            l.sort_unstable();
            l.dedup();
        }
        Links { must, cannot }
    }

    fn random_h(k: usize, n: usize, seed: u64) -> Array2<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Array2::from_shape_simple_fn((k, n), || rng.r#gen::<f64>() * 0.8)
    }

    fn rel(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        fd::relative_error(b, a)
    }

    #[test]
    fn the_pair_pass_matches_the_dense_formulas() {
        // k = 7: one chunk of four and a remainder of three in the dot products.
        let (k, n) = (7, 40);
        let links = random_links(n, 30, 1);
        let h = random_h(k, n, 2);
        let (alpha, beta) = (0.7, 2.5);
        let mut lt = LinkTerms::new(n, k, &links, alpha, beta).unwrap();
        lt.update(h.view());
        let (must, cannot, num, den) = reference(&h, &links, alpha, beta);
        assert!((lt.must_loss() - must).abs() <= 1e-12 * must, "{} {must}", lt.must_loss());
        assert!((lt.cannot_loss() - cannot).abs() <= 1e-12 * cannot);
        assert!(rel(lt.num(), &num) <= 1e-14, "num {}", rel(lt.num(), &num));
        assert!(rel(lt.den(), &den) <= 1e-14, "den {}", rel(lt.den(), &den));
        // Samples in no pair get nothing.
        let linked: std::collections::BTreeSet<usize> = links
            .must
            .iter()
            .chain(&links.cannot)
            .flat_map(|&(i, j)| [i, j])
            .collect();
        for j in (0..n).filter(|j| !linked.contains(j)) {
            assert!(lt.num().column(j).iter().chain(lt.den().column(j)).all(|&v| v == 0.0));
        }
        let common = links.must.iter().filter(|p| links.cannot.contains(p)).count();
        assert!(common >= 3);
        assert_eq!(lt.counts(), (links.must.len(), links.cannot.len(), common));
    }

    /// The gradient of the two link terms is `2 (den − num)` (docs/models.md §3.5), against
    /// central differences of the dense formulas.
    #[test]
    fn link_gradient_matches_finite_differences() {
        let (k, n) = (5, 25);
        let links = random_links(n, 20, 3);
        let h = random_h(k, n, 4);
        for (alpha, beta) in [(1.0, 0.0), (0.0, 1.0), (0.3, 4.0)] {
            let mut lt = LinkTerms::new(n, k, &links, alpha, beta).unwrap();
            lt.update(h.view());
            let analytic = (lt.den() - lt.num()) * 2.0;
            let f = |z: &Array2<f64>| {
                let (m, c, _, _) = reference(z, &links, alpha, beta);
                m + c
            };
            let numeric = fd::gradient(f, &h, 1e-6);
            let e = fd::relative_error(&analytic, &numeric);
            assert!(e < 1e-7, "α {alpha} β {beta}: relative error {e}");
        }
    }

    #[test]
    fn zero_weights_give_exact_zeros_and_bad_pairs_are_refused() {
        let (k, n) = (3, 12);
        let links = random_links(n, 6, 5);
        let mut lt = LinkTerms::new(n, k, &links, 0.0, 0.0).unwrap();
        lt.update(random_h(k, n, 6).view());
        assert!(lt.num().iter().chain(lt.den().iter()).all(|v| v.to_bits() == 0));
        assert_eq!((lt.must_loss().to_bits(), lt.cannot_loss().to_bits()), (0, 0));
        for bad in [(2, 2), (3, 12)] {
            let l = Links {
                must: vec![(0, 1)],
                cannot: vec![bad],
            };
            let e = LinkTerms::new(n, k, &l, 1.0, 1.0).unwrap_err().to_string();
            assert!(e.contains("cannot-link") && e.contains("n = 12"), "{e}");
        }
    }
}
