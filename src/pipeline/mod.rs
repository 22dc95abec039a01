//! Running the stages: one frame through energy, cut and cleanup ([`segmenter`]), and
//! the capture and segmentation threads with their channels (in progress).

pub mod segmenter;

pub use segmenter::{SegmentOutput, SegmentParams, Segmenter, StageTimings};
