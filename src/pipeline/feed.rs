//! The capture thread: reads a [`FrameSource`] and pushes its frames into the frame
//! channel until the stream ends, fails, or the receiver is dropped.

use super::channel::{Delivery, FrameReceiver, FrameSender, channel};
use crate::capture::{CaptureError, CapturedFrame, FrameSource, SourceSpec};
use crate::energy::Seeds;
use std::thread::JoinHandle;

/// Which of the worker's sources an event or a command is about: the source the
/// pipeline started with is [`SourceId::FIRST`], and every `SetSource` the worker takes
/// is the next one, whether it opens or fails. Commands and events cross on their
/// channels, so a consumer tells by it what it already replaced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceId(pub u64);

impl SourceId {
    /// The source the pipeline started with.
    pub const FIRST: SourceId = SourceId(0);

    /// The source asked for after this one.
    pub fn next(self) -> SourceId {
        SourceId(self.0 + 1)
    }
}

/// What the worker reports about a source once it is running.
#[derive(Clone, Debug)]
pub struct SourceInfo {
    /// Which source this is.
    pub id: SourceId,
    /// The source's own description.
    pub description: String,
    /// Frame width.
    pub width: u32,
    /// Frame height.
    pub height: u32,
    /// Whether it runs in real time.
    pub live: bool,
    /// How its frames reach the worker.
    pub delivery: Delivery,
    /// Number of frames that will be delivered, where known (after any frame limit).
    pub frames: Option<u64>,
    /// The seeds in effect for it (given, or the source's defaults), if any.
    pub seeds: Option<Seeds>,
    /// How to open it again after it fails (cameras), if that can help.
    pub reopen: Option<SourceSpec>,
}

/// A running capture thread and the receiving end of its frames.
pub(crate) struct Feed {
    pub frames: FrameReceiver<CapturedFrame>,
    thread: JoinHandle<Result<(), CaptureError>>,
}

impl Feed {
    /// Starts reading `source` on its own thread, at most `limit` frames.
    pub fn start(
        source: Box<dyn FrameSource>,
        delivery: Delivery,
        capacity: usize,
        limit: Option<u64>,
    ) -> std::io::Result<Self> {
        let (tx, frames) = channel(delivery, capacity);
        let thread = std::thread::Builder::new()
            .name("livecut-capture".into())
            .spawn(move || capture_loop(source, tx, limit))?;
        Ok(Self { frames, thread })
    }

    /// Waits for the thread after its channel ran dry: how the stream ended.
    pub fn finish(self) -> Result<(), String> {
        drop(self.frames);
        match self.thread.join() {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(_) => Err("the capture thread panicked".into()),
        }
    }

    /// Stops reading (the thread notices at its next frame) and waits for the thread.
    pub fn stop(self) {
        let _ = self.finish();
    }
}

/// Reads frames until the end of the stream, the limit, an error, or the receiver's
/// departure. The source is dropped (camera closed, ffmpeg ended) on this thread.
fn capture_loop(
    mut source: Box<dyn FrameSource>,
    tx: FrameSender<CapturedFrame>,
    limit: Option<u64>,
) -> Result<(), CaptureError> {
    let mut sent = 0;
    while limit.is_none_or(|n| sent < n) && !tx.is_closed() {
        let Some(frame) = source.next_frame()? else {
            break;
        };
        if tx.send(frame).is_err() {
            break;
        }
        sent += 1;
    }
    Ok(())
}
