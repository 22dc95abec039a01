//! Video files through the system `ffmpeg` program: `ffprobe` reads the size and frame
//! rate, `ffmpeg` decodes to raw rgb24 frames on a pipe. No codec is linked in.

use super::{CaptureError, CapturedFrame, Frame, FrameSource, millis_since};
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Frame rate assumed when the container does not give one.
const FALLBACK_FPS: f64 = 30.0;

/// Stream properties read by `ffprobe`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Probe {
    width: u32,
    height: u32,
    fps: f64,
    frames: Option<u64>,
}

/// A video file decoded by a running `ffmpeg` process.
pub struct VideoSource {
    path: PathBuf,
    probe: Probe,
    child: Child,
    stdout: ChildStdout,
    stderr: Option<JoinHandle<String>>,
    next: u64,
    finished: bool,
}

impl VideoSource {
    /// Probes and starts decoding `path` with the `ffmpeg` and `ffprobe` on the PATH.
    pub fn open(path: &Path) -> Result<Self, CaptureError> {
        Self::open_with(path, OsStr::new("ffmpeg"), OsStr::new("ffprobe"))
    }

    /// Same as [`VideoSource::open`] with explicit program names or paths.
    pub fn open_with(path: &Path, ffmpeg: &OsStr, ffprobe: &OsStr) -> Result<Self, CaptureError> {
        let probe = probe(path, ffprobe)?;
        let mut child = Command::new(ffmpeg)
            .args(["-v", "error", "-nostdin", "-noautorotate", "-i"])
            .arg(path)
            .args(["-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| spawn_error(path, ffmpeg, e))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Ok(Self {
            path: path.to_path_buf(),
            probe,
            child,
            stdout,
            stderr: Some(stderr),
            next: 0,
            finished: false,
        })
    }

    /// Nominal frames per second.
    pub fn frame_rate(&self) -> f64 {
        self.probe.fps
    }

    fn video_error(&self, reason: impl Into<String>) -> CaptureError {
        CaptureError::Video {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    /// Waits for ffmpeg at the end of its output and turns a failure into an error
    /// carrying its first message line.
    fn finish(&mut self) -> Result<(), CaptureError> {
        self.finished = true;
        let status = self
            .child
            .wait()
            .map_err(|e| self.video_error(e.to_string()))?;
        let text = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if status.success() {
            return Ok(());
        }
        let first = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        Err(self.video_error(format!("ffmpeg failed ({status}): {first}")))
    }
}

fn spawn_error(path: &Path, program: &OsStr, err: io::Error) -> CaptureError {
    if err.kind() == io::ErrorKind::NotFound {
        CaptureError::FfmpegMissing {
            path: path.to_path_buf(),
            program: program.to_string_lossy().into_owned(),
        }
    } else {
        CaptureError::Video {
            path: path.to_path_buf(),
            reason: format!("cannot run {}: {err}", program.to_string_lossy()),
        }
    }
}

/// Runs `ffprobe` on the first video stream.
fn probe(path: &Path, ffprobe: &OsStr) -> Result<Probe, CaptureError> {
    let out = Command::new(ffprobe)
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .arg("stream=width,height,avg_frame_rate,r_frame_rate,nb_frames")
        .args(["-of", "default=noprint_wrappers=1"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| spawn_error(path, ffprobe, e))?;
    let video_err = |reason: String| CaptureError::Video {
        path: path.to_path_buf(),
        reason,
    };
    if !out.status.success() {
        let text = String::from_utf8_lossy(&out.stderr);
        let first = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message");
        return Err(video_err(format!("ffprobe failed: {first}")));
    }
    parse_probe(&String::from_utf8_lossy(&out.stdout))
        .ok_or_else(|| video_err("no video stream found".into()))
}

/// Parses `key=value` lines of ffprobe; `None` without a usable width and height.
fn parse_probe(text: &str) -> Option<Probe> {
    let value = |key: &str| {
        text.lines()
            .filter_map(|l| l.trim().split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.trim())
    };
    let width: u32 = value("width")?.parse().ok().filter(|&w| w > 0)?;
    let height: u32 = value("height")?.parse().ok().filter(|&h| h > 0)?;
    let fps = ["avg_frame_rate", "r_frame_rate"]
        .into_iter()
        .filter_map(|k| value(k).and_then(parse_rate))
        .next()
        .unwrap_or(FALLBACK_FPS);
    let frames = value("nb_frames")
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0);
    Some(Probe {
        width,
        height,
        fps,
        frames,
    })
}

/// Parses `30000/1001` or `25`; `None` for `0/0` and other unusable rates.
fn parse_rate(text: &str) -> Option<f64> {
    let rate = match text.split_once('/') {
        Some((n, d)) => n.parse::<f64>().ok()? / d.parse::<f64>().ok()?,
        None => text.parse().ok()?,
    };
    (rate.is_finite() && rate > 0.0).then_some(rate)
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl FrameSource for VideoSource {
    fn describe(&self) -> String {
        format!(
            "video {} ({}x{} @ {:.2} fps)",
            self.path.display(),
            self.probe.width,
            self.probe.height,
            self.probe.fps
        )
    }

    fn size(&self) -> (u32, u32) {
        (self.probe.width, self.probe.height)
    }

    fn is_live(&self) -> bool {
        false
    }

    fn len_hint(&self) -> Option<u64> {
        self.probe.frames
    }

    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        if self.finished {
            return Ok(None);
        }
        let (width, height) = self.size();
        let start = Instant::now();
        let mut rgb = vec![0u8; width as usize * height as usize * 3];
        let got =
            read_full(&mut self.stdout, &mut rgb).map_err(|e| self.video_error(e.to_string()))?;
        if got == 0 {
            self.finish()?;
            return Ok(None);
        }
        if got < rgb.len() {
            self.finish()?;
            return Err(self.video_error(format!("frame {} is truncated", self.next)));
        }
        let index = self.next;
        self.next += 1;
        Ok(Some(CapturedFrame {
            frame: Frame {
                width,
                height,
                rgb,
                timestamp: Duration::from_secs_f64(index as f64 / self.probe.fps),
                index,
            },
            decode_ms: millis_since(start),
            name: None,
            truth: None,
        }))
    }
}

impl Drop for VideoSource {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if let Some(handle) = self.stderr.take() {
            let _ = handle.join();
        }
    }
}

/// Whether `program -version` runs (used to skip tests where ffmpeg is absent).
pub fn program_available(program: &str) -> bool {
    Command::new(OsString::from(program))
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_output_is_parsed() {
        let text =
            "width=640\nheight=360\nr_frame_rate=30000/1001\navg_frame_rate=0/0\nnb_frames=N/A\n";
        let p = parse_probe(text).unwrap();
        assert_eq!((p.width, p.height, p.frames), (640, 360, None));
        assert!((p.fps - 29.97).abs() < 0.01);
        let p = parse_probe("width=8\nheight=6\navg_frame_rate=25/1\nnb_frames=12").unwrap();
        assert_eq!((p.fps, p.frames), (25.0, Some(12)));
        assert_eq!(parse_probe("height=6\n"), None);
        assert_eq!(parse_rate("0/0"), None);
    }

    #[test]
    fn missing_ffmpeg_gives_a_clear_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("clip.mp4");
        std::fs::write(&path, b"whatever").unwrap();
        let missing = OsStr::new("livecut-test-no-such-ffprobe");
        let err = VideoSource::open_with(&path, OsStr::new("ffmpeg"), missing)
            .err()
            .unwrap();
        assert!(matches!(err, CaptureError::FfmpegMissing { .. }));
        let text = err.to_string();
        assert!(
            text.contains("clip.mp4") && text.contains("not installed"),
            "{text}"
        );
    }

    #[test]
    fn a_file_that_is_not_a_video_is_an_error() {
        if !program_available("ffprobe") {
            eprintln!("note: ffprobe not installed; skipping");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fake.mp4");
        std::fs::write(&path, b"this is not a video").unwrap();
        let err = VideoSource::open(&path).err().unwrap();
        assert!(matches!(err, CaptureError::Video { .. }), "{err}");
    }
}
