//! `nmf-playground journal-edits` (hidden): seeded random constraint edits through the store
//! and the recovery journal, exactly as the app makes them (a store edit, then
//! [`Journal::flush`]), printing `pending D dirty` once an edit is made in memory and
//! `ack K D dirty` once it is durable (D: [`digest`] of the content; a clean store has no
//! recovery file). `tests/recovery.rs` kills it with SIGKILL at
//! random moments and checks that the recovery file holds every acknowledged edit.

use super::CliError;
use crate::engine::constraints::{Store, Triplet};
use crate::engine::data::Fingerprint;
use crate::engine::files::recovery::Journal;
use anyhow::anyhow;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of the hidden `journal-edits` command.
#[derive(Debug, Clone, clap::Args)]
pub struct JournalEditsArgs {
    /// Recovery directory to journal into.
    #[arg(long)]
    pub dir: PathBuf,
    /// Seed of the edit sequence.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Number of edits (then it exits cleanly, leaving the journal in place).
    #[arg(long, default_value_t = 1000)]
    pub edits: u64,
}

/// The synthetic dataset the edits are made on: 40 samples, 3 features.
pub fn fingerprint(seed: u64) -> Fingerprint {
    Fingerprint {
        n: 40,
        m: 3,
        hash: 0x5eed_0000 ^ seed,
    }
}

/// FNV-1a 64 of the store's triplets, labels and class names (the content a recovery must
/// restore).
pub fn digest(store: &Store) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for t in store.triplets() {
        eat(t.i as u64);
        eat(t.j as u64);
        eat(t.q as u64);
    }
    eat(u64::MAX);
    for l in store.labels().as_slice() {
        eat(l.map_or(u64::MAX - 1, |c| c as u64));
    }
    for name in store.labels().class_names() {
        for b in name.bytes() {
            eat(u64::from(b));
        }
        eat(u64::MAX - 2);
    }
    h
}

/// One seeded edit: add a triplet, remove one, paint a few labels, or undo.
fn random_edit(store: &mut Store, rng: &mut ChaCha8Rng) {
    let n = store.n();
    match rng.gen_range(0..10) {
        0..=4 => {
            let i = rng.gen_range(0..n);
            let j = (i + rng.gen_range(1..n)) % n;
            let mut q = rng.gen_range(0..n);
            while q == i || q == j {
                q = (q + 1) % n;
            }
            let _ = store.add_triplet(Triplet::new(i, j, q));
        }
        5 => {
            if let Some(&t) = store.triplets().first() {
                let _ = store.remove_triplet(t);
            }
        }
        6..=8 => {
            let samples: Vec<usize> = (0..rng.gen_range(1..5))
                .map(|_| rng.gen_range(0..n))
                .collect();
            let class = format!("class {}", rng.gen_range(0..3));
            let _ = store.label_as(&samples, &class);
        }
        _ => {
            store.undo();
        }
    }
}

pub fn run(args: &JournalEditsArgs) -> Result<(), CliError> {
    let fp = fingerprint(args.seed);
    let mut store = Store::new(fp);
    let mut journal = Journal::new(&args.dir, fp, 0);
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let mut out = std::io::stdout().lock();
    let failed = |e: std::io::Error| CliError::Failed(anyhow!("journal: {e}"));
    let said = super::output::stdout_error;
    for k in 0..args.edits {
        random_edit(&mut store, &mut rng);
        writeln!(out, "pending {} {}", digest(&store), store.is_dirty()).map_err(said)?;
        out.flush().map_err(said)?;
        journal.flush(&store).map_err(failed)?;
        writeln!(out, "ack {k} {} {}", digest(&store), store.is_dirty()).map_err(said)?;
        out.flush().map_err(said)?;
    }
    Ok(())
}
