//! Out to a virtual camera: composited frames converted to YUYV 4:2:2 (the format
//! every video-call program takes from a camera) and written, at the source's frame
//! rate, to a sink — a v4l2loopback device, which those programs list as a camera,
//! or a file of raw frames, which tests and users can inspect.
//!
//! The device is written through V4L2 directly (the `v4l` crate the camera capture
//! already builds on) rather than through an ffmpeg child process: nothing else has
//! to be installed, ffmpeg builds without the `v4l2` output are common, and a missing
//! or wrong device is reported by the open and format calls themselves, before the
//! first frame, instead of by a process that dies later.

mod file;
mod loopback;

pub use file::FileSink;
pub use loopback::Loopback;

use crate::bands;
use image::RgbaImage;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Prefix of a virtual-camera target that names a file of raw frames.
pub const FILE_PREFIX: &str = "file:";
/// How far behind its timestamps the output may fall before pacing starts again from
/// the frame in hand (after a pause or a slow stretch) instead of rushing frames out.
const MAX_LAG: Duration = Duration::from_secs(1);

/// Why frames cannot go out to the virtual camera.
#[derive(Debug, Error)]
pub enum OutputError {
    /// The device node does not exist: the module is not loaded (or made others).
    #[error(
        "no {path}: load the module with `sudo modprobe v4l2loopback devices=1 video_nr={number} card_label=livecut exclusive_caps=1`{reload}"
    )]
    NoDevice {
        /// The device path asked for.
        path: PathBuf,
        /// Its number, for the command line.
        number: String,
        /// Advice when the module is already loaded with other devices.
        reload: &'static str,
    },
    /// The device exists but this user may not write to it.
    #[error(
        "cannot open {0}: permission denied; add yourself to the video group (`sudo usermod -aG video $USER`, then log in again)"
    )]
    Permission(PathBuf),
    /// The device does not take video output: it is a real camera, not a loopback.
    #[error("{path} takes no video output, so it is not a v4l2loopback device ({source})")]
    NotLoopback {
        /// The device.
        path: PathBuf,
        /// What the driver said.
        source: std::io::Error,
    },
    /// The device keeps another format (a program still holds it with its own).
    #[error("{path} keeps {got} instead of {wanted}; close the programs using it and try again")]
    FormatRefused {
        /// The device.
        path: PathBuf,
        /// The format livecut asked for.
        wanted: String,
        /// The format the device kept.
        got: String,
    },
    /// Virtual cameras exist on Linux only.
    #[error("a virtual camera needs Linux and its v4l2loopback module")]
    Unsupported,
    /// Opening or writing failed otherwise.
    #[error("cannot write to {path}: {source}")]
    Io {
        /// The device or file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A frame's size differs from the size the sink was opened with.
    #[error("the frame size changed from {was:?} to {now:?}")]
    SizeChanged {
        /// Width and height of the opened sink.
        was: (u32, u32),
        /// Width and height of the frame.
        now: (u32, u32),
    },
}

/// Where frames go: one YUYV 4:2:2 frame at a time, of the size the sink was
/// opened with.
pub trait FrameSink: Send {
    /// Writes one frame: `width` × `height` pixels, two bytes each (Y0 U Y1 V).
    fn write_frame(&mut self, yuyv: &[u8]) -> Result<(), OutputError>;
}

/// The virtual camera: converts composites, paces them at their timestamps and
/// writes them to its sink.
pub struct VirtualCamera {
    sink: Box<dyn FrameSink>,
    size: (u32, u32),
    pacer: Pacer,
    yuyv: Vec<u8>,
}

impl VirtualCamera {
    /// Opens `target` for frames of `width` × `height` at `fps`: a V4L2 device path
    /// such as `/dev/video10`, or `file:PATH` for raw YUYV frames in a file.
    pub fn open(target: &str, width: u32, height: u32, fps: u32) -> Result<Self, OutputError> {
        let (width, height) = (even(width), height);
        let sink: Box<dyn FrameSink> = match target.strip_prefix(FILE_PREFIX) {
            Some(path) => Box::new(FileSink::create(path.as_ref())?),
            None => Box::new(Loopback::open(target.as_ref(), width, height, fps)?),
        };
        Ok(Self::with_sink(sink, width, height))
    }

    /// A virtual camera writing frames of `width` × `height` to `sink`.
    pub fn with_sink(sink: Box<dyn FrameSink>, width: u32, height: u32) -> Self {
        Self {
            sink,
            size: (even(width), height),
            pacer: Pacer::default(),
            yuyv: Vec::new(),
        }
    }

    /// Whether frames of `width` × `height` can go out without opening it again.
    pub fn fits(&self, width: u32, height: u32) -> bool {
        (even(width), height) == self.size
    }

    /// Sends one composite once its `timestamp` is due, relative to the first
    /// frame's: a file source goes out at its frame rate, a camera as it comes.
    pub fn send(&mut self, image: &RgbaImage, timestamp: Duration) -> Result<(), OutputError> {
        let now = (even(image.width()), image.height());
        if now != self.size {
            return Err(OutputError::SizeChanged {
                was: self.size,
                now,
            });
        }
        yuyv_of(image, &mut self.yuyv);
        self.pacer.wait(timestamp);
        self.sink.write_frame(&self.yuyv)
    }
}

/// Widths of YUYV frames are even: an odd width gets its last column twice.
fn even(width: u32) -> u32 {
    width + (width & 1)
}

/// Converts an image to YUYV 4:2:2 (BT.601, limited range), each pair of pixels
/// sharing the mean of their chroma, into `out` (its memory reused), in row bands on
/// every core.
pub fn yuyv_of(image: &RgbaImage, out: &mut Vec<u8>) {
    let (w, h) = (image.width() as usize, image.height() as usize);
    let row = even(w as u32) as usize * 2;
    out.resize(row * h, 0); // every byte is written below
    let rgba = image.as_raw();
    bands::for_each_band(out, row, 1, |first, band| {
        for (r, out) in band.chunks_exact_mut(row).enumerate() {
            yuyv_row(&rgba[(first + r) * w * 4..][..w * 4], out);
        }
    });
}

/// One row of RGBA pixels as YUYV pairs (an odd last pixel paired with itself).
fn yuyv_row(rgba: &[u8], out: &mut [u8]) {
    let px = |p: &[u8]| [i32::from(p[0]), i32::from(p[1]), i32::from(p[2])];
    let luma = |[r, g, b]: [i32; 3]| (((66 * r + 129 * g + 25 * b + 128) >> 8) + 16) as u8;
    let pair = |a: [i32; 3], b: [i32; 3], out: &mut [u8]| {
        let [r, g, bl] = [0, 1, 2].map(|c| a[c] + b[c]);
        let u = (((-38 * r - 74 * g + 112 * bl + 256) >> 9) + 128) as u8;
        let v = (((112 * r - 94 * g - 18 * bl + 256) >> 9) + 128) as u8;
        out.copy_from_slice(&[luma(a), u, luma(b), v]);
    };
    let mut pairs = out.chunks_exact_mut(4);
    let mut pixels = rgba.chunks_exact(8);
    for (p, out) in pixels.by_ref().zip(pairs.by_ref()) {
        pair(px(&p[..4]), px(&p[4..]), out);
    }
    if let (Some(out), [r, g, b, _]) = (pairs.next(), pixels.remainder()) {
        let last = [i32::from(*r), i32::from(*g), i32::from(*b)];
        pair(last, last, out);
    }
}

/// Holds frames back until their timestamps are due, measured from the first.
#[derive(Default)]
struct Pacer {
    /// When the anchor frame went out, and its timestamp.
    anchor: Option<(Instant, Duration)>,
}

impl Pacer {
    fn wait(&mut self, timestamp: Duration) {
        let now = Instant::now();
        let Some((start, first)) = self.anchor.filter(|&(_, first)| timestamp >= first) else {
            self.anchor = Some((now, timestamp));
            return;
        };
        let due = start + (timestamp - first);
        if due > now {
            std::thread::sleep(due - now);
        } else if now - due > MAX_LAG {
            self.anchor = Some((now, timestamp));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grey_white_and_colours_convert_to_limited_range_yuyv() {
        let mut img = RgbaImage::from_pixel(3, 1, [255, 255, 255, 255].into());
        img.put_pixel(2, 0, [0, 0, 0, 255].into());
        let mut out = Vec::new();
        yuyv_of(&img, &mut out);
        // Three pixels become two pairs, the last pixel doubled.
        assert_eq!(out, [235, 128, 235, 128, 16, 128, 16, 128]);
        let red = RgbaImage::from_pixel(2, 1, [255, 0, 0, 255].into());
        yuyv_of(&red, &mut out);
        assert_eq!(out[0], 82);
        assert!(out[1] < 128 && out[3] > 200, "{out:?}");
    }

    /// The conversion pixel by pixel, as it was before row bands: the reference.
    fn reference(image: &RgbaImage) -> Vec<u8> {
        let (w, h) = image.dimensions();
        let mut out = Vec::new();
        let px = |x: u32, y: u32| {
            let p = image.get_pixel(x.min(w - 1), y).0;
            [i32::from(p[0]), i32::from(p[1]), i32::from(p[2])]
        };
        let luma = |[r, g, b]: [i32; 3]| (((66 * r + 129 * g + 25 * b + 128) >> 8) + 16) as u8;
        for y in 0..h {
            for x in (0..w).step_by(2) {
                let (a, b) = (px(x, y), px(x + 1, y));
                let [r, g, bl] = [0, 1, 2].map(|c| a[c] + b[c]);
                let u = (((-38 * r - 74 * g + 112 * bl + 256) >> 9) + 128) as u8;
                let v = (((112 * r - 94 * g - 18 * bl + 256) >> 9) + 128) as u8;
                out.extend_from_slice(&[luma(a), u, luma(b), v]);
            }
        }
        out
    }

    #[test]
    fn row_bands_on_one_thread_and_two_give_the_reference() {
        for (w, h) in [(64, 40), (101, 33), (1, 3)] {
            let img = RgbaImage::from_fn(w, h, |x, y| {
                let v = (x * 7 + y * 13) as u8;
                [v, v.wrapping_mul(3), 255 - v, 255].into()
            });
            let want = reference(&img);
            for threads in [1, 2] {
                let mut out = vec![9; 5]; // a used buffer
                crate::bands::with_threads(threads, || yuyv_of(&img, &mut out));
                assert!(out == want, "{w}x{h} on {threads} threads");
            }
        }
    }

    #[test]
    fn pacing_follows_timestamps_and_starts_again_when_far_behind() {
        let mut pacer = Pacer::default();
        let start = Instant::now();
        for i in 0..4 {
            pacer.wait(Duration::from_millis(20 * i));
        }
        assert!(start.elapsed() >= Duration::from_millis(60));
        // A timestamp far in the past of the anchor's clock goes out at once.
        std::thread::sleep(MAX_LAG + Duration::from_millis(50));
        let late = Instant::now();
        pacer.wait(Duration::from_millis(80));
        pacer.wait(Duration::from_millis(80));
        assert!(late.elapsed() < Duration::from_millis(50));
    }
}
