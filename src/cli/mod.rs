//! Headless command line (DESIGN.md §6): `run`, `triplets`, `sweep`, `score`, `bench`,
//! `report`.
//! Results go to stdout or `--out`, progress to stderr. Exit codes: 0 ok, 2 bad input or
//! arguments (the message names the file and the place), 1 anything else.

pub mod bench;
mod drive;
pub mod journal_child;
mod output;
mod report;
mod run;
pub mod score;
pub mod sweep;
mod triplets;

pub use bench::BenchArgs;
pub use run::RunArgs;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Nonnegative matrix factorization with side information: GUI and headless jobs.
#[derive(Debug, Parser)]
#[command(name = "nmf-playground", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Dataset (CSV, image folder, .npy, .mat) or session (.json) to open in the GUI;
    /// default: a bundled sample.
    pub path: Option<PathBuf>,
    /// A session file to open in the GUI (its data, constraints, model settings and runs).
    #[arg(long, value_name = "FILE")]
    pub session: Option<PathBuf>,
    /// When the window closes, save the session (data, constraints, model settings, runs) to
    /// FILE; `nmf_playground.show()` reads the clicked triplets and labels back from it.
    #[arg(long, value_name = "FILE")]
    pub save_on_exit: Option<PathBuf>,
    /// Close the window as soon as the data (or the session) has loaded; with
    /// --save-on-exit, a round trip through the app without a person (tests).
    #[arg(long, hide = true)]
    pub close_when_loaded: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fit one model headlessly and print or write the results.
    Run(RunArgs),
    /// Time the hot paths (NMF iteration vs its GEMMs, PCA-2D); `--quick` for a smoke run.
    Bench(BenchArgs),
    /// Generate triplets by the RPNMF protocol (docs/models.md §8.4) into a .csv or .json file.
    Triplets(triplets::TripletsArgs),
    /// Compare two labellings: ACC (Hungarian), NMI (max, sqrt, arithmetic), macro-F1.
    Score(score::ScoreArgs),
    /// Models × hyperparameter grid × repeats in parallel; runs.csv row by row, summary
    /// of mean ± std per cell (`--resume` continues an interrupted sweep; `--shard i/N` and
    /// `sweep merge DIR... --out DIR` split it across machines; `--grid k=2,3,...` chooses k).
    Sweep(sweep::SweepArgs),
    /// Seeded constraint edits through the recovery journal, acknowledged on stdout (for the
    /// kill test, tests/recovery.rs).
    #[command(hide = true)]
    JournalEdits(journal_child::JournalEditsArgs),
    /// Combine the folders of `sweep --shard 1/N ... N/N` into one sweep folder (runs.csv,
    /// clusterings.csv, summary.md, summary.json, k_selection.csv) equal to the unsharded
    /// sweep's, wall-clock times aside. Also spelled `sweep merge`.
    #[command(name = "sweep-merge")]
    SweepMerge(sweep::MergeArgs),
    /// One self-contained HTML page (plots and key numbers) from a `run --out` or
    /// `sweep --out` folder; `--figures DIR` also writes each plot as PNG and SVG.
    Report(report::ReportArgs),
}

/// The command line with `sweep merge` spelled as the subcommand `sweep-merge`. `sweep`
/// cannot carry a `merge` subcommand itself: its required `--data` is a plain `String` shared
/// with `run`, which clap's derive cannot leave unset when a subcommand negates it.
pub fn normalize_args<I, T>(argv: I) -> Vec<std::ffi::OsString>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString>,
{
    let mut out: Vec<std::ffi::OsString> = argv.into_iter().map(Into::into).collect();
    if out.len() >= 3 && out[1] == "sweep" && out[2] == "merge" {
        out.splice(1..3, [std::ffi::OsString::from("sweep-merge")]);
    }
    out
}

/// An error at the command line's edge, classified for the exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input data or arguments: exit code 2.
    #[error("{0:#}")]
    BadInput(anyhow::Error),
    /// Anything else (divergence, I/O on output, ...): exit code 1.
    #[error("{0:#}")]
    Failed(anyhow::Error),
    /// The reader of stdout went away (`| head`): the output ends there, silently, exit 0.
    #[error("stdout closed")]
    StdoutClosed,
}

impl CliError {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::BadInput(_) => ExitCode::from(2),
            CliError::Failed(_) => ExitCode::from(1),
            CliError::StdoutClosed => ExitCode::SUCCESS,
        }
    }
}

/// Run a subcommand.
pub fn dispatch(command: &Command) -> Result<(), CliError> {
    match command {
        Command::Run(args) => run::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Triplets(args) => triplets::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::JournalEdits(args) => journal_child::run(args),
        Command::SweepMerge(args) => sweep::run_merge(args),
        Command::Report(args) => report::run(args),
        Command::Score(args) => {
            score::run(args, &mut std::io::stdout().lock()).map_err(|e| match e {
                // Written to stdout only.
                score::ScoreError::Write(io) => output::stdout_error(io),
                score::ScoreError::Json(j)
                    if j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe) =>
                {
                    CliError::StdoutClosed
                }
                e if e.is_bad_input() => CliError::BadInput(e.into()),
                e => CliError::Failed(e.into()),
            })
        }
    }
}

/// Run a subcommand and map its error to the exit code (the message goes to stderr).
pub fn run_command(command: &Command) -> ExitCode {
    match dispatch(command) {
        Ok(()) | Err(CliError::StdoutClosed) => ExitCode::SUCCESS,
        Err(e) => {
            crate::say!("error: {e}");
            e.exit_code()
        }
    }
}
