use super::*;
use crate::engine::models::SideNeed;
use crate::engine::models::rpnmf::paper_spec;
use crate::engine::models::mu::{fd, gram_times, mu_update, random_wh, wt_x_whole, xh_t_whole};
use crate::engine::constraints::generate::random_triplets;
use crate::engine::linalg::{Csr, Op, gemm_into};
use crate::engine::models::{ParamValue, build};
use crate::engine::models::rpnmf::triplets::{margins, ranking_loss};
use ndarray::Zip;
use ndarray::array;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn dataset(x: Array2<f64>) -> Arc<Dataset> {
    Arc::new(Dataset::from_parts(x, None, vec![], "test"))
}

/// Three clusters of 20 samples in 12-D, unit-L2 columns; labels = cluster.
fn clusters(seed: u64) -> (Arc<Dataset>, Vec<usize>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = 60;
    let mut x = Array2::from_shape_fn((12, n), |(r, c)| {
        let centre = if r / 4 == c % 3 { 1.0 } else { 0.0 };
        centre + 0.3 * rng.r#gen::<f64>()
    });
    for mut col in x.columns_mut() {
        let norm = col.dot(&col).sqrt();
        col /= norm;
    }
    (dataset(x), (0..n).map(|c| c % 3).collect())
}

/// Label-consistent triplets: j from i's class, q from another.
fn label_triplets(y: &[usize], count: usize, seed: u64) -> Vec<Triplet> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = y.len();
    let mut out = std::collections::BTreeSet::new();
    while out.len() < count {
        let (i, j, q) = (
            rng.gen_range(0..n),
            rng.gen_range(0..n),
            rng.gen_range(0..n),
        );
        if i != j && y[i] == y[j] && y[q] != y[i] {
            out.insert(Triplet::new(i, j, q));
        }
    }
    out.into_iter().collect()
}

fn spec(k: usize, seed: u64, params: &[(&str, f64)]) -> ModelSpec {
    // The paper's setting (α = 0.1, δ = 10, raw H), which these tests were written for;
    // the defaults are the project's (docs/models.md §4.2).
    let mut s = paper_spec(k, seed);
    for (n, v) in params {
        // A stored 0/1 is read as a flag by the table check.
        s.params.insert((*n).into(), ParamValue::Number(*v));
    }
    s
}

fn sq(h: ArrayView2<'_, f64>, a: usize, b: usize) -> f64 {
    h.rows().into_iter().map(|r| (r[a] - r[b]).powi(2)).sum()
}

/// The step as it was before F's parts were kept across steps (commit f8cc938), as a
/// test-only reference: F from scratch at H and at every candidate (HHᵀ by GEMM, ⟨WᵀX, H⟩
/// by a serial sum, the margins on the k×n H), σ from the margins, and the role products
/// `H·Mneg`, `H·Mpos` by [`Csr::left_mul_into`] on Mneg and Mpos themselves.
struct Reference {
    x: Array2<f64>,
    w: Array2<f64>,
    h: Array2<f64>,
    triplets: Vec<Triplet>,
    roles: RoleMatrices,
    p: RpnmfParams,
    stats: SafeguardStats,
    objective: f64,
}

/// M from its stored transpose (distinct positions: the values keep their bits).
fn untranspose(mt: &Csr) -> Csr {
    let mut e = Vec::new();
    for c in 0..mt.nrows() {
        let (cols, vals) = mt.row(c);
        e.extend(cols.iter().zip(vals).map(|(&r, &v)| (r, c, v)));
    }
    Csr::from_entries(mt.ncols(), mt.nrows(), &e)
}

impl Reference {
    fn new(m: &Rpnmf) -> Self {
        Self {
            x: m.work.data.x.clone(),
            w: m.work.w.clone(),
            h: m.cur.h.clone(),
            triplets: m.triplets.clone(),
            roles: RoleMatrices::new(m.work.data.n(), &m.triplets).unwrap(),
            p: m.params,
            stats: SafeguardStats::default(),
            objective: m.objective.total,
        }
    }

    fn terms(
        &self,
        wtx: &Array2<f64>,
        wtw: &Array2<f64>,
        h: &Array2<f64>,
    ) -> (f64, f64, Vec<f64>) {
        let mut hht = Array2::zeros((h.nrows(), h.nrows()));
        gram_of_rows(&mut hht.view_mut(), h.view());
        let cross: f64 = Zip::from(wtx).and(h).fold(0.0, |acc, &a, &b| acc + a * b);
        let gram: f64 = Zip::from(wtw)
            .and(&hht)
            .fold(0.0, |acc, &a, &b| acc + a * b);
        let x_norm2: f64 = self.x.iter().map(|v| v * v).sum();
        let recon = (x_norm2 - 2.0 * cross + gram).max(0.0);
        let mut t = Vec::new();
        margins(h.view(), &self.triplets, self.p.delta, &mut t);
        (recon, ranking_loss(self.p.alpha, &t), t)
    }

    fn step(&mut self) {
        let (x, k) = (&self.x, self.w.ncols());
        let prod = |a: &Array2<f64>, oa, b: &Array2<f64>, ob, rows, cols| {
            let mut c = Array2::zeros((rows, cols));
            gemm_into(&mut c.view_mut(), 1.0, a.view(), oa, b.view(), ob, false);
            c
        };
        let (m, n) = x.dim();
        let mut xht = Array2::zeros((m, k));
        xh_t_whole(&mut xht, x, &self.h);
        let mut hht = Array2::zeros((k, k));
        gram_of_rows(&mut hht.view_mut(), self.h.view());
        let whht = prod(&self.w, Op::N, &hht, Op::N, m, k);
        mu_update(&mut self.w, &xht, &whht);
        let mut wtx = Array2::zeros((k, n));
        wt_x_whole(&mut wtx, &self.w, x);
        let wtw = prod(&self.w, Op::T, &self.w, Op::N, k, k);
        let (r0, q0, t) = self.terms(&wtx, &wtw, &self.h);
        let f0 = r0 + q0;
        self.roles.fill(&t);
        let alpha = self.p.alpha;
        let mut num = untranspose(&self.roles.mneg_t).left_mul(self.h.view());
        let mut den = untranspose(&self.roles.mpos_t).left_mul(self.h.view());
        Zip::from(&mut num)
            .and(&wtx)
            .for_each(|n, &a| *n = a + alpha * *n);
        let mut wtwh = Array2::zeros((k, n));
        gram_times(&mut wtwh, &wtw, &self.h);
        Zip::from(&mut den)
            .and(&wtwh)
            .for_each(|d, &g| *d = alpha * *d + g);
        Zip::from(&mut num)
            .and(&den)
            .for_each(|n, &d| *n /= d.max(EPS_DIV));
        let mut cand = Zip::from(&self.h)
            .and(&num)
            .map_collect(|&h, &r| (h * r).max(FLOOR));
        if !self.p.safeguard {
            self.h = cand;
            let (r, q, _) = self.terms(&wtx, &wtw, &self.h);
            self.objective = r + q;
            return;
        }
        let mut level = 0u8;
        self.objective = loop {
            let (r1, q1, _) = self.terms(&wtx, &wtw, &cand);
            if r1 + q1 <= f0 {
                self.h = cand;
                if level > 0 {
                    self.stats.damped += 1;
                    self.stats.deepest = self.stats.deepest.max(level);
                }
                break r1 + q1;
            }
            if level == MAX_HALVINGS {
                self.stats.rejected += 1;
                break f0;
            }
            level += 1;
            num.mapv_inplace(f64::sqrt);
            cand = Zip::from(&self.h)
                .and(&num)
                .map_collect(|&h, &r| (h * r).max(FLOOR));
        };
    }
}

fn rel_diff(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> f64 {
    let d = (&a - &b).mapv(|v| v * v).sum().sqrt();
    d / b.mapv(|v| v * v).sum().sqrt()
}

/// Keeping F's parts across steps and the rewritten kernels change nothing: after 300
/// iterations W and H equal the from-scratch reference's (bit for bit here; the bound is
/// 1e-10 relative, since F's inner products now round differently and a decision may flip
/// where F(H') and F(H) differ by rounding only), the safeguard took the same decisions,
/// and the objectives agree to rounding. After every step the kept parts equal a fresh
/// evaluation of the current H. Cases: full steps (consistent triplets), damped steps down
/// to γ = 2⁻⁶ in most iterations (contradictory triplets, α = 1), paper-literal, and a
/// digits-shaped problem with random triplets. (No case here makes every γ fail; the
/// rejected branch leaves the current H and its parts untouched.)
#[test]
fn kept_parts_match_the_from_scratch_reference() {
    let (consistent, y) = clusters(1);
    let (random, contradictory) = random_case();
    let mut contra = contradictory.clone();
    contra.extend(
        contradictory
            .iter()
            .take(90)
            .map(|t| Triplet::new(t.i, t.q, t.j)),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let big = dataset(Array2::from_shape_simple_fn((64, 400), || {
        (rng.r#gen::<f64>() * 16.0).floor() + 0.01
    }));
    let mut big_ts = Vec::new();
    while big_ts.len() < 1200 {
        let t = Triplet::new(
            rng.gen_range(0..400),
            rng.gen_range(0..400),
            rng.gen_range(0..400),
        );
        if t.i != t.j && t.i != t.q && t.j != t.q {
            big_ts.push(t);
        }
    }
    let cases: Vec<(&str, Arc<Dataset>, Vec<Triplet>, ModelSpec)> = vec![
        (
            "consistent",
            consistent.clone(),
            label_triplets(&y, 180, 2),
            spec(3, 5, &[("delta", 1.0)]),
        ),
        (
            "contradictory",
            random.clone(),
            contra.clone(),
            spec(3, 1, &[("alpha", 1.0), ("delta", 10.0)]),
        ),
        (
            "contradictory, δ = 100",
            random.clone(),
            contra.clone(),
            spec(3, 1, &[("alpha", 1.0), ("delta", 100.0)]),
        ),
        (
            "paper-literal",
            consistent,
            label_triplets(&y, 120, 3),
            spec(3, 1, &[("safeguard", 0.0), ("delta", 1.0)]),
        ),
        ("digits-like", big, big_ts, spec(10, 0, &[])),
    ];
    for (name, data, ts, sp) in cases {
        // The two-pass step, and the single blocked pass of large X forced on (blocks of
        // 32 or 64 samples, the last one shorter: n = 60 → 32 + 28, n = 400 → 6·64 + 16).
        for blocked in [false, true] {
            let side = SideInfo::with_triplets(ts.clone());
            let mut m = Rpnmf::new(data.clone(), &sp, &side).unwrap();
            assert!(!m.blocked, "small X takes the two-pass step by default");
            m.blocked = blocked;
            m.work.x_block = if data.n() < 128 { 32 } else { 64 };
            let mut r = Reference::new(&m);
            let (mut reused, mut worst) = (0, 0.0f64);
            // The contradictory cases are unstable: from about iteration 110 on (δ = 10;
            // δ = 100: from about 15) any rounding difference grows about tenfold every
            // four iterations (see
            // `blocked_pass_matches_the_two_pass_step_and_repeats_bit_for_bit`), so the
            // blocked pass, whose GEMMs round differently, is compared over 120 (40).
            let iters = if blocked && name.starts_with("contradictory") {
                if name.contains("100") { 40 } else { 120 }
            } else {
                300
            };
            for it in 0..iters {
                let o = m.step().unwrap().total;
                r.step();
                // The kept parts are those of the current H, whatever the safeguard did.
                let fresh = Iterate::new(m.cur.h.clone(), &m.triplets, &m.params);
                assert_eq!(
                    (&m.cur.h_t, &m.cur.hht, &m.cur.t, &m.cur.sig, m.cur.ranking),
                    (&fresh.h_t, &fresh.hht, &fresh.t, &fresh.sig, fresh.ranking),
                    "{name} {blocked} {it}"
                );
                // An XHᵀ kept for the next W step is that of the current H.
                if m.xht_of_cur && blocked {
                    reused += 1;
                    let xht = m.work.data.x.dot(&m.cur.h.t());
                    let d = rel_diff(m.work.xht.view(), xht.view());
                    assert!(d <= 1e-14, "{name} {it}: XHᵀ {d:e}");
                }
                worst = worst.max((o - r.objective).abs() / r.objective.abs());
            }
            // The blocked pass forms WᵀX block by block and XHᵀ from H' of the pass: F's
            // inner products round differently, by about 1e-12 relative at times.
            let bound = if blocked { 1e-11 } else { 1e-12 };
            eprintln!("{name}, blocked {blocked}: objective off by ≤ {worst:.1e} relative");
            assert!(worst <= bound, "{name} {blocked}: objective {worst:e}");
            let st = m.safeguard_stats();
            assert_eq!(
                (st.damped, st.deepest, st.rejected),
                (r.stats.damped, r.stats.deepest, r.stats.rejected),
                "{name} {blocked}"
            );
            // Every full step taken leaves XH'ᵀ for the next W step.
            if blocked {
                assert_eq!(reused, iters - st.damped - st.rejected, "{name}: {st:?}");
            }
            let (dw, dh) = (
                rel_diff(m.w().unwrap(), r.w.view()),
                rel_diff(m.h(), r.h.view()),
            );
            assert!(
                dw <= 1e-10 && dh <= 1e-10,
                "{name} {blocked}: W {dw:e}, H {dh:e}"
            );
            if name.starts_with("contradictory") && iters == 300 {
                assert!(st.damped > 200 && st.deepest >= 4, "{name}: {st:?}");
            }
        }
    }
}

/// The single blocked pass against the two-pass step: the same safeguard decisions, W and
/// H equal to 1e-10 relative after 200 iterations (only the GEMMs' summation order
/// differs), and bit for bit repeatable. The contradictory case (damped steps throughout)
/// is unstable from about iteration 110: there one ulp in one entry of the initial H moves
/// the two-pass step's own W and H by far more than 1e-10 after 200 iterations, so the
/// blocked pass is held to the bound over the first 120.
#[test]
fn blocked_pass_matches_the_two_pass_step_and_repeats_bit_for_bit() {
    let (random, base) = random_case();
    let mut contra = base.clone();
    contra.extend(base.iter().take(90).map(|t| Triplet::new(t.i, t.q, t.j)));
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let big = dataset(Array2::from_shape_simple_fn((50, 403), || {
        rng.r#gen::<f64>() + 0.01
    }));
    let big_ts = random_triplets(403, 3 * 403, 17);
    let cases = [
        (
            "contradictory",
            random,
            contra,
            spec(3, 1, &[("alpha", 1.0), ("delta", 10.0)]),
        ),
        ("random", big, big_ts, spec(7, 3, &[])),
    ];
    for (name, data, ts, sp) in cases {
        let side = SideInfo::with_triplets(ts);
        let iters = if name == "contradictory" { 120 } else { 200 };
        // n = 60: blocks of 32 + 28; n = 403: 6·64 + 19 (BLOCK tails of 19 and 28).
        let run = |blocked: bool, iters: usize, ulp: bool| {
            let mut m = Rpnmf::new(data.clone(), &sp, &side).unwrap();
            m.blocked = blocked;
            m.work.x_block = if data.n() < 128 { 32 } else { 64 };
            if ulp {
                m.cur.h[[0, 0]] = m.cur.h[[0, 0]].next_up();
                m.cur.refresh(&m.triplets, &m.params);
            }
            let obj: Vec<f64> = (0..iters).map(|_| m.step().unwrap().total).collect();
            (m.work.w.clone(), m.cur.h.clone(), obj, m.safeguard_stats())
        };
        if name == "contradictory" {
            let (w0, h0, _, _) = run(false, 200, false);
            let (w1, h1, _, _) = run(false, 200, true);
            let (dw, dh) = (
                rel_diff(w1.view(), w0.view()),
                rel_diff(h1.view(), h0.view()),
            );
            assert!(dw > 1e-6 && dh > 1e-6, "one ulp: W {dw:e}, H {dh:e}");
        }
        let (w_ref, h_ref, obj_ref, st_ref) = run(false, iters, false);
        let (w, h, obj, st) = run(true, iters, false);
        assert_eq!(st, st_ref, "{name}");
        let (dw, dh) = (
            rel_diff(w.view(), w_ref.view()),
            rel_diff(h.view(), h_ref.view()),
        );
        assert!(dw <= 1e-10 && dh <= 1e-10, "{name}: W {dw:e}, H {dh:e}");
        for (a, b) in obj.iter().zip(&obj_ref) {
            assert!((a - b).abs() <= 1e-10 * b.abs(), "{name}: {a} vs {b}");
        }
        assert_eq!(run(true, iters, false), (w, h, obj, st), "{name}");
    }
}

/// The bench problem (random 4096×10000, k = 20, |T| = 3n, seed 0): the single blocked pass
/// against the two-pass step after 200 iterations. ~1 min;
/// `cargo test --release -- --ignored`.
#[test]
#[ignore = "slow: 400 iterations on a 328 MB matrix"]
fn blocked_pass_matches_the_two_pass_step_on_the_bench_problem() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let data = dataset(Array2::from_shape_simple_fn((4096, 10000), || {
        rng.r#gen::<f64>()
    }));
    let side = SideInfo::with_triplets(random_triplets(10000, 30000, 17));
    let run = |blocked: bool| {
        let mut m = Rpnmf::new(data.clone(), &spec(20, 0, &[]), &side).unwrap();
        assert!(m.blocked && m.work.x_block == 4096);
        m.blocked = blocked;
        for _ in 0..200 {
            m.step().unwrap();
        }
        (m.work.w.clone(), m.cur.h.clone(), m.safeguard_stats())
    };
    let (w_ref, h_ref, st_ref) = run(false);
    let (w, h, st) = run(true);
    let (dw, dh) = (
        rel_diff(w.view(), w_ref.view()),
        rel_diff(h.view(), h_ref.view()),
    );
    eprintln!("relative drift after 200 iterations: W {dw:.2e}, H {dh:.2e}; {st:?}");
    assert_eq!(st, st_ref);
    assert!(dw <= 1e-10 && dh <= 1e-10, "W {dw}, H {dh}");
}

/// A candidate equal to H evaluates to exactly F(W, H) from the kept parts, so the
/// safeguard accepts it (`F(H') ≤ F(H)`), as the from-scratch evaluation did.
#[test]
fn candidate_equal_to_h_ties_exactly() {
    let (data, ts) = random_case();
    let side = SideInfo::with_triplets(ts);
    let mut m = Rpnmf::new(data, &spec(3, 1, &[("alpha", 1.0)]), &side).unwrap();
    for _ in 0..5 {
        m.step().unwrap();
        m.w_step();
        m.refresh_w_products();
        let (cross_c, cross_h, finite) = candidate_pass(
            m.cur.h.dim(),
            slice(&m.cur.h),
            slice(&m.work.wtx),
            m.cand.h.as_slice_mut().unwrap(),
            m.cand.h_t.as_slice_mut().unwrap(),
            |_, _, r| r.fill(1.0),
        );
        assert!(finite);
        assert_eq!(m.cand.h, m.cur.h);
        assert_eq!(m.cand.h_t, m.cur.h_t);
        let f0 = (m.current_recon(cross_h), m.cur.ranking);
        assert_eq!(m.evaluate_candidate(cross_c), f0);
        assert_eq!(m.cand.hht, m.cur.hht);
    }
}

/// docs/models.md §4.4: `2(WᵀWH + αH·Mpos) − 2(WᵀX + αH·Mneg)` is the gradient of F in H.
#[test]
fn full_gradient_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let x = Array2::from_shape_simple_fn((5, 6), || rng.r#gen::<f64>());
    let w = Array2::from_shape_simple_fn((5, 3), || 0.1 + rng.r#gen::<f64>());
    let h = Array2::from_shape_simple_fn((3, 6), || 0.1 + rng.r#gen::<f64>());
    let ts = [
        Triplet::new(0, 1, 2),
        Triplet::new(1, 0, 3),
        Triplet::new(2, 3, 0),
        Triplet::new(5, 0, 4),
    ];
    let (alpha, delta) = (0.8, 0.2);
    let f = |h: &Array2<f64>| {
        let r = &x - &w.dot(h);
        let mut t = Vec::new();
        margins(h.view(), &ts, delta, &mut t);
        r.mapv(|v| v * v).sum() + ranking_loss(alpha, &t)
    };
    let mut t = Vec::new();
    margins(h.view(), &ts, delta, &mut t);
    let mut roles = RoleMatrices::new(6, &ts).unwrap();
    roles.fill(&t);
    let plus = w.t().dot(&w).dot(&h) + h.dot(&roles.mpos_dense()) * alpha;
    let minus = w.t().dot(&x) + h.dot(&roles.mneg_dense()) * alpha;
    let g = (plus - minus) * 2.0;
    let fd = fd::gradient(f, &h, 1e-6);
    let rel = fd::relative_error(&g, &fd);
    assert!(rel < 1e-6, "relative error {rel}");
}

/// The paper's Proposition 1 (docs/models.md §4.1): NMF's H breaks a triplet that holds in X; RPNMF's keeps it.
#[test]
fn proposition_1_counterexample() {
    let x = array![
        [1.0, 1.0, 0.9, 1.0],
        [1.0, 1.0, 1.0, 3.0],
        [1.0, 1.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 4.0],
        [1.0, 1.0, 1.0, 1.0]
    ];
    let w = array![
        [0.2661, 1.5532, 0.4821],
        [0.9419, 0.8432, 1.3544],
        [0.3476, 1.6137, 0.3875],
        [1.0476, 0.4657, 2.0592],
        [0.2785, 1.6166, 0.4675]
    ];
    let h = array![
        [0.4413, 0.0642, 0.3550, 1.4064],
        [0.5042, 0.5211, 0.4858, 0.0233],
        [0.1377, 0.3449, 0.1934, 1.2220]
    ];
    let (i, j, q) = (0, 1, 2);
    assert!(sq(x.view(), i, j) < sq(x.view(), i, q));
    assert!((sq(h.view(), i, j) - 0.1854).abs() < 1e-3);
    assert!((sq(h.view(), i, q) - 0.0109).abs() < 1e-3);
    assert!(((&x - &w.dot(&h)).mapv(|v| v * v).sum().sqrt() - 0.0863).abs() < 1e-3);

    // Plain NMF (Lee–Seung MU, H then W) from this point keeps violating the triplet.
    let (mut wn, mut hn) = (w.clone(), h.clone());
    for _ in 0..500 {
        let num = wn.t().dot(&x);
        let den = wn.t().dot(&wn).dot(&hn);
        Zip::from(&mut hn)
            .and(&num)
            .and(&den)
            .for_each(|h, &a, &b| *h *= a / b.max(EPS_DIV));
        let num = x.dot(&hn.t());
        let den = wn.dot(&hn.dot(&hn.t()));
        Zip::from(&mut wn)
            .and(&num)
            .and(&den)
            .for_each(|w, &a, &b| *w *= a / b.max(EPS_DIV));
    }
    assert!(
        sq(hn.view(), i, j) > sq(hn.view(), i, q),
        "NMF's H violates the triplet"
    );

    // RPNMF from the same point with the triplet (i, j, q) keeps it.
    let params = RpnmfParams {
        alpha: 0.1,
        delta: 0.1,
        ..RpnmfParams::defaults().unwrap()
    };
    let mut m = Rpnmf::from_factors(dataset(x.clone()), params, &[Triplet::new(i, j, q)], w, h)
        .unwrap();
    for _ in 0..500 {
        m.step().unwrap();
    }
    let hr = m.h();
    assert!(
        sq(hr, i, j) < sq(hr, i, q),
        "RPNMF keeps it: {} vs {}",
        sq(hr, i, j),
        sq(hr, i, q)
    );
    let recon = m.objective().terms[0].value;
    assert!(recon.sqrt() < 0.2, "still a good fit: {}", recon.sqrt());
}

#[test]
fn guarded_objective_never_increases_with_consistent_triplets() {
    let (data, y) = clusters(1);
    let ts = label_triplets(&y, 180, 2);
    for alpha in [0.1, 1.0] {
        let side = SideInfo::with_triplets(ts.clone());
        let mut m = Rpnmf::new(
            data.clone(),
            &spec(3, 5, &[("alpha", alpha), ("delta", 1.0)]),
            &side,
        )
        .unwrap();
        let mut prev = m.objective().total;
        for it in 0..200 {
            let o = m.step().unwrap();
            assert!(
                o.total <= prev * (1.0 + 1e-12),
                "alpha {alpha}, iteration {it}: {} > {prev}",
                o.total
            );
            assert_eq!(
                o.terms.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
                ["reconstruction", "ranking"]
            );
            assert!(
                (o.terms[0].value + o.terms[1].value - o.total).abs()
                    < 1e-12 * o.total.max(1.0)
            );
            prev = o.total;
        }
    }
}

#[test]
fn paper_literal_rule_also_descends_on_consistent_triplets() {
    let (data, y) = clusters(4);
    let side = SideInfo::with_triplets(label_triplets(&y, 120, 3));
    let mut m = Rpnmf::new(
        data,
        &spec(3, 1, &[("safeguard", 0.0), ("delta", 1.0)]),
        &side,
    )
    .unwrap();
    let first = m.objective().total;
    for _ in 0..100 {
        m.step().unwrap();
    }
    assert!(m.objective().total < first);
    // Paper-literal: one evaluation of F per step, nothing damped or rejected.
    let st = m.safeguard_stats();
    assert_eq!((st.damped, st.rejected, st.evaluations), (0, 0, 100));
}

/// Random unit-norm data (12×60) and 180 random triplets.
fn random_case() -> (Arc<Dataset>, Vec<Triplet>) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let n = 60;
    let mut x = Array2::from_shape_fn((12, n), |_| rng.r#gen::<f64>());
    for mut col in x.columns_mut() {
        let norm = col.dot(&col).sqrt();
        col /= norm;
    }
    let mut set = std::collections::BTreeSet::new();
    while set.len() < 180 {
        let t = Triplet::new(
            rng.gen_range(0..n),
            rng.gen_range(0..n),
            rng.gen_range(0..n),
        );
        if t.i != t.j && t.i != t.q && t.j != t.q {
            set.insert(t);
        }
    }
    (dataset(x), set.into_iter().collect())
}

/// docs/models.md §10.4: a non-finite iterate is reverted and reported as divergence.
#[test]
fn paper_literal_divergence_is_reported_and_reverted() {
    let (data, ts) = random_case();
    let side = SideInfo::with_triplets(ts);
    let s = spec(3, 1, &[("alpha", 1.0), ("delta", 10.0), ("safeguard", 0.0)]);
    let mut lit = Rpnmf::new(data.clone(), &s, &side).unwrap();
    let err = (0..300).find_map(|_| lit.step().err()).expect("diverges");
    assert!(matches!(err, ModelError::Diverged { .. }), "{err}");
    assert!(err.to_string().contains("safeguard"), "{err}");
    assert!(
        lit.h()
            .iter()
            .chain(lit.w().unwrap().iter())
            .all(|v| v.is_finite())
    );
    // The guarded run on the same input is fine.
    let mut m =
        Rpnmf::new(data, &spec(3, 1, &[("alpha", 1.0), ("delta", 10.0)]), &side).unwrap();
    for _ in 0..300 {
        assert!(m.step().unwrap().is_finite());
    }
}

/// Random triplets (many contradict X and each other) plus the reversal (i, q, j) of half of
/// them: the plain rule's objective jumps up (docs/models.md §4.5 d); the guarded one stays
/// finite and monotone, because the safeguard damps the steps that would raise F.
#[test]
fn contradictory_triplets_do_not_blow_up() {
    let (data, base) = random_case();
    let mut ts = base.clone();
    ts.extend(base.iter().take(90).map(|t| Triplet::new(t.i, t.q, t.j)));
    assert!(
        ts.contains(&base[0]) && ts.contains(&Triplet::new(base[0].i, base[0].q, base[0].j))
    );
    let side = SideInfo::with_triplets(ts);
    let params = [("alpha", 1.0), ("delta", 10.0)];

    let mut m = Rpnmf::new(data.clone(), &spec(3, 1, &params), &side).unwrap();
    let mut prev = m.objective().total;
    for _ in 0..300 {
        let o = m.step().unwrap();
        assert!(o.total <= prev * (1.0 + 1e-12), "{} > {prev}", o.total);
        prev = o.total;
    }
    assert!(m.h().iter().all(|v| v.is_finite()));
    let stats = m.safeguard_stats();
    assert!(
        stats.damped > 50,
        "the full step often raises F here: {stats:?}"
    );
    // Damping by more than the one square root of docs/models.md §4.5 d was needed at times.
    assert!(stats.deepest > 1, "{stats:?}");

    // Paper-literal: the objective rises (or the run reports divergence); never a panic,
    // and H stays finite (a non-finite iterate is reverted).
    let mut lit = Rpnmf::new(
        data,
        &spec(3, 1, &[params[0], params[1], ("safeguard", 0.0)]),
        &side,
    )
    .unwrap();
    let mut prev = lit.objective().total;
    let mut worst_rise = 0.0f64;
    for _ in 0..300 {
        match lit.step() {
            Ok(o) => {
                worst_rise = worst_rise.max((o.total - prev) / prev);
                prev = o.total;
            }
            Err(ModelError::Diverged { .. }) => {
                worst_rise = f64::INFINITY;
                break;
            }
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert!(
        worst_rise > 1.0,
        "the plain rule more than doubled F at some step: {worst_rise}"
    );
    assert!(lit.h().iter().all(|v| v.is_finite()));
}

/// The notes speak up only when the safeguard kept H, and call a long run of rejections a
/// stall (the user-facing message of docs/models.md §4.5 d).
#[test]
fn notes_report_rejections_and_stalls() {
    let (data, ts) = random_case();
    let side = SideInfo::with_triplets(ts);
    let mut m = Rpnmf::new(data, &spec(3, 1, &[]), &side).unwrap();
    for _ in 0..20 {
        m.step().unwrap();
    }
    assert!(m.notes().is_empty(), "{:?}", m.notes());
    m.stats.rejected = 2;
    m.stats.consecutive_rejected = 1;
    assert!(
        m.notes().is_empty(),
        "two rejections in 20 iterations are rounding"
    );
    m.stats.rejected = 3;
    m.stats.consecutive_rejected = 1;
    let notes = m.notes();
    assert_eq!(notes.len(), 1);
    assert!(notes[0].contains("3 of 20 iterations"), "{}", notes[0]);
    assert!(!notes[0].contains("not moved"), "{}", notes[0]);
    m.stats.consecutive_rejected = STALL_STEPS;
    assert!(m.notes()[0].contains("not moved for the last 10 iterations"));
}

#[test]
fn build_needs_triplets_and_is_deterministic() {
    let (data, y) = clusters(3);
    let e = build(&spec(3, 0, &[]), data.clone(), &SideInfo::default())
        .err()
        .unwrap();
    assert!(matches!(e, ModelError::MissingSideInfo { .. }), "{e}");
    assert!(e.to_string().contains("--triplets FILE|generate"), "{e}");
    assert_eq!(KIND.needs(), SideNeed::Triplets);
    assert_eq!(ModelKind::from_name("rpnmf"), Some(KIND));
    let side = SideInfo::with_triplets(label_triplets(&y, 30, 1));
    let bad = SideInfo::with_triplets(vec![Triplet::new(0, 1, 60)]);
    assert!(matches!(
        build(&spec(3, 0, &[]), data.clone(), &bad).err().unwrap(),
        ModelError::InvalidParam { .. }
    ));
    let run = |seed| {
        let mut m = build(&spec(3, seed, &[]), data.clone(), &side).unwrap();
        for _ in 0..20 {
            m.step().unwrap();
        }
        m.finish();
        (m.h().to_owned(), m.w().unwrap().to_owned())
    };
    assert_eq!(run(9), run(9));
    assert_ne!(run(9).0, run(10).0);
    // Same start as NMF on the same seed (docs/models.md §4.5 step 2).
    let m = Rpnmf::new(data.clone(), &spec(3, 9, &[]), &side).unwrap();
    let (w0, h0) = random_wh(12, 60, 3, data.x.mean().unwrap(), 9);
    assert_eq!(m.w().unwrap(), w0.view());
    assert_eq!(m.h(), h0.view());
    // No normalisation with the paper's setting; unit-norm W keeps WH.
    let mut m = Rpnmf::new(data.clone(), &spec(3, 9, &[]), &side).unwrap();
    m.step().unwrap();
    let (w1, h1) = (m.w().unwrap().to_owned(), m.h().to_owned());
    m.finish();
    assert_eq!((m.w().unwrap(), m.h()), (w1.view(), h1.view()));
    let mut m = Rpnmf::new(data, &spec(3, 9, &[("normalize_w", 1.0)]), &side).unwrap();
    m.step().unwrap();
    let wh = m.w().unwrap().dot(&m.h());
    m.finish();
    let w = m.w().unwrap();
    assert!(
        w.columns()
            .into_iter()
            .all(|c| (c.dot(&c) - 1.0).abs() < 1e-12)
    );
    assert!((w.dot(&m.h()) - wh).iter().all(|v| v.abs() < 1e-12));
}

/// The typed parameters read the table: its defaults, a given flag, and the `paper` preset.
#[test]
fn typed_parameters_read_the_table_and_the_paper_preset() {
    use crate::engine::models::rpnmf::{KIND, RpnmfParams, paper_spec};
    let p = RpnmfParams::defaults().unwrap();
    assert_eq!((p.alpha, p.delta, p.safeguard, p.normalize_w), (1.0, 1e-3, true, true));
    let spec = crate::engine::models::ModelSpec::new(KIND, 2, 0).with("safeguard", crate::engine::models::ParamValue::Flag(false));
    assert!(!RpnmfParams::from_checked(&spec.checked().unwrap()).unwrap().safeguard);
    let spec = paper_spec(2, 0);
    assert_eq!(spec.kind, KIND);
    let p = RpnmfParams::from_checked(&spec.checked().unwrap()).unwrap();
    assert_eq!((p.alpha, p.delta, p.normalize_w), (0.1, 10.0, false));
}
