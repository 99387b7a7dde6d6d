//! `nmf-playground triplets`: generate triplets by the RPNMF protocol (docs/models.md §8.4) and
//! write them to a file (`.csv` as `i,j,q`, otherwise a constraints `.json` carrying the
//! dataset's fingerprint, which the app and `run --triplets` load).

use super::CliError;
use super::run::{DataArgs, TripletArgs, generated_triplets, load_data};
use crate::engine::constraints::Labels;
use crate::engine::constraints::io::{export_triplets_csv, save_json};
use crate::engine::constraints::store::Store;
use anyhow::anyhow;
use std::path::PathBuf;

/// Arguments of `triplets`.
#[derive(Debug, Clone, clap::Args)]
pub struct TripletsArgs {
    #[command(flatten)]
    pub input: DataArgs,
    #[command(flatten)]
    pub opts: TripletArgs,
    /// Seed of the protocol's random choices.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output file: `.csv` (i,j,q, 0-based) or `.json` (constraints file).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
}

pub fn run(args: &TripletsArgs) -> Result<(), CliError> {
    let data = load_data(&args.input)?;
    let triplets = generated_triplets(&args.opts, &data, args.seed)?;
    let is_csv = args
        .output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if is_csv {
        export_triplets_csv(&triplets, &args.output).map_err(|e| CliError::Failed(e.into()))?;
    } else {
        // The file carries the triplets only: every sample unlabelled, no classes. The
        // ground truth the protocol drew from is not side information and stays out.
        let labels = Labels::new(data.n());
        let mut store = Store::from_parts(data.fingerprint, &triplets, labels)
            .map_err(|e| CliError::Failed(anyhow!(e)))?;
        save_json(&mut store, &args.output).map_err(|e| CliError::Failed(e.into()))?;
    }
    crate::say!(
        "wrote {} triplets for {} ({} samples) to {}",
        triplets.len(),
        data.source,
        data.n(),
        args.output.display()
    );
    Ok(())
}
