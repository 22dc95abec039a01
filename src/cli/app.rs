//! `livecut app` (in progress).

/// Options of `livecut app`.
#[derive(clap::Args, Debug)]
pub struct AppArgs {}

/// Runs the command.
pub fn run(_args: AppArgs) -> anyhow::Result<()> {
    anyhow::bail!("not available yet")
}
