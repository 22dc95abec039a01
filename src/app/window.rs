//! The livecut window: the settings it remembers, its runtime handles (the worker,
//! background jobs, the recorder) and its parts (source, seeds, view, engine,
//! timing, notices), and what it does once per frame before drawing. Drawing is in
//! [`super::panels`] and the parts' own files; events in [`super::events`]; the
//! user's commands in [`super::command`].

use super::backend::Backend;
use super::background::BackgroundMode;
use super::command::Command;
use super::engine::EngineStatus;
use super::notices::{Notice, Notices};
use super::picture;
use super::recorder::{Progress, Recorder};
use super::seeds::SeedEditor;
use super::settings::{BackgroundKind, Settings, ViewMode};
use super::shortcuts;
use super::source::{Source, SourceState};
use super::stats::Stats;
use super::tasks::{Done, Tasks};
use super::vcam::{Report, VirtualCameraOut};
use super::view::View;
use crate::capture::{FrameSource, list_cameras};
use crate::compute::ComputeDevice;
use crate::energy::SeedLabel;
use crate::grid::Mask;
use crate::maxflow::{EngineChoice, EngineKind};
use crate::pipeline::GpuChoice;
use std::time::{Duration, Instant};

/// How often the window redraws while a source is live.
const LIVE_REDRAW: Duration = Duration::from_millis(25);
/// How often the window polls for background jobs otherwise.
const IDLE_REDRAW: Duration = Duration::from_millis(100);
/// How often the cameras are listed to see whether a lost one is back.
const LOOK_FOR_LOST: Duration = Duration::from_secs(2);

/// How the window starts.
pub struct AppOptions {
    /// The opened first source.
    pub source: Box<dyn FrameSource>,
    /// Engine to use instead of the remembered one.
    pub engine: Option<EngineChoice>,
    /// View to show instead of the remembered one.
    pub view: Option<ViewMode>,
    /// A message to show at start (e.g. why the camera could not be opened).
    pub notice: Option<String>,
    /// Close the window after this long and report the frame rates.
    pub quit_after: Option<Duration>,
    /// Where the energy may run: `Auto` lends the window's GPU to the energy beside the
    /// CPU engine where it is a real one, `Wgpu` any adapter, `Cuda`/`None` never.
    pub gpu: GpuChoice,
}

/// The livecut window.
pub struct LivecutApp {
    /// What persists between runs.
    pub(super) settings: Settings,
    pub(super) backend: Backend,
    pub(super) tasks: Tasks,
    pub(super) recorder: Recorder,
    pub(super) source: Source,
    pub(super) seeds: SeedEditor,
    pub(super) view: View,
    pub(super) engine: EngineStatus,
    pub(super) stats: Stats,
    pub(super) notices: Notices,
    pub(super) vcam: VirtualCameraOut,
    pub(super) background: BackgroundMode,
}

impl LivecutApp {
    /// Starts the worker on the options' source and the background probes (CUDA
    /// device, camera list, remembered background picture).
    pub fn new(
        options: AppOptions,
        storage: Option<&dyn eframe::Storage>,
    ) -> std::io::Result<Self> {
        let (mut settings, settings_notice) = Settings::load(storage);
        if let Some(engine) = options.engine {
            settings.engine = engine;
        }
        if let Some(view) = options.view {
            settings.view = view;
        }
        let backend = Backend::start(options.source, settings.segment_params(), settings.engine)?;
        let mut tasks = Tasks::default();
        tasks.probe_cuda();
        tasks.spawn(|| Done::Cameras(list_cameras().map_err(|e| e.to_string())));
        if let (BackgroundKind::Image, Some(path)) =
            (settings.background, settings.background_image.clone())
        {
            tasks.load_backdrop(path);
        }
        let mut notices = Notices::default();
        for text in [options.notice, settings_notice].into_iter().flatten() {
            notices.push(text, true);
        }
        Ok(Self {
            settings,
            backend,
            tasks,
            recorder: Recorder::new(),
            source: Source::default(),
            seeds: SeedEditor::default(),
            view: View::default(),
            engine: EngineStatus::default(),
            stats: Stats::new(options.quit_after),
            notices,
            vcam: VirtualCameraOut::default(),
            background: BackgroundMode::default(),
        })
    }

    /// Draws the picture from now on with livecut's own wgpu pipeline on
    /// `render_state` (see [`picture`]): the window does this; other hosts keep the
    /// egui texture.
    pub fn draw_picture_with(&mut self, render_state: &eframe::egui_wgpu::RenderState) {
        picture::install(render_state);
        self.view.draw_directly();
    }

    /// Lends the window's wgpu device to the energy of the CPU engine's frames (one
    /// device for the frame and the picture), where `gpu` allows: a real GPU for
    /// `Auto`, any adapter for `Wgpu`.
    pub fn compute_with(&mut self, render_state: &eframe::egui_wgpu::RenderState, gpu: GpuChoice) {
        let info = render_state.adapter.get_info();
        let software = info.device_type == eframe::wgpu::DeviceType::Cpu;
        let lend = match gpu {
            GpuChoice::Auto => !software,
            GpuChoice::Wgpu => true,
            GpuChoice::Cuda | GpuChoice::None => false,
        };
        if lend {
            let device = render_state.device.clone();
            let queue = render_state.queue.clone();
            let gpu = ComputeDevice::shared(device, queue, &info);
            if let Err(e) = self.view.compose_on(gpu.clone()) {
                self.notices
                    .push(format!("The picture is composed on the CPU ({e})"), false);
            }
            self.lend_compute(gpu);
        }
    }

    /// Lets the energy beside the CPU engine run on `gpu` from the next frame on, and
    /// the virtual camera's composites from its next start.
    pub fn lend_compute(&mut self, gpu: ComputeDevice) {
        self.vcam.compute = Some(gpu.clone());
        self.backend.set_compute(gpu);
    }

    /// Whether the picture shown was composed on the GPU and drawn from there.
    pub fn picture_on_gpu(&self) -> bool {
        self.view.picture_on_gpu()
    }

    /// Whether that picture was composed from the frame the energy left on the
    /// window's device, with no second upload.
    pub fn picture_from_device_frame(&self) -> bool {
        self.view.picture_from_device_frame()
    }

    /// The settings (what persists between runs).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The newest segmented frame's mask, if any.
    pub fn mask(&self) -> Option<&Mask> {
        self.view.latest.as_ref()?.mask.as_deref()
    }

    /// Frames processed since start (segmented or passed through).
    pub fn processed_frames(&self) -> u64 {
        self.stats.processed
    }

    /// The engine cutting the frames.
    pub fn engine_in_use(&self) -> EngineKind {
        self.engine.in_use
    }

    /// The running source's description.
    pub fn source_description(&self) -> Option<&str> {
        self.source.description()
    }

    /// How the source is doing.
    pub fn source_state(&self) -> &SourceState {
        &self.source.state
    }

    /// Notices on screen.
    pub fn notices(&self) -> &[Notice] {
        self.notices.list()
    }

    /// Progress of the current or last recording.
    pub fn recording(&self) -> &Progress {
        self.recorder.progress()
    }

    /// Whether frames are paused.
    pub fn is_paused(&self) -> bool {
        self.source.paused
    }

    /// One line on the frame rates since start, printed when the window closes.
    pub fn rate_report(&self) -> String {
        self.stats.report()
    }

    /// Everything that happens once per UI frame before drawing: the worker's events,
    /// finished jobs, the writer's failures and the shortcuts are taken in, changed
    /// seeds sent, and the picture composed again where it is stale.
    pub(super) fn update_state(&mut self, ctx: &egui::Context) {
        let now = Instant::now();
        self.stats.timing.ui.tick(now);
        for event in self.backend.poll() {
            self.on_event(event, now);
        }
        for done in self.tasks.poll() {
            self.on_done(done);
        }
        self.look_for_lost_source(now);
        for error in self.recorder.poll() {
            self.notices
                .push(format!("Recording stopped: {error}"), true);
        }
        match self.vcam.poll() {
            Some(Report::Stopped(error)) => self
                .notices
                .push(format!("Virtual camera stopped: {error}"), true),
            Some(Report::Note(note)) => self.notices.push(note, false),
            None => {}
        }
        for action in shortcuts::pressed(ctx) {
            if let Some(command) = Command::of(action) {
                self.apply(command);
            }
        }
        self.send_changed_seeds();
        let seeds = self.seeds.shown.as_ref();
        if let Some(ms) = self.view.refresh(ctx, &self.settings, seeds) {
            self.stats.timing.set_display_ms(ms);
        }
        if let Some(failure) = self.view.gpu_failure.take() {
            self.notices.push(failure, false);
        }
        if self.stats.time_is_up() {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        // Live video: redraw at 40 Hz, above the sources' frame rates so that every
        // frame is shown, without drawing more often than anything new can appear
        // (drawing is the dearest thing the UI does where the renderer is software);
        // otherwise poll slowly for background jobs. Input redraws at once either way.
        let wait = if self.source.is_live() {
            LIVE_REDRAW
        } else {
            IDLE_REDRAW
        };
        ctx.request_repaint_after(wait);
    }

    /// While a lost camera is not back, lists the cameras every few seconds to see.
    fn look_for_lost_source(&mut self, now: Instant) {
        let Some(lost) = &mut self.source.lost else {
            return;
        };
        if lost.back || lost.listing || lost.looked.is_some_and(|t| now - t < LOOK_FOR_LOST) {
            return;
        }
        lost.looked = Some(now);
        lost.listing = true;
        self.tasks
            .spawn(|| Done::Cameras(list_cameras().map_err(|e| e.to_string())));
    }

    /// Sends changed scribbles to the worker; seeds without both labels cannot be
    /// cut, so the worker is told to pass frames through instead, but for corrections
    /// of a learned background (any stroke is a hard constraint there).
    fn send_changed_seeds(&mut self) {
        let Some(seeds) = self.seeds.take_changed() else {
            return;
        };
        let learned = self.background.frames > 0 && !self.background.learning();
        let any = seeds.labels.iter().any(|&l| l != SeedLabel::Unknown);
        let source = self.seeds.source;
        if self.seeds.usable || (learned && any) {
            self.backend.set_seeds(source, seeds);
        } else {
            self.backend.clear_seeds(source);
        }
        self.view.stale = true;
    }
}

impl eframe::App for LivecutApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }

    /// The panels' colour: panels leave their background to the clear.
    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        visuals.panel_fill.to_normalized_gamma_f32()
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        self.settings.store(storage);
    }

    fn on_exit(&mut self) {
        if self.stats.closes_by_itself() {
            eprintln!("{}", self.rate_report());
        }
    }
}
