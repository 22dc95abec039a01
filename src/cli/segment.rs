//! `livecut segment` (in progress).

/// Options of `livecut segment`.
#[derive(clap::Args, Debug)]
pub struct SegmentArgs {}

/// Runs the command.
pub fn run(_args: SegmentArgs) -> anyhow::Result<()> {
    anyhow::bail!("not available yet")
}
