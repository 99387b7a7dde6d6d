//! `nmf-playground`: with a subcommand, a headless job; without, the GUI.

fn main() -> std::process::ExitCode {
    nmf_playground::cli::main()
}
