//! Video files through the system `ffmpeg` program: `ffprobe` reads the size and frame
//! rate, `ffmpeg` decodes to raw rgb24 frames on a pipe. No codec is linked in.
//!
//! ffmpeg also logs one `showinfo` line per decoded picture and its decoder errors on
//! its other pipe; a [`VideoStream`] pairs the two. Where a damaged stretch of the file
//! could not be decoded, the frames after it keep their place in the video (their
//! index jumps over the lost ones), so consumers see, count and report the gap.

use super::{CaptureError, CapturedFrame, Frame, FrameSource, millis_since};
use crossbeam_channel::{Receiver, RecvTimeoutError, unbounded};
use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Frame rate assumed when the container does not give one.
const FALLBACK_FPS: f64 = 30.0;

/// Frame rates outside this range are taken as a container's nonsense.
const FPS_RANGE: std::ops::RangeInclusive<f64> = 0.01..=1000.0;

/// Largest frame side read, in pixels (ffprobe may report anything for a damaged
/// file; a frame buffer is allocated from it).
pub const MAX_SIDE: u32 = 16384;

/// Largest frame read, in pixels.
pub const MAX_PIXELS: u64 = 8192 * 8192;

/// Longest log line kept; ffmpeg's are far shorter.
const MAX_LOG_LINE: usize = 4096;

/// How long a decoded picture waits for its log line before the log is taken to
/// carry none (frames are then numbered in order).
const LOG_WAIT: Duration = Duration::from_secs(5);

/// Most frames one damaged stretch is taken to hide.
const MAX_GAP: f64 = 1e9;

/// Stream properties as `ffprobe` reports them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Probe {
    /// Frame width.
    pub width: u32,
    /// Frame height.
    pub height: u32,
    /// Nominal frames per second.
    pub fps: f64,
    /// Number of frames, where the container says.
    pub frames: Option<u64>,
}

impl Probe {
    /// Parses ffprobe's `key=value` lines; `None` without a usable width and height
    /// (zero, or more than [`MAX_SIDE`] or [`MAX_PIXELS`]).
    pub fn parse(text: &str) -> Option<Self> {
        let value = |key: &str| {
            text.lines()
                .filter_map(|l| l.trim().split_once('='))
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.trim())
        };
        let side = |key| {
            value(key)?
                .parse::<u32>()
                .ok()
                .filter(|s| (1..=MAX_SIDE).contains(s))
        };
        let (width, height) = (side("width")?, side("height")?);
        if u64::from(width) * u64::from(height) > MAX_PIXELS {
            return None;
        }
        let fps = ["avg_frame_rate", "r_frame_rate"]
            .into_iter()
            .filter_map(|k| value(k).and_then(parse_rate))
            .next()
            .unwrap_or(FALLBACK_FPS);
        let frames = value("nb_frames")
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0);
        Some(Self {
            width,
            height,
            fps,
            frames,
        })
    }

    fn frame_bytes(&self) -> usize {
        self.width as usize * self.height as usize * 3
    }
}

/// Parses `30000/1001` or `25`; `None` for `0/0` and rates outside [`FPS_RANGE`].
fn parse_rate(text: &str) -> Option<f64> {
    let rate = match text.split_once('/') {
        Some((n, d)) => n.parse::<f64>().ok()? / d.parse::<f64>().ok()?,
        None => text.parse().ok()?,
    };
    FPS_RANGE.contains(&rate).then_some(rate)
}

/// What one line of ffmpeg's log says, as far as the frames are concerned.
#[derive(Clone, Debug, PartialEq)]
enum LogLine {
    /// A decoded picture reached the output, at this time in seconds.
    Picture(f64),
    /// The decoder or demuxer reported an error.
    Error(String),
}

/// Reads a `showinfo` picture line (`... n: 3 pts: 300 pts_time:0.3 ...`) or an
/// error line (`[error]`/`[fatal]` level tags); anything else is `None`.
fn parse_log_line(line: &str) -> Option<LogLine> {
    if line.contains("showinfo") {
        let time = line.split_once("pts_time:")?.1.split_whitespace().next()?;
        return time.parse().ok().map(LogLine::Picture);
    }
    ["[error] ", "[fatal] ", "[panic] "].iter().find_map(|tag| {
        let (_, message) = line.split_once(tag)?;
        Some(LogLine::Error(message.trim().to_string()))
    })
}

/// Reads `log` line by line on its own thread, sending what matters; the thread's
/// result is the first error line, for a failure message.
fn spawn_log_reader(
    log: impl Read + Send + 'static,
) -> io::Result<(Receiver<LogLine>, JoinHandle<Option<String>>)> {
    let (tx, rx) = unbounded();
    let handle = std::thread::Builder::new()
        .name("livecut-ffmpeg-log".into())
        .spawn(move || {
            let mut reader = BufReader::new(log);
            let mut first_error = None;
            let mut line = Vec::new();
            loop {
                line.clear();
                match (&mut reader)
                    .take(MAX_LOG_LINE as u64)
                    .read_until(b'\n', &mut line)
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let text = String::from_utf8_lossy(&line);
                let Some(parsed) = parse_log_line(text.trim_end()) else {
                    continue;
                };
                if let LogLine::Error(message) = &parsed {
                    first_error.get_or_insert_with(|| message.clone());
                }
                let _ = tx.send(parsed);
            }
            first_error
        })?;
    Ok((rx, handle))
}

/// Why a [`VideoStream`] ended early.
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// The pictures ended inside a frame.
    #[error("frame {0} is truncated")]
    Truncated(u64),
    /// Reading the pictures failed.
    #[error("{0}")]
    Read(#[from] io::Error),
}

/// Frames out of ffmpeg's two output streams: raw rgb24 pictures of the probed size
/// on one, its log on the other. Frames are numbered in order, except after decoder
/// errors where the pictures' times show a gap: there the index skips the frames the
/// gap hides.
pub struct VideoStream<R> {
    probe: Probe,
    pictures: R,
    log: Receiver<LogLine>,
    log_thread: Option<JoinHandle<Option<String>>>,
    /// The log has carried no picture line in time: stop waiting for them.
    log_silent: bool,
    next: u64,
    last_time: Option<f64>,
    lost: u64,
}

impl<R: Read> VideoStream<R> {
    /// Reads frames of `probe`'s size from `pictures`, each paired with its line of
    /// `log` (read on a thread of its own, so neither pipe can fill up and stall).
    pub fn new(probe: Probe, pictures: R, log: impl Read + Send + 'static) -> io::Result<Self> {
        let (log, handle) = spawn_log_reader(log)?;
        Ok(Self {
            probe,
            pictures,
            log,
            log_thread: Some(handle),
            log_silent: false,
            next: 0,
            last_time: None,
            lost: 0,
        })
    }

    /// Frames that could not be decoded so far (the gaps in the indices).
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// The next frame; `Ok(None)` at the end of the pictures.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, StreamError> {
        let len = self.probe.frame_bytes();
        // Grown as bytes arrive, so a stream that ends early costs what it held.
        let mut rgb = Vec::with_capacity(len.min(1 << 20));
        (&mut self.pictures)
            .take(len as u64)
            .read_to_end(&mut rgb)?;
        if rgb.is_empty() {
            return Ok(None);
        }
        if rgb.len() < len {
            return Err(StreamError::Truncated(self.next));
        }
        let (time, damaged) = self.picture_line();
        let index = self.place(time, damaged);
        let timestamp =
            Duration::try_from_secs_f64(index as f64 / self.probe.fps).unwrap_or(Duration::MAX);
        Ok(Some(Frame {
            width: self.probe.width,
            height: self.probe.height,
            rgb,
            timestamp,
            index,
        }))
    }

    /// The log's time of the picture just read, and whether errors came before it.
    fn picture_line(&mut self) -> (Option<f64>, bool) {
        let mut damaged = false;
        while !self.log_silent {
            match self.log.recv_timeout(LOG_WAIT) {
                Ok(LogLine::Error(_)) => damaged = true,
                Ok(LogLine::Picture(time)) => return (Some(time), damaged),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    self.log_silent = true;
                }
            }
        }
        (None, damaged)
    }

    /// The index of a picture: the next one, or after errors, as many further as its
    /// time is from the previous picture's (in frames, less one).
    fn place(&mut self, time: Option<f64>, damaged: bool) -> u64 {
        let time = time.filter(|t| t.is_finite());
        let gap = match (time, self.last_time) {
            (Some(now), Some(before)) if damaged => {
                (((now - before) * self.probe.fps).round() - 1.0).clamp(0.0, MAX_GAP) as u64
            }
            _ => 0,
        };
        if time.is_some() {
            self.last_time = time;
        }
        let index = self.next.saturating_add(gap);
        self.lost = self.lost.saturating_add(gap);
        self.next = index.saturating_add(1);
        index
    }

    /// Waits for the log to end; its first error line, if any.
    fn first_error(&mut self) -> Option<String> {
        self.log_thread.take().and_then(|h| h.join().ok().flatten())
    }
}

/// A video file decoded by a running `ffmpeg` process.
pub struct VideoSource {
    path: PathBuf,
    probe: Probe,
    child: Child,
    stream: VideoStream<ChildStdout>,
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
        // Every decoded picture as it is (no frames repeated or dropped to keep a
        // rate), with its showinfo line and the errors, tagged by level, on stderr.
        let mut child = Command::new(ffmpeg)
            .args(["-loglevel", "level+info", "-nostats", "-hide_banner"])
            .args(["-nostdin", "-noautorotate", "-i"])
            .arg(path)
            .args([
                "-map",
                "0:v:0",
                "-vf",
                "showinfo=checksum=0",
                "-vsync",
                "passthrough",
            ])
            .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| spawn_error(path, ffmpeg, e))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let stream = match VideoStream::new(probe, stdout, stderr) {
            Ok(stream) => stream,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CaptureError::Video {
                    path: path.to_path_buf(),
                    reason: format!("cannot start reading ffmpeg's log: {e}"),
                });
            }
        };
        Ok(Self {
            path: path.to_path_buf(),
            probe,
            child,
            stream,
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
    /// carrying its first error line.
    fn finish(&mut self) -> Result<(), CaptureError> {
        self.finished = true;
        let status = self
            .child
            .wait()
            .map_err(|e| self.video_error(e.to_string()))?;
        let first = self.stream.first_error();
        if status.success() {
            return Ok(());
        }
        let first = first.unwrap_or_else(|| "no message".into());
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
    Probe::parse(&String::from_utf8_lossy(&out.stdout)).ok_or_else(|| {
        video_err(format!(
            "no video stream found (or frames larger than {MAX_SIDE} pixels a side)"
        ))
    })
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

    fn len_hint(&self) -> Option<u64> {
        self.probe.frames
    }

    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        if self.finished {
            return Ok(None);
        }
        let start = Instant::now();
        match self.stream.next_frame() {
            Ok(Some(frame)) => Ok(Some(CapturedFrame {
                frame,
                decode_ms: millis_since(start),
                name: None,
                truth: None,
            })),
            Ok(None) => {
                self.finish()?;
                Ok(None)
            }
            Err(e @ StreamError::Truncated(_)) => {
                // ffmpeg's own failure, where it failed, says more than the truncation.
                self.finish()?;
                Err(self.video_error(e.to_string()))
            }
            Err(e @ StreamError::Read(_)) => Err(self.video_error(e.to_string())),
        }
    }
}

impl Drop for VideoSource {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = self.stream.first_error();
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
        let p = Probe::parse(text).unwrap();
        assert_eq!((p.width, p.height, p.frames), (640, 360, None));
        assert!((p.fps - 29.97).abs() < 0.01);
        let p = Probe::parse("width=8\nheight=6\navg_frame_rate=25/1\nnb_frames=12").unwrap();
        assert_eq!((p.fps, p.frames), (25.0, Some(12)));
        assert_eq!(Probe::parse("height=6\n"), None);
        assert_eq!(parse_rate("0/0"), None);
    }

    #[test]
    fn absurd_probes_are_refused_or_tamed() {
        assert_eq!(Probe::parse("width=100000\nheight=6"), None);
        assert_eq!(Probe::parse("width=16384\nheight=16384"), None);
        let p = Probe::parse("width=8\nheight=6\navg_frame_rate=1/1e300").unwrap();
        assert_eq!(p.fps, FALLBACK_FPS);
    }

    #[test]
    fn log_lines_are_told_apart() {
        let picture = "[Parsed_showinfo_0 @ 0x55] [info] n:  10 pts:   1000 pts_time:1       pos: 5 fmt:rgb24";
        assert_eq!(parse_log_line(picture), Some(LogLine::Picture(1.0)));
        let error = "[matroska,webm @ 0x55] [error] Element at 0x734c exceeds its master";
        assert_eq!(
            parse_log_line(error),
            Some(LogLine::Error(
                "Element at 0x734c exceeds its master".into()
            ))
        );
        let second = "[Parsed_showinfo_0 @ 0x55] [info] color_range:pc color_space:bt470bg";
        assert_eq!(parse_log_line(second), None);
        assert_eq!(parse_log_line("[info] Stream mapping:"), None);
    }

    /// A stream of 2x1 pictures at 10 fps whose log is `log`.
    fn stream(pictures: usize, log: &str) -> VideoStream<io::Cursor<Vec<u8>>> {
        let probe = Probe::parse("width=2\nheight=1\navg_frame_rate=10/1").unwrap();
        let bytes = (0..pictures * 6).map(|i| i as u8).collect();
        VideoStream::new(
            probe,
            io::Cursor::new(bytes),
            io::Cursor::new(log.to_string()),
        )
        .unwrap()
    }

    fn indices(stream: &mut VideoStream<io::Cursor<Vec<u8>>>) -> Vec<u64> {
        std::iter::from_fn(|| stream.next_frame().unwrap().map(|f| f.index)).collect()
    }

    #[test]
    fn frames_after_a_damaged_stretch_keep_their_place() {
        let line =
            |t: &str| format!("[Parsed_showinfo_0 @ 0x1] [info] n: 0 pts: 0 pts_time:{t} pos: 0\n");
        let mut log: String = ["0", "0.1", "0.2"].map(line).concat();
        log += "[mjpeg @ 0x2] [error] error count: 64\n";
        log += &line("0.6");
        // A gap without errors (a variable frame rate) is no damage.
        log += &line("0.9");
        let mut s = stream(5, &log);
        assert_eq!(indices(&mut s), [0, 1, 2, 6, 7]);
        assert_eq!(s.lost(), 3);
    }

    #[test]
    fn without_picture_lines_frames_are_numbered_in_order() {
        let mut s = stream(3, "[error] something odd\n");
        assert_eq!(indices(&mut s), [0, 1, 2]);
        assert_eq!(s.lost(), 0);
        let mut cut = stream(1, "");
        cut.probe.width = 3;
        assert!(matches!(cut.next_frame(), Err(StreamError::Truncated(0))));
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
