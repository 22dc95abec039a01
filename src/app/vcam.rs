//! The virtual-camera part of the window: a toggle and the device's path. While on,
//! every frame goes, composited, to the device from a writer thread of its own, so
//! the UI never waits on it: the cut-out view's composite while that view shows, the
//! background view's otherwise (the overlay and the diagnostic views are not for a
//! call), composed on the window's GPU where one was lent. A failure turns it off with
//! a notice saying why; a GPU that fails hands the composites to the CPU, told once.

use super::command::Command;
use super::compose::Look;
use super::recorder::Shot;
use super::settings::ViewMode;
use crate::composite::{Composite, Compositor};
use crate::compute::ComputeDevice;
use crate::grid::Mask;
use crate::output::VirtualCamera;
use crossbeam_channel::{Receiver, Sender, TrySendError, bounded, unbounded};
use egui::{RichText, Ui};
use image::RgbaImage;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

/// The device offered first: the number the README's modprobe line creates.
const DEFAULT_DEVICE: &str = "/dev/video10";
/// The frame rate readers of the device are told; frames go out as they come.
const FPS: u32 = 30;
/// Frames waiting for the writer before new ones are skipped.
const QUEUE: usize = 2;

/// The toggle, the device path and, while on, the writer thread's handles.
pub(super) struct VirtualCameraOut {
    /// The device (or `file:PATH`) frames go to.
    pub(super) path: String,
    /// Hands frames to the writer; `None` while off.
    frames: Option<Sender<(Shot, Look)>>,
    /// What the writer tells: why it stopped, where it composes.
    reports: Option<Receiver<Report>>,
    /// Frames written since turned on.
    sent: Arc<AtomicU64>,
    /// The GPU the composites are made on, where the window lent one.
    pub(super) compute: Option<ComputeDevice>,
}

/// What the writer thread tells the window.
#[derive(Debug, PartialEq)]
pub(super) enum Report {
    /// It stopped, for this reason; the output is off.
    Stopped(String),
    /// Something to know that does not stop it.
    Note(String),
}

impl Default for VirtualCameraOut {
    fn default() -> Self {
        Self {
            path: DEFAULT_DEVICE.into(),
            frames: None,
            reports: None,
            sent: Arc::default(),
            compute: None,
        }
    }
}

impl VirtualCameraOut {
    /// Whether frames are being sent.
    pub(super) fn is_on(&self) -> bool {
        self.frames.is_some()
    }

    /// Turns the output on (a writer thread for the device) or off.
    pub(super) fn toggle(&mut self) {
        if self.frames.take().is_some() {
            return;
        }
        let (frames, frame_rx) = bounded(QUEUE);
        let (report_tx, reports) = unbounded();
        let (path, sent) = (self.path.clone(), Arc::new(AtomicU64::new(0)));
        let counter = sent.clone();
        let compute = self.compute.clone();
        let spawned = thread::Builder::new()
            .name("livecut-vcam".into())
            .spawn(move || writer(&path, frame_rx, compute, report_tx, &counter));
        if spawned.is_ok() {
            self.frames = Some(frames);
            self.reports = Some(reports);
            self.sent = sent;
        }
    }

    /// Hands one frame to the writer when on; never waits (a busy writer skips it).
    pub(super) fn offer(&mut self, shot: &Shot, look: &Look) {
        let Some(frames) = &self.frames else {
            return;
        };
        if let Err(TrySendError::Disconnected(_)) = frames.try_send((shot.clone(), look.clone())) {
            self.frames = None;
        }
    }

    /// What the writer told since the last call, once each: after
    /// [`Report::Stopped`] the output is off.
    pub(super) fn poll(&mut self) -> Option<Report> {
        let report = self.reports.as_ref()?.try_recv().ok()?;
        if matches!(report, Report::Stopped(_)) {
            self.frames = None;
            self.reports = None;
        }
        Some(report)
    }

    /// The toggle, the device path (editable while off) and the frames sent.
    pub(super) fn ui(&mut self, ui: &mut Ui, commands: &mut Vec<Command>) {
        let on = self.is_on();
        let mut checked = on;
        if ui
            .checkbox(&mut checked, "Send to a virtual camera")
            .on_hover_text("Video-call programs see the composite as a camera (v4l2loopback)")
            .changed()
        {
            commands.push(Command::ToggleVirtualCamera);
        }
        ui.horizontal(|ui| {
            let label = ui.label("Device");
            ui.add_enabled(
                !on,
                egui::TextEdit::singleline(&mut self.path).desired_width(140.0),
            )
            .labelled_by(label.id);
        });
        if on {
            let sent = self.sent.load(Ordering::Relaxed);
            ui.label(RichText::new(format!("{sent} frames sent")).small());
        }
    }
}

/// What goes to the camera for the look the view has.
fn composite_of(look: &Look) -> Composite {
    match look.mode {
        ViewMode::CutOut => Composite::CutOut,
        _ => Composite::Background(look.backdrop.clone()),
    }
}

/// Composites and writes frames until the window turns the output off (the sender is
/// dropped) or writing fails. The device is opened for the first frame's size, and
/// opened again when the source's size changes. Composes on `compute` where given.
fn writer(
    path: &str,
    frames: Receiver<(Shot, Look)>,
    compute: Option<ComputeDevice>,
    reports: Sender<Report>,
    sent: &AtomicU64,
) {
    let mut camera: Option<VirtualCamera> = None;
    // kept from frame to frame: composing allocates nothing while the size holds
    let mut compositor = compositor_on(compute, &reports);
    let mut image = RgbaImage::default();
    for (shot, look) in frames {
        let frame = &shot.captured.frame;
        let (w, h) = (frame.width, frame.height);
        // A device of the wrong size is closed before it is opened again.
        let mut open = match camera.take().filter(|c| c.fits(w, h)) {
            Some(open) => open,
            None => match VirtualCamera::open(path, w, h, FPS) {
                Ok(open) => open,
                Err(e) => {
                    let _ = reports.send(Report::Stopped(e.to_string()));
                    return;
                }
            },
        };
        // Before anything is segmented the frame goes out as it is.
        let whole;
        let mask = match shot.mask.as_deref() {
            Some(mask) => mask,
            None => {
                whole = Mask::from_fn(w, h, |_| true);
                &whole
            }
        };
        if let Some(e) = compositor.compose_into(&composite_of(&look), frame, mask, &mut image) {
            let _ = reports.send(Report::Note(format!(
                "The GPU failed composing for the virtual camera ({e}); composing on the CPU"
            )));
        }
        if let Err(e) = open.send(&image, frame.timestamp) {
            let _ = reports.send(Report::Stopped(e.to_string()));
            return;
        }
        sent.fetch_add(1, Ordering::Relaxed);
        camera = Some(open);
    }
}

/// The compositor on `compute`, or on the CPU where none was lent or its shaders do not
/// compile there (told).
fn compositor_on(compute: Option<ComputeDevice>, reports: &Sender<Report>) -> Compositor {
    let Some(gpu) = compute else {
        return Compositor::cpu();
    };
    Compositor::on(gpu).unwrap_or_else(|e| {
        let _ = reports.send(Report::Note(format!(
            "The virtual camera's composites are made on the CPU ({e})"
        )));
        Compositor::cpu()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::recorder::{test_look, test_shot};
    use std::time::{Duration, Instant};

    fn shot(index: u64) -> Shot {
        test_shot(90, index, None)
    }

    fn look() -> Look {
        test_look(ViewMode::Background)
    }

    #[test]
    fn frames_go_to_the_sink_while_on() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sink");
        let mut out = VirtualCameraOut {
            path: format!("file:{}", file.display()),
            ..Default::default()
        };
        out.offer(&shot(0), &look());
        assert!(!out.is_on());
        out.toggle();
        assert!(out.is_on());
        out.offer(&shot(1), &look());
        let start = Instant::now();
        while out.sent.load(Ordering::Relaxed) < 1 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        out.toggle();
        assert!(!out.is_on());
        // Unsegmented, the frame goes out as it is: grey 90 is Y 93, no chroma.
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(bytes, [93, 128, 93, 128].repeat(4));
        assert_eq!(out.poll(), None);
    }

    #[test]
    fn a_missing_device_turns_it_off_with_the_reason() {
        let mut out = VirtualCameraOut {
            path: "/dev/video97".into(),
            ..Default::default()
        };
        out.toggle();
        out.offer(&shot(0), &look());
        let start = Instant::now();
        let mut failure = None;
        while failure.is_none() && start.elapsed() < Duration::from_secs(10) {
            failure = out.poll();
            std::thread::sleep(Duration::from_millis(5));
        }
        let Some(Report::Stopped(failure)) = failure else {
            panic!("a failure report: {failure:?}");
        };
        assert!(failure.contains("sudo modprobe v4l2loopback"), "{failure}");
        assert!(!out.is_on());
    }
}
