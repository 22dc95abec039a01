//! The `livecut` program: the desktop app by default, and subcommands for headless work.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
