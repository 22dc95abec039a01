//! The window's state and what it does with the worker's events, the background
//! jobs and the user's actions. Drawing lives in [`super::view`] and
//! [`super::panels`]; this file is the bookkeeping between them.

use super::backend::Backend;
use super::compose::{self, Backdrop, Look};
use super::picture::{self, PictureImage};
use super::recorder::{Recorder, Shot};
use super::scribbles::{Scribbles, Tool, default_seeds};
use super::settings::{BackgroundKind, Settings, ViewMode};
use super::shortcuts::{self, Action};
use super::tasks::{Done, Pick, Tasks};
use super::timing::{FrameSample, Timing};
use crate::capture::{CameraDescription, DemoConfig, FrameSource, SourceSpec, list_cameras};
use crate::energy::{SeedLabel, Seeds};
use crate::maxflow::{EngineChoice, EngineKind};
use crate::pipeline::{Event, FrameResult, SourceInfo};
use egui::{ColorImage, TextureHandle, TextureOptions};
use image::RgbImage;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most notices kept on screen.
const MAX_NOTICES: usize = 4;
/// Smallest and largest brush radius in frame pixels.
pub(super) const BRUSH_RANGE: std::ops::RangeInclusive<f32> = 1.0..=60.0;

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
}

/// Whether the CUDA engine can be chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceStatus {
    /// The probe is still running.
    Probing,
    /// The device's description.
    Ready(String),
    /// Why CUDA cannot be used.
    Missing(String),
}

/// The cameras found on the system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CameraList {
    /// Listing is still running.
    Listing,
    /// The cameras (possibly none).
    Ready(Vec<CameraDescription>),
    /// Why they could not be listed.
    Failed(String),
}

/// How the current source is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceState {
    /// Waiting for the worker to open it.
    Opening,
    /// Frames are coming.
    Running,
    /// The stream is over (files); the last frame stays for editing seeds.
    Ended,
    /// It failed; the message says why.
    Failed(String),
}

/// A message for the user, shown until dismissed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// The text.
    pub text: String,
    /// Whether it reports a failure (else information).
    pub error: bool,
}

/// What the newest result said besides its pictures.
#[derive(Clone, Debug, Default)]
pub struct ResultInfo {
    /// Max-flow value.
    pub flow: u64,
    /// Engine iterations.
    pub iterations: u64,
    /// Whether the cut was dynamic.
    pub dynamic: bool,
    /// Share of foreground pixels, 0..=1.
    pub foreground: f64,
    /// Agreement with the source's ground truth (demo scene).
    pub iou: Option<f64>,
    /// Why the frame was not segmented.
    pub error: Option<String>,
}

/// How often the window redraws while a source is live.
const LIVE_REDRAW: Duration = Duration::from_millis(25);

/// The livecut window.
pub struct LivecutApp {
    pub(super) settings: Settings,
    pub(super) backend: Backend,
    pub(super) tasks: Tasks,
    pub(super) recorder: Recorder,
    pub(super) timing: Timing,
    pub(super) source: Option<SourceInfo>,
    pub(super) source_state: SourceState,
    pub(super) falling_back: bool,
    pub(super) engine_in_use: EngineKind,
    pub(super) engine_has_stochastic: bool,
    pub(super) cuda: DeviceStatus,
    pub(super) cameras: CameraList,
    pub(super) scribbles: Option<Scribbles>,
    pub(super) tool: Tool,
    pub(super) seeds_usable: bool,
    pub(super) latest: Option<Shot>,
    pub(super) info: Option<ResultInfo>,
    pub(super) picture: Option<Picture>,
    /// Draw the picture with [`picture`]'s own wgpu pipeline (installed by [`super::run`]).
    pub(super) direct_picture: bool,
    pub(super) picture_generation: u64,
    pub(super) picture_stale: bool,
    pub(super) shown_seeds: Option<Seeds>,
    pub(super) backdrop: Option<Arc<RgbImage>>,
    pub(super) paused: bool,
    pub(super) notices: Vec<Notice>,
    pub(super) started: Instant,
    pub(super) quit_after: Option<Duration>,
    pub(super) processed: u64,
}

impl LivecutApp {
    /// Starts the worker on the options' source and the background probes (CUDA
    /// device, camera list, remembered background picture).
    pub fn new(
        options: AppOptions,
        storage: Option<&dyn eframe::Storage>,
    ) -> std::io::Result<Self> {
        let mut settings = Settings::load(storage);
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
        let notices = options
            .notice
            .map(|text| Notice { text, error: true })
            .into_iter()
            .collect();
        Ok(Self {
            settings,
            backend,
            tasks,
            recorder: Recorder::new(),
            timing: Timing::default(),
            source: None,
            source_state: SourceState::Opening,
            falling_back: false,
            engine_in_use: EngineKind::Cpu,
            engine_has_stochastic: false,
            cuda: DeviceStatus::Probing,
            cameras: CameraList::Listing,
            scribbles: None,
            tool: Tool::Foreground,
            seeds_usable: false,
            latest: None,
            info: None,
            picture: None,
            direct_picture: false,
            picture_generation: 0,
            picture_stale: false,
            shown_seeds: None,
            backdrop: None,
            paused: false,
            notices,
            started: Instant::now(),
            quit_after: options.quit_after,
            processed: 0,
        })
    }

    /// Draws the picture from now on with livecut's own wgpu pipeline on
    /// `render_state` (see [`picture`]): the window does this; other hosts keep the
    /// egui texture.
    pub fn draw_picture_with(&mut self, render_state: &eframe::egui_wgpu::RenderState) {
        picture::install(render_state);
        self.direct_picture = true;
        self.picture = None;
        self.picture_stale = true;
    }

    /// The settings (what persists between runs).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The newest segmented frame's mask, if any.
    pub fn mask(&self) -> Option<&crate::grid::Mask> {
        self.latest.as_ref()?.mask.as_deref()
    }

    /// Frames processed since start (segmented or passed through).
    pub fn processed_frames(&self) -> u64 {
        self.processed
    }

    /// The engine cutting the frames.
    pub fn engine_in_use(&self) -> EngineKind {
        self.engine_in_use
    }

    /// The running source's description.
    pub fn source_description(&self) -> Option<&str> {
        self.source.as_ref().map(|s| s.description.as_str())
    }

    /// How the source is doing.
    pub fn source_state(&self) -> &SourceState {
        &self.source_state
    }

    /// Notices on screen.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// Progress of the current or last recording.
    pub fn recording(&self) -> &super::recorder::Progress {
        self.recorder.progress()
    }

    /// Whether frames are paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// One line on the frame rates since start, printed when the window closes.
    pub fn rate_report(&self) -> String {
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        format!(
            "{:.1} s: {:.1} UI frames/s ({:.1} ms each on the UI thread before rendering), \
             {:.1} segmented frames/s, {} frames dropped by the worker",
            secs,
            self.timing.ui.total() as f64 / secs,
            self.timing.ui_ms_per_frame(),
            self.processed as f64 / secs,
            self.timing.dropped
        )
    }

    /// Everything that happens once per UI frame before drawing.
    pub(super) fn update_state(&mut self, ctx: &egui::Context) {
        let now = Instant::now();
        self.timing.ui.tick(now);
        for event in self.backend.poll() {
            self.on_event(event, now);
        }
        for done in self.tasks.poll() {
            self.on_done(done);
        }
        for error in self.recorder.poll() {
            self.notify(format!("Recording stopped: {error}"), true);
        }
        for action in shortcuts::pressed(ctx) {
            self.act(action);
        }
        self.sync_seeds();
        self.refresh_textures(ctx);
        if let Some(limit) = self.quit_after
            && self.started.elapsed() >= limit
        {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        // Live video: redraw at 40 Hz, above the sources' frame rates so that every
        // frame is shown, without drawing more often than anything new can appear
        // (drawing is the dearest thing the UI does where the renderer is software);
        // otherwise poll slowly for background jobs. Input redraws at once either way.
        let wait = if !self.paused && self.source_state == SourceState::Running {
            LIVE_REDRAW
        } else {
            Duration::from_millis(100)
        };
        ctx.request_repaint_after(wait);
    }

    pub(super) fn notify(&mut self, text: String, error: bool) {
        if self.notices.iter().any(|n| n.text == text) {
            return;
        }
        self.notices.push(Notice { text, error });
        if self.notices.len() > MAX_NOTICES {
            self.notices.remove(0);
        }
    }

    fn on_event(&mut self, event: Event, now: Instant) {
        match event {
            Event::SourceOpened(info) => self.on_source(info),
            Event::Frame(result) => self.on_frame(*result, now),
            Event::SourceEnded => {
                self.source_state = SourceState::Ended;
                // Keep the last frame segmentable: seeds edits redo a paused frame.
                self.set_paused(true);
            }
            Event::SourceFailed(message) => {
                self.source_state = SourceState::Failed(message.clone());
                if self.falling_back {
                    self.notify(format!("The demo scene failed too: {message}"), true);
                } else {
                    self.notify(format!("{message} — showing the demo scene instead"), true);
                    self.falling_back = true;
                    self.backend.set_source(demo_spec());
                }
            }
            Event::EngineChanged {
                engine,
                note,
                stochastic,
            } => {
                self.engine_in_use = engine;
                self.engine_has_stochastic = stochastic;
                self.timing.clear_samples();
                if let Some(note) = note {
                    self.notify(note, false);
                }
            }
            Event::CommandFailed(message) => self.notify(message, true),
        }
    }

    fn on_source(&mut self, info: SourceInfo) {
        let scribbles = match &info.seeds {
            Some(seeds) => {
                // The worker already cuts with the source's own seeds: nothing to send.
                let mut s = Scribbles::new(seeds.clone());
                s.take_changed();
                self.seeds_usable = usable(seeds);
                self.shown_seeds = Some(seeds.clone());
                self.picture_stale = true;
                s
            }
            None => Scribbles::new(default_seeds(info.width, info.height)),
        };
        self.scribbles = Some(scribbles);
        self.source_state = SourceState::Running;
        self.falling_back = false;
        self.timing.clear_samples();
        self.source = Some(info);
    }

    fn on_frame(&mut self, result: FrameResult, now: Instant) {
        self.processed += 1;
        self.timing.dropped += result.dropped;
        if let Some(error) = &result.error {
            self.on_segment_error(result.engine, error);
        }
        let frame = &result.captured.frame;
        let pixels = (frame.width as f64 * frame.height as f64).max(1.0);
        let iou = result.iou();
        let mut info = ResultInfo {
            error: result.error.clone(),
            iou,
            ..ResultInfo::default()
        };
        let (mask, activity) = match result.output {
            Some(mut output) => {
                info.flow = output.flow;
                info.iterations = output.stats.iterations;
                info.dynamic = output.stats.dynamic;
                info.foreground = output.mask.count_source() as f64 / pixels;
                self.timing.push(
                    FrameSample {
                        index: self.processed,
                        timing: result.timings,
                        display_ms: 0.0,
                        iterations: output.stats.iterations,
                        flow: output.flow,
                        dynamic: output.stats.dynamic,
                    },
                    now,
                );
                let activity = output.stats.activity.take().map(Arc::new);
                (Some(Arc::new(output.mask)), activity)
            }
            None => (None, None),
        };
        let shot = Shot {
            captured: result.captured,
            mask,
            activity,
        };
        self.recorder.offer(&shot, &self.look());
        self.latest = Some(shot);
        self.info = Some(info);
        self.picture_stale = true;
    }

    /// A frame could not be segmented. With usable seeds that is the engine's fault:
    /// a GPU engine falls back to the CPU.
    fn on_segment_error(&mut self, engine: EngineKind, error: &str) {
        if engine != EngineKind::Cpu && self.seeds_usable {
            self.notify(
                format!("The {engine} engine failed ({error}); switching to the CPU engine"),
                true,
            );
            self.settings.engine = EngineChoice::Cpu;
            self.backend.set_engine(EngineChoice::Cpu);
        } else {
            self.notify(format!("Segmentation failed: {error}"), true);
        }
    }

    fn on_done(&mut self, done: Done) {
        match done {
            Done::Picked(_, None) => {}
            Done::Picked(pick, Some(path)) => self.on_picked(pick, path),
            Done::SeedsLoaded(Ok(seeds)) => match (&mut self.scribbles, &self.source) {
                (Some(scribbles), Some(src))
                    if (seeds.width, seeds.height) == (src.width, src.height) =>
                {
                    scribbles.reset(seeds);
                }
                (_, Some(src)) => self.notify(
                    format!(
                        "The seeds are {}x{} but the frames are {}x{}",
                        seeds.width, seeds.height, src.width, src.height
                    ),
                    true,
                ),
                _ => self.notify("No source yet to load seeds for".into(), true),
            },
            Done::SeedsLoaded(Err(e)) => self.notify(format!("Cannot load seeds: {e}"), true),
            Done::SeedsSaved(Ok(path)) => {
                self.notify(format!("Seeds saved to {}", path.display()), false)
            }
            Done::SeedsSaved(Err(e)) => self.notify(format!("Cannot save seeds: {e}"), true),
            Done::BackdropLoaded(path, Ok(img)) => {
                self.backdrop = Some(img);
                self.settings.background_image = Some(path);
                self.picture_stale = true;
            }
            Done::BackdropLoaded(_, Err(e)) => {
                self.notify(format!("Cannot load the background picture: {e}"), true);
                if self.backdrop.is_none() {
                    self.settings.background = BackgroundKind::Blur;
                    self.picture_stale = true;
                }
            }
            Done::CudaProbed(Ok(name)) => self.cuda = DeviceStatus::Ready(name),
            Done::CudaProbed(Err(reason)) => self.cuda = DeviceStatus::Missing(reason),
            Done::Cameras(Ok(list)) => self.cameras = CameraList::Ready(list),
            Done::Cameras(Err(reason)) => self.cameras = CameraList::Failed(reason),
        }
    }

    fn on_picked(&mut self, pick: Pick, path: std::path::PathBuf) {
        match pick {
            Pick::SourceFile | Pick::SourceFolder => {
                match SourceSpec::parse(&path.to_string_lossy(), Default::default()) {
                    Ok(spec) => self.switch_source(spec),
                    Err(e) => self.notify(e.to_string(), true),
                }
            }
            Pick::LoadSeeds => self.tasks.load_seeds(path),
            Pick::SaveSeeds => {
                if let Some(s) = &self.scribbles {
                    self.tasks.save_seeds(path, s.rasterize());
                }
            }
            Pick::BackgroundImage => {
                self.settings.background = BackgroundKind::Image;
                self.tasks.load_backdrop(path);
            }
            Pick::RecordFolder => self.settings.record_folder = Some(path),
        }
    }

    /// Asks the worker for another source; the view keeps the old frame until then.
    pub(super) fn switch_source(&mut self, spec: SourceSpec) {
        self.source_state = SourceState::Opening;
        self.falling_back = false;
        self.backend.set_source(spec);
        if self.paused {
            self.set_paused(false);
        }
    }

    /// Switches the engine the user asked for.
    pub(super) fn switch_engine(&mut self, engine: EngineChoice) {
        self.settings.engine = engine;
        self.backend.set_engine(engine);
    }

    pub(super) fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
        self.backend.set_paused(paused);
    }

    /// Sends new parameters to the worker.
    pub(super) fn params_changed(&mut self) {
        self.backend.set_params(self.settings.segment_params());
    }

    /// Carries out a shortcut's (or a button's) action.
    pub(super) fn act(&mut self, action: Action) {
        match action {
            Action::PauseResume => self.set_paused(!self.paused),
            Action::Step => {
                self.paused = true;
                self.backend.step();
            }
            Action::ToolForeground => self.tool = Tool::Foreground,
            Action::ToolBackground => self.tool = Tool::Background,
            Action::ToolErase => self.tool = Tool::Erase,
            Action::Undo => self.scribbles.iter_mut().for_each(Scribbles::undo),
            Action::Clear => self.scribbles.iter_mut().for_each(Scribbles::clear),
            Action::BrushSmaller => self.resize_brush(1.0 / 1.25),
            Action::BrushBigger => self.resize_brush(1.25),
            Action::ToggleDynamic => {
                self.settings.dynamic = !self.settings.dynamic;
                self.params_changed();
            }
            Action::ToggleStochastic => {
                if self.engine_has_stochastic {
                    self.settings.stochastic = !self.settings.stochastic;
                    self.params_changed();
                }
            }
            Action::Record => self.toggle_recording(),
            Action::Snapshot => self.snapshot(),
            Action::View(i) => {
                if let Some(&mode) = ViewMode::ALL.get(i) {
                    self.set_view(mode);
                }
            }
        }
    }

    pub(super) fn set_view(&mut self, mode: ViewMode) {
        if self.settings.view != mode {
            self.settings.view = mode;
            self.picture_stale = true;
        }
    }

    fn resize_brush(&mut self, factor: f32) {
        let r =
            (self.settings.brush_radius * factor).clamp(*BRUSH_RANGE.start(), *BRUSH_RANGE.end());
        self.settings.brush_radius = r;
    }

    /// Starts recording into the chosen folder, or asks for one first.
    pub(super) fn toggle_recording(&mut self) {
        if self.recorder.progress().active {
            self.recorder.stop();
            return;
        }
        match self.settings.record_folder.clone() {
            Some(folder) => self.recorder.start(folder, self.settings.record_kind),
            None => self.tasks.pick(Pick::RecordFolder, None),
        }
    }

    /// Saves the current frame's composite, mask and cut-out in the record folder.
    pub(super) fn snapshot(&mut self) {
        let Some(folder) = self.settings.record_folder.clone() else {
            self.tasks.pick(Pick::RecordFolder, None);
            return;
        };
        let Some(shot) = self.latest.clone() else {
            return;
        };
        if self.recorder.snapshot(folder.clone(), &shot, &self.look()) {
            self.notify(format!("Snapshot saved in {}", folder.display()), false);
        } else {
            self.notify("The writer is busy; snapshot not taken".into(), true);
        }
    }

    /// How the view is drawn now.
    pub(super) fn look(&self) -> Look {
        let backdrop = match (self.settings.background, &self.backdrop) {
            (BackgroundKind::Blur, _) | (BackgroundKind::Image, None) => Backdrop::Blur,
            (BackgroundKind::Colour, _) => Backdrop::Colour(self.settings.background_colour),
            (BackgroundKind::Image, Some(img)) => Backdrop::Image(img.clone()),
        };
        Look {
            mode: self.settings.view,
            tint: self.settings.tint,
            backdrop,
        }
    }

    /// Sends changed scribbles to the worker; seeds without both labels cannot be
    /// cut, so the worker is told to pass frames through instead.
    fn sync_seeds(&mut self) {
        let Some(scribbles) = &mut self.scribbles else {
            return;
        };
        if !scribbles.take_changed() {
            return;
        }
        let seeds = scribbles.rasterize();
        self.seeds_usable = usable(&seeds);
        if self.seeds_usable {
            self.backend.set_seeds(seeds.clone());
        } else {
            self.backend.clear_seeds();
        }
        self.shown_seeds = Some(seeds);
        self.picture_stale = true;
    }

    /// Re-composes the picture (with the seeds painted over it, when shown) after a
    /// new frame, new seeds or a new look.
    fn refresh_textures(&mut self, ctx: &egui::Context) {
        if !self.picture_stale {
            return;
        }
        let Some(shot) = &self.latest else {
            return;
        };
        let start = Instant::now();
        let look = self.look();
        let mut img = compose::compose(
            &shot.captured.frame,
            shot.mask.as_deref(),
            shot.activity.as_deref(),
            &look,
        );
        if self.settings.show_scribbles
            && let Some(seeds) = &self.shown_seeds
        {
            compose::paint_seeds(&mut img, seeds);
        }
        self.picture_generation += 1;
        if self.direct_picture {
            self.picture = Some(Picture::Direct(Arc::new(PictureImage {
                generation: self.picture_generation,
                width: img.width(),
                height: img.height(),
                rgba: img.into_raw(),
            })));
        } else {
            let size = [img.width() as usize, img.height() as usize];
            let image = ColorImage::from_rgba_unmultiplied(size, img.as_raw());
            match &mut self.picture {
                Some(Picture::Texture(texture)) => texture.set(image, TextureOptions::LINEAR),
                _ => {
                    let texture =
                        ctx.load_texture("livecut-picture", image, TextureOptions::LINEAR);
                    self.picture = Some(Picture::Texture(texture));
                }
            }
        }
        self.timing
            .set_display_ms(start.elapsed().as_secs_f64() * 1e3);
        self.picture_stale = false;
    }
}

/// The picture as the view draws it.
pub(super) enum Picture {
    /// An egui texture, drawn by egui's shape shader.
    Texture(TextureHandle),
    /// Pixels for [`picture::paint_callback`].
    Direct(Arc<PictureImage>),
}

impl Picture {
    /// Size in pixels.
    pub(super) fn size_vec2(&self) -> egui::Vec2 {
        match self {
            Picture::Texture(texture) => texture.size_vec2(),
            Picture::Direct(image) => image.size_vec2(),
        }
    }
}

/// Whether seeds can be cut: they need both a foreground and a background seed.
fn usable(seeds: &Seeds) -> bool {
    seeds.count(SeedLabel::Foreground) > 0 && seeds.count(SeedLabel::Background) > 0
}

/// The demo scene in real time, as the app shows it.
pub fn demo_spec() -> SourceSpec {
    SourceSpec::Demo(DemoConfig {
        realtime: true,
        ..DemoConfig::default()
    })
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
        if self.quit_after.is_some() {
            eprintln!("{}", self.rate_report());
        }
    }
}
