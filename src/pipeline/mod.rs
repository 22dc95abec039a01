//! Running the stages: one frame through the noise gate ([`gate`]), energy, cut and
//! cleanup ([`segmenter`]) on the hardware chosen ([`hardware`]), the capture thread ([`feed`]) and its frame channel
//! ([`channel`]), the segmentation worker with its commands and results ([`worker`]),
//! what each frame cost ([`timing`]), recording ([`record`]), and a lower working
//! resolution for machines that cannot keep up ([`working`]).

pub mod channel;
pub mod feed;
pub mod gate;
pub mod hardware;
pub mod motion;
pub mod priority;
pub mod record;
mod refresh;
pub mod segmenter;
pub mod timing;
pub mod volume;
pub mod worker;
pub mod working;

pub use channel::Delivery;
pub use feed::{SourceId, SourceInfo};
pub use gate::{GateMoves, NoiseGate};
pub use hardware::{GpuChoice, Hardware};
pub use record::{FrameRecord, Recorder};
pub use segmenter::{SegmentOutput, SegmentParams, Segmenter};
pub use timing::FrameTiming;
pub use worker::{Command, Event, FrameProcessor, FrameResult, Pipeline, PipelineOptions};
pub use working::MAX_WORKING_SCALE;
