//! Cameras through nokhwa (V4L2, Media Foundation, AVFoundation): listing with their
//! modes, opening one by index at the mode closest to a requested size and frame rate,
//! and decoding MJPEG/YUYV (and the other colour formats nokhwa knows) to RGB.

use super::{
    CaptureError, CapturedFrame, Frame, FrameSource, SourceSpec, StreamSettings, millis_since, yuv,
};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded};
use nokhwa::Camera;
use nokhwa::pixel_format::RgbFormat;
use nokhwa::utils::{
    ApiBackend, CameraFormat, CameraIndex, FrameFormat, RequestedFormat, RequestedFormatType,
};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Consecutive undecodable frames tolerated before the stream counts as broken
/// (cameras often send a few corrupt MJPEG frames right after starting).
const MAX_BAD_FRAMES: u32 = 30;

/// A camera that delivers nothing for this long counts as lost (a stalled USB device
/// can block its driver call indefinitely; the stream must end, not hang).
const FRAME_TIMEOUT: Duration = Duration::from_secs(5);

/// One capture mode of a camera.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CameraMode {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Frames per second.
    pub fps: u32,
    /// Pixel format on the wire, e.g. `MJPEG` or `YUYV`.
    pub format: String,
}

/// A camera as listed by [`list_cameras`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CameraDescription {
    /// Index to open it with (`camera:N`).
    pub index: u32,
    /// Name for people.
    pub name: String,
    /// Backend's description (driver, device path).
    pub description: String,
    /// Modes it offers in a format livecut decodes, largest first.
    pub modes: Vec<CameraMode>,
    /// Why the modes could not be read (busy, not a capture device), if they could not.
    pub note: Option<String>,
}

/// Lists the cameras of the system with the modes each offers. An empty list means
/// no camera; an error means the platform's camera API itself failed.
pub fn list_cameras() -> Result<Vec<CameraDescription>, CaptureError> {
    initialize_platform();
    let infos = nokhwa::query(ApiBackend::Auto).map_err(|e| CaptureError::Camera {
        index: 0,
        reason: format!("cannot list cameras: {e}"),
    })?;
    Ok(infos
        .into_iter()
        .filter_map(|info| {
            let index = info.index().as_index().ok()?;
            let (modes, note) = match read_modes(index) {
                Ok(modes) => (modes, None),
                Err(e) => (Vec::new(), Some(e)),
            };
            Some(CameraDescription {
                index,
                name: info.human_name(),
                description: info.description().to_string(),
                modes,
                note,
            })
        })
        .collect())
}

/// On macOS the user must grant camera access before anything else works.
fn initialize_platform() {
    #[cfg(target_os = "macos")]
    if !nokhwa::nokhwa_check() {
        nokhwa::nokhwa_initialize(|_| {});
    }
}

fn any_colour_format() -> RequestedFormat<'static> {
    RequestedFormat::new::<RgbFormat>(RequestedFormatType::None)
}

fn read_modes(index: u32) -> Result<Vec<CameraMode>, String> {
    let mut camera =
        Camera::new(CameraIndex::Index(index), any_colour_format()).map_err(|e| e.to_string())?;
    let mut formats = camera
        .compatible_camera_formats()
        .map_err(|e| e.to_string())?;
    formats.retain(|f| decodable(f.format()));
    formats.sort_by_key(|f| {
        (
            std::cmp::Reverse(f.width() as u64 * f.height() as u64),
            std::cmp::Reverse(f.frame_rate()),
        )
    });
    formats.dedup();
    Ok(formats
        .into_iter()
        .map(|f| CameraMode {
            width: f.width(),
            height: f.height(),
            fps: f.frame_rate(),
            format: f.format().to_string(),
        })
        .collect())
}

/// Whether nokhwa's RGB decoder handles this wire format.
fn decodable(format: FrameFormat) -> bool {
    <RgbFormat as nokhwa::FormatDecoder>::FORMATS.contains(&format)
}

/// Preference among wire formats at the same size and rate: compressed MJPEG first
/// (high rates at large sizes over USB 2), then YUYV, then the rest.
fn format_rank(format: FrameFormat) -> u32 {
    match format {
        FrameFormat::MJPEG => 0,
        FrameFormat::YUYV => 1,
        _ => 2,
    }
}

/// The mode closest to the request: nearest size, then nearest frame rate, then the
/// preferred wire format.
fn choose_format(formats: &[CameraFormat], want: StreamSettings) -> Option<CameraFormat> {
    formats
        .iter()
        .copied()
        .filter(|f| decodable(f.format()))
        .min_by_key(|f| {
            let size_gap =
                f.width().abs_diff(want.width) as u64 + f.height().abs_diff(want.height) as u64;
            let fps_gap = f.frame_rate().abs_diff(want.fps);
            (size_gap, fps_gap, format_rank(f.format()))
        })
}

/// A running camera stream. nokhwa's `Camera` may not move between threads, so it
/// lives on a thread of its own that grabs and decodes one frame per request; this
/// handle (which may move) talks to it over channels.
pub struct CameraSource {
    index: u32,
    name: String,
    mode: CameraMode,
    requests: Option<Sender<()>>,
    replies: Receiver<Result<Grabbed, CaptureError>>,
    thread: Option<JoinHandle<()>>,
    next: u64,
    /// The camera thread is stuck in the driver: it is left to end on its own.
    stalled: bool,
}

/// One decoded frame from the camera thread.
struct Grabbed {
    rgb: Vec<u8>,
    timestamp: std::time::Duration,
    decode_ms: f64,
}

/// What the camera thread reports once the camera is open.
struct Opened {
    name: String,
    mode: CameraMode,
}

impl CameraSource {
    /// Opens camera `index` (or the first camera that opens, for `None`) at the mode
    /// closest to `settings` and starts its stream.
    pub fn open(index: Option<u32>, settings: StreamSettings) -> Result<Self, CaptureError> {
        initialize_platform();
        match index {
            Some(i) => Self::open_index(i, settings),
            None => {
                let infos = nokhwa::query(ApiBackend::Auto).map_err(|e| CaptureError::Camera {
                    index: 0,
                    reason: format!("cannot list cameras: {e}"),
                })?;
                let mut first_error = None;
                for i in infos.iter().filter_map(|info| info.index().as_index().ok()) {
                    match Self::open_index(i, settings) {
                        Ok(source) => return Ok(source),
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                Err(first_error.unwrap_or(CaptureError::NoCamera))
            }
        }
    }

    fn open_index(index: u32, settings: StreamSettings) -> Result<Self, CaptureError> {
        let (opened_tx, opened_rx) = bounded(1);
        let (request_tx, request_rx) = bounded(1);
        let (reply_tx, reply_rx) = bounded(1);
        let thread = std::thread::Builder::new()
            .name(format!("camera-{index}"))
            .spawn(move || camera_thread(index, settings, opened_tx, request_rx, reply_tx))
            .map_err(|e| CaptureError::Camera {
                index,
                reason: format!("cannot start its thread: {e}"),
            })?;
        let opened = opened_rx.recv().unwrap_or_else(|_| {
            Err(CaptureError::Camera {
                index,
                reason: "its thread ended while opening it".into(),
            })
        });
        match opened {
            Ok(Opened { name, mode }) => Ok(Self {
                index,
                name,
                mode,
                requests: Some(request_tx),
                replies: reply_rx,
                thread: Some(thread),
                next: 0,
                stalled: false,
            }),
            Err(e) => {
                let _ = thread.join();
                Err(e)
            }
        }
    }

    /// The mode the camera runs at.
    pub fn mode(&self) -> &CameraMode {
        &self.mode
    }
}

/// Owns the camera: opens it, then grabs and decodes one frame per request until the
/// handle is dropped or the camera fails.
fn camera_thread(
    index: u32,
    settings: StreamSettings,
    opened: Sender<Result<Opened, CaptureError>>,
    requests: Receiver<()>,
    replies: Sender<Result<Grabbed, CaptureError>>,
) {
    let mut camera = match open_camera(index, settings) {
        Ok(camera) => camera,
        Err(e) => {
            let _ = opened.send(Err(e));
            return;
        }
    };
    let format = camera.camera_format();
    let mode = CameraMode {
        width: format.width(),
        height: format.height(),
        fps: format.frame_rate(),
        format: format.format().to_string(),
    };
    let name = camera.info().human_name();
    if opened.send(Ok(Opened { name, mode })).is_err() {
        return;
    }
    let start = Instant::now();
    for () in requests {
        let grabbed = grab(&mut camera, index, format, start);
        let failed = grabbed.is_err();
        if replies.send(grabbed).is_err() || failed {
            return;
        }
    }
}

fn open_camera(index: u32, settings: StreamSettings) -> Result<Camera, CaptureError> {
    let fail = |reason: String| CaptureError::Camera { index, reason };
    let mut camera = Camera::new(CameraIndex::Index(index), any_colour_format()).map_err(|e| {
        if nokhwa::query(ApiBackend::Auto)
            .unwrap_or_default()
            .is_empty()
        {
            CaptureError::NoCamera
        } else {
            fail(format!("cannot open: {e}"))
        }
    })?;
    let formats = camera
        .compatible_camera_formats()
        .map_err(|e| fail(format!("cannot read its modes: {e}")))?;
    let chosen = choose_format(&formats, settings)
        .ok_or_else(|| fail("offers no colour format livecut can decode".into()))?;
    let wanted = [chosen.format()];
    let request = RequestedFormat::with_formats(RequestedFormatType::Exact(chosen), &wanted);
    camera
        .set_camera_requset(request)
        .map_err(|e| fail(format!("cannot set mode {chosen}: {e}")))?;
    camera
        .open_stream()
        .map_err(|e| fail(format!("cannot start the stream: {e}")))?;
    Ok(camera)
}

/// Grabs frames until one decodes to RGB of the stream's size.
fn grab(
    camera: &mut Camera,
    index: u32,
    format: CameraFormat,
    start: Instant,
) -> Result<Grabbed, CaptureError> {
    let mut bad = 0;
    loop {
        let buffer = camera.frame().map_err(|e| CaptureError::CameraLost {
            index,
            reason: e.to_string(),
        })?;
        let timestamp = start.elapsed();
        let decode_start = Instant::now();
        if let Some(rgb) = decode(&buffer, format) {
            return Ok(Grabbed {
                rgb,
                timestamp,
                decode_ms: millis_since(decode_start),
            });
        }
        bad += 1;
        if bad >= MAX_BAD_FRAMES {
            return Err(CaptureError::CameraLost {
                index,
                reason: format!("{bad} frames in a row could not be decoded"),
            });
        }
    }
}

/// Decodes one buffer to RGB of the stream's size; `None` for a corrupt frame. MJPEG
/// goes through libjpeg-turbo in parts on every core ([`super::jpeg`]; nokhwa's own
/// decode is the same library on one thread: `benches/decode.rs` times both), YUYV
/// and NV12 through [`super::yuv`] (nokhwa's formula, on every core), other formats
/// through nokhwa.
fn decode(buffer: &nokhwa::Buffer, format: CameraFormat) -> Option<Vec<u8>> {
    let (width, height) = (format.width(), format.height());
    match buffer.source_frame_format() {
        FrameFormat::MJPEG => return decode_jpeg(buffer.buffer(), width, height),
        FrameFormat::YUYV if width.is_multiple_of(2) => {
            return yuv::yuyv_to_rgb(buffer.buffer(), width, height);
        }
        FrameFormat::NV12 => return yuv::nv12_to_rgb(buffer.buffer(), width, height),
        _ => {}
    }
    let decoded = catch_unwind(AssertUnwindSafe(|| buffer.decode_image::<RgbFormat>()))
        .ok()?
        .ok()?;
    (decoded.dimensions() == (width, height)).then(|| decoded.into_raw())
}

/// A JPEG frame as the RGB bytes of a `width`×`height` picture; `None` if it does not
/// decode whole (strict: a cut-off frame is refused, not filled in) or has another size.
/// Frames without Huffman tables (MJPEG's usual shortcut) take the standard ones.
pub fn decode_jpeg(bytes: &[u8], width: u32, height: u32) -> Option<Vec<u8>> {
    super::jpeg::decode(bytes, width, height)
}

impl FrameSource for CameraSource {
    fn describe(&self) -> String {
        let m = &self.mode;
        format!(
            "camera {}: {} ({}x{} {} @ {} fps)",
            self.index, self.name, m.width, m.height, m.format, m.fps
        )
    }

    fn size(&self) -> (u32, u32) {
        (self.mode.width, self.mode.height)
    }

    fn is_live(&self) -> bool {
        true
    }

    fn reopen_spec(&self) -> Option<SourceSpec> {
        Some(SourceSpec::Camera {
            index: Some(self.index),
            settings: StreamSettings {
                width: self.mode.width,
                height: self.mode.height,
                fps: self.mode.fps,
            },
        })
    }

    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        let lost = || CaptureError::CameraLost {
            index: self.index,
            reason: "its thread has ended".into(),
        };
        let requests = self.requests.as_ref().ok_or_else(lost)?;
        requests.send(()).map_err(|_| lost())?;
        let grabbed = match self.replies.recv_timeout(FRAME_TIMEOUT) {
            Ok(grabbed) => grabbed,
            Err(RecvTimeoutError::Timeout) => {
                self.stalled = true;
                self.requests = None;
                return Err(CaptureError::CameraLost {
                    index: self.index,
                    reason: format!("no frame for {} s", FRAME_TIMEOUT.as_secs()),
                });
            }
            Err(RecvTimeoutError::Disconnected) => return Err(lost()),
        };
        let Grabbed {
            rgb,
            timestamp,
            decode_ms,
        } = grabbed.inspect_err(|_| self.requests = None)?;
        let index = self.next;
        self.next += 1;
        let (width, height) = self.size();
        Ok(Some(CapturedFrame {
            frame: Frame {
                width,
                height,
                rgb,
                timestamp,
                index,
            },
            decode_ms,
            name: None,
            truth: None,
        }))
    }
}

impl Drop for CameraSource {
    fn drop(&mut self) {
        self.requests = None;
        if let Some(thread) = self.thread.take()
            && !self.stalled
        {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(w: u32, h: u32, f: FrameFormat, fps: u32) -> CameraFormat {
        CameraFormat::new_from(w, h, f, fps)
    }

    /// A JPEG of a demo frame decodes to its size, close to the frame (JPEG is lossy);
    /// a cut-off or another size does not.
    #[test]
    fn mjpeg_frames_decode_to_rgb_of_the_streams_size() {
        let (frame, _) = crate::capture::DemoScene::new(64, 48, 30, 1).render(0);
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90)
            .encode(&frame.rgb, 64, 48, image::ExtendedColorType::Rgb8)
            .unwrap();
        let format = fmt(64, 48, FrameFormat::MJPEG, 30);
        let buffer = nokhwa::Buffer::new(format.resolution(), &jpeg, FrameFormat::MJPEG);
        let rgb = decode(&buffer, format).expect("decodes");
        assert_eq!(rgb.len(), frame.rgb.len());
        let off = rgb
            .iter()
            .zip(&frame.rgb)
            .map(|(&a, &b)| u64::from(a.abs_diff(b)));
        assert!(
            off.sum::<u64>() < 12 * rgb.len() as u64,
            "close to the frame"
        );
        assert!(decode_jpeg(&jpeg, 32, 48).is_none(), "another size");
        assert!(
            decode_jpeg(&jpeg[..jpeg.len() / 3], 64, 48).is_none(),
            "cut off"
        );
    }

    #[test]
    fn closest_mode_prefers_size_then_rate_then_mjpeg() {
        let modes = [
            fmt(1920, 1080, FrameFormat::MJPEG, 30),
            fmt(640, 480, FrameFormat::YUYV, 30),
            fmt(640, 480, FrameFormat::MJPEG, 30),
            fmt(640, 480, FrameFormat::MJPEG, 15),
            fmt(1280, 720, FrameFormat::YUYV, 10),
            fmt(1280, 720, FrameFormat::GRAY, 60),
        ];
        let want = |width, height, fps| StreamSettings { width, height, fps };
        assert_eq!(choose_format(&modes, want(640, 480, 30)), Some(modes[2]));
        assert_eq!(choose_format(&modes, want(600, 400, 14)), Some(modes[3]));
        assert_eq!(
            choose_format(&modes, want(1280, 720, 60)),
            Some(modes[4]),
            "GRAY is not a colour format"
        );
        assert_eq!(choose_format(&modes[5..], want(1280, 720, 60)), None);
    }
}
