//! `livecut eval` (in progress).

/// Options of `livecut eval`.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {}

/// Runs the command.
pub fn run(_args: EvalArgs) -> anyhow::Result<()> {
    anyhow::bail!("not available yet")
}
