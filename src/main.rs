//! `nmf-playground`: with a subcommand, a headless job (`cli`); without, the GUI (`gui`).
//! The two front ends never import each other: this is where one is chosen.

use clap::Parser;
use nmf_playground::cli::{Cli, run_command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse_from(nmf_playground::cli::normalize_args(std::env::args_os()));
    match &cli.command {
        Some(cmd) => run_command(cmd),
        None => open_gui(&cli),
    }
}

#[cfg(feature = "gui")]
fn open_gui(cli: &Cli) -> ExitCode {
    let exit = nmf_playground::gui::ExitPlan {
        save_session: cli.save_on_exit.clone(),
        close_when_loaded: cli.close_when_loaded,
    };
    match nmf_playground::gui::run(cli.path.clone(), cli.session.clone(), exit) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            nmf_playground::say!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

#[cfg(not(feature = "gui"))]
fn open_gui(_cli: &Cli) -> ExitCode {
    nmf_playground::say!(
        "error: this build has no GUI (built without the `gui` feature).\n\
         Use the headless commands instead, e.g. `nmf-playground run --help`."
    );
    ExitCode::from(2)
}
