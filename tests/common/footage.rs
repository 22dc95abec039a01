//! Real footage the tests read from the shared data where it is present.

use livecut::capture::{Frame, SourceSpec};
use std::path::PathBuf;

/// The first `count` still-camera frames of `pedestrians` (`$LIVECUT_PEDESTRIANS`, else
/// the shared data beside the checkout, else `ped/frames` where the GPU machine has
/// them); `None`, with a note, where none of these exists.
pub fn pedestrian_frames(count: usize) -> Option<Vec<Frame>> {
    let candidates = [
        std::env::var_os("LIVECUT_PEDESTRIANS").map(PathBuf::from),
        Some(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/data/video/pedestrians/frames"),
        ),
        Some(PathBuf::from("ped/frames")),
    ];
    let Some(dir) = candidates.into_iter().flatten().find(|p| p.is_dir()) else {
        eprintln!("note: pedestrians frames not found (set LIVECUT_PEDESTRIANS); skipping them");
        return None;
    };
    let mut source = SourceSpec::Folder(dir).open().unwrap();
    Some(
        std::iter::from_fn(|| source.next_frame().unwrap().map(|c| c.frame))
            .take(count)
            .collect(),
    )
}
