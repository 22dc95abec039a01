//! What one frame cost, stage by stage: one type shared by the segmenter, the worker's
//! results, the JSON records and the app's plot, so a stage has one name everywhere.

use serde::Serialize;

/// Milliseconds of each stage of one frame. The field names are those of the JSON
/// records, which flatten this struct into each line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FrameTiming {
    /// Reading and decoding (or rendering) the frame; 0 where the frame came decoded
    /// (the segmenter's own timing, a frame segmented again).
    pub decode_ms: f64,
    /// Building the grid problem.
    pub energy_ms: f64,
    /// The engine's solve or update.
    pub cut_ms: f64,
    /// Mask cleanup.
    pub cleanup_ms: f64,
    /// Decode to mask: decoding plus the whole segmentation call (queueing excluded).
    pub total_ms: f64,
}
