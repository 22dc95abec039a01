//! The window's layout and its controls: top bar (pause, step, views, rates),
//! notices, the controls panel (source, engine, segmentation, scribbles, view,
//! recording) and the timing panel.

use super::scribbles::Tool;
use super::settings::{BackgroundKind, RecordKind, ViewMode};
use super::shortcuts::{Action, hint};
use super::state::{BRUSH_RANGE, CameraList, DeviceStatus, LivecutApp, SourceState, demo_spec};
use super::tasks::Pick;
use super::timing;
use crate::capture::{SourceSpec, StreamSettings};
use crate::maxflow::EngineChoice;
use egui::{Color32, RichText, ScrollArea, Slider, Ui};
use std::time::Instant;

impl LivecutApp {
    /// Draws the whole window for one frame.
    pub fn show(&mut self, ui: &mut Ui) {
        let start = Instant::now();
        let ctx = ui.ctx().clone();
        self.update_state(&ctx);
        // The clear colour is the panel colour (see `clear_color`): panels paint no
        // background of their own, which halves the pixels a software renderer shades.
        let style = ctx.global_style();
        let bar = egui::Frame::side_top_panel(&style).fill(Color32::TRANSPARENT);
        let central = egui::Frame::central_panel(&style).fill(Color32::TRANSPARENT);
        egui::Panel::top("top-bar")
            .frame(bar)
            .show(ui, |ui| self.top_bar(ui));
        if !self.notices.is_empty() {
            egui::Panel::top("notices")
                .frame(bar)
                .show(ui, |ui| self.notices_bar(ui));
        }
        egui::Panel::left("controls")
            .frame(bar)
            .resizable(true)
            .default_size(290.0)
            .show(ui, |ui| {
                ScrollArea::vertical().show(ui, |ui| self.controls(ui));
            });
        egui::Panel::bottom("timing")
            .frame(bar)
            .resizable(true)
            .default_size(200.0)
            .show(ui, |ui| self.timing_panel(ui));
        egui::CentralPanel::default()
            .frame(central)
            .show(ui, |ui| self.view_panel(ui));
        self.timing.ui_busy_ms += start.elapsed().as_secs_f64() * 1e3;
    }

    fn top_bar(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        ui.horizontal_wrapped(|ui| {
            let (label, tip) = if self.paused {
                ("Resume", "Take frames again")
            } else {
                ("Pause", "Stop taking frames")
            };
            if ui
                .button(label)
                .on_hover_text(hint(&ctx, tip, Action::PauseResume))
                .clicked()
            {
                self.act(Action::PauseResume);
            }
            if ui
                .button("Step")
                .on_hover_text(hint(
                    &ctx,
                    "Segment one more frame, then stay paused",
                    Action::Step,
                ))
                .clicked()
            {
                self.act(Action::Step);
            }
            ui.separator();
            for (i, mode) in ViewMode::ALL.into_iter().enumerate() {
                let selected = self.settings.view == mode;
                if ui
                    .selectable_label(selected, mode.label())
                    .on_hover_text(hint(
                        &ctx,
                        &format!("Show the {} view", mode.label().to_lowercase()),
                        Action::View(i),
                    ))
                    .clicked()
                {
                    self.set_view(mode);
                }
            }
            ui.separator();
            let now = Instant::now();
            let ui_fps = self.timing.ui.rate(now);
            let seg_fps = self.timing.processed.rate(now);
            ui.label(format!(
                "{seg_fps:.0} fps segmented · UI {ui_fps:.0} fps · {} dropped",
                self.timing.dropped
            ));
            let state = match &self.source_state {
                SourceState::Opening => "opening…".to_string(),
                SourceState::Running if self.paused => "paused".into(),
                SourceState::Running => "running".into(),
                SourceState::Ended => "end of stream".into(),
                SourceState::Failed(_) => "source failed".into(),
            };
            ui.label(RichText::new(state).weak());
        });
    }

    fn notices_bar(&mut self, ui: &mut Ui) {
        let mut dismiss = None;
        for (i, notice) in self.notices.iter().enumerate() {
            ui.horizontal(|ui| {
                let colour = if notice.error {
                    Color32::from_rgb(255, 140, 100)
                } else {
                    ui.visuals().text_color()
                };
                if ui.small_button("Dismiss").clicked() {
                    dismiss = Some(i);
                }
                ui.label(RichText::new(&notice.text).color(colour));
            });
        }
        if let Some(i) = dismiss {
            self.notices.remove(i);
        }
    }

    fn controls(&mut self, ui: &mut Ui) {
        egui::CollapsingHeader::new("Source")
            .default_open(true)
            .show(ui, |ui| self.source_controls(ui));
        egui::CollapsingHeader::new("Engine")
            .default_open(true)
            .show(ui, |ui| self.engine_controls(ui));
        egui::CollapsingHeader::new("Segmentation")
            .default_open(true)
            .show(ui, |ui| self.segmentation_controls(ui));
        egui::CollapsingHeader::new("Scribbles")
            .default_open(true)
            .show(ui, |ui| self.scribble_controls(ui));
        egui::CollapsingHeader::new("View")
            .default_open(true)
            .show(ui, |ui| self.view_controls(ui));
        egui::CollapsingHeader::new("Recording")
            .default_open(true)
            .show(ui, |ui| self.record_controls(ui));
    }

    fn source_controls(&mut self, ui: &mut Ui) {
        if let Some(desc) = self.source_description() {
            ui.label(RichText::new(desc).small());
        }
        if let SourceState::Failed(message) = &self.source_state {
            ui.colored_label(Color32::from_rgb(255, 140, 100), message);
        }
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Demo scene")
                .on_hover_text("The built-in synthetic scene")
                .clicked()
            {
                self.switch_source(demo_spec());
            }
            if ui
                .button("Open file…")
                .on_hover_text("An image or a video")
                .clicked()
            {
                self.tasks.pick(Pick::SourceFile, None);
            }
            if ui
                .button("Open folder…")
                .on_hover_text("A folder of images, in name order")
                .clicked()
            {
                self.tasks.pick(Pick::SourceFolder, None);
            }
        });
        let mut chosen = None;
        match &self.cameras {
            CameraList::Listing => {
                ui.label("Looking for cameras…");
            }
            CameraList::Failed(reason) => {
                ui.label(format!("Cameras unavailable: {reason}"));
            }
            CameraList::Ready(list) if list.is_empty() => {
                ui.label("No camera found");
            }
            CameraList::Ready(list) => {
                for camera in list {
                    ui.collapsing(format!("Camera {}: {}", camera.index, camera.name), |ui| {
                        if let Some(note) = &camera.note {
                            ui.label(RichText::new(note).weak());
                        }
                        for mode in &camera.modes {
                            let text = format!(
                                "{}×{} @ {} fps {}",
                                mode.width, mode.height, mode.fps, mode.format
                            );
                            if ui.button(text).clicked() {
                                chosen = Some(SourceSpec::Camera {
                                    index: Some(camera.index),
                                    settings: StreamSettings {
                                        width: mode.width,
                                        height: mode.height,
                                        fps: mode.fps,
                                    },
                                });
                            }
                        }
                    });
                }
            }
        }
        if let Some(spec) = chosen {
            self.switch_source(spec);
        }
    }

    fn engine_controls(&mut self, ui: &mut Ui) {
        let mut choice = self.settings.engine;
        ui.radio_value(&mut choice, EngineChoice::Auto, "Auto")
            .on_hover_text("CUDA when a device is there, else the CPU");
        ui.radio_value(&mut choice, EngineChoice::Cpu, "CPU")
            .on_hover_text("Boykov–Kolmogorov augmenting paths");
        match &self.cuda {
            DeviceStatus::Ready(name) => {
                ui.radio_value(&mut choice, EngineChoice::Cuda, format!("CUDA ({name})"))
                    .on_hover_text("Push-relabel on the GPU");
            }
            DeviceStatus::Probing => {
                ui.add_enabled(false, egui::RadioButton::new(false, "CUDA (checking…)"));
            }
            DeviceStatus::Missing(reason) => {
                ui.add_enabled(false, egui::RadioButton::new(false, "CUDA"))
                    .on_disabled_hover_text(reason.as_str());
                ui.label(RichText::new(reason).small().weak());
            }
        }
        if choice != self.settings.engine {
            self.switch_engine(choice);
        }
        ui.label(format!("In use: {}", self.engine_in_use()));
    }

    fn segmentation_controls(&mut self, ui: &mut Ui) {
        let s = &mut self.settings;
        let mut changed = false;
        changed |= ui
            .add(
                Slider::new(&mut s.lambda, 0.0..=500.0)
                    .logarithmic(true)
                    .text("λ smoothness"),
            )
            .on_hover_text("Weight of the smoothness term: higher gives smoother, blobbier masks")
            .changed();
        ui.horizontal(|ui| {
            changed |= ui
                .checkbox(&mut s.sigma_auto, "σ auto")
                .on_hover_text("Estimate the contrast σ from each frame")
                .changed();
            changed |= ui
                .add_enabled(
                    !s.sigma_auto,
                    Slider::new(&mut s.sigma, 1.0..=100.0)
                        .logarithmic(true)
                        .text("σ"),
                )
                .changed();
        });
        ui.horizontal(|ui| {
            changed |= ui
                .radio_value(&mut s.eight_connected, false, "4-connected")
                .changed();
            changed |= ui
                .radio_value(&mut s.eight_connected, true, "8-connected")
                .changed();
        });
        let ctx = ui.ctx().clone();
        changed |= ui
            .checkbox(&mut s.dynamic, "Dynamic cuts")
            .on_hover_text(hint(
                &ctx,
                "Continue each frame from the previous frame's residual graph",
                Action::ToggleDynamic,
            ))
            .changed();
        changed |= ui
            .add_enabled(
                self.engine_has_stochastic,
                egui::Checkbox::new(&mut s.stochastic, "Stochastic cuts"),
            )
            .on_hover_text(hint(
                &ctx,
                "Skip blocks with no active pixels and revisit them every few rounds",
                Action::ToggleStochastic,
            ))
            .on_disabled_hover_text("Only the CUDA engine has stochastic cuts")
            .changed();
        changed |= ui
            .add(Slider::new(&mut s.temporal, 0.0..=1.0).text("temporal prior"))
            .on_hover_text("Pull towards the previous frame's mask (0 = off)")
            .changed();
        changed |= ui
            .add(
                Slider::new(&mut s.cleanup_min_area, 0..=20_000)
                    .logarithmic(true)
                    .text("cleanup px"),
            )
            .on_hover_text("Drop foreground specks and fill holes smaller than this many pixels")
            .changed();
        changed |= ui
            .checkbox(&mut s.drop_unanchored, "Drop unanchored parts")
            .on_hover_text(
                "Remove foreground parts that touch no foreground seed or previous foreground",
            )
            .changed();
        ui.horizontal(|ui| {
            ui.label("Colours:");
            changed |= ui
                .radio_value(&mut s.gmm, false, "Histogram")
                .on_hover_text("Colour histograms of the seeds: fast")
                .changed();
            changed |= ui
                .radio_value(&mut s.gmm, true, "GMM")
                .on_hover_text("Gaussian mixtures of the seeds (GrabCut): smoother on few seeds")
                .changed();
        });
        if changed {
            self.params_changed();
        }
    }

    fn scribble_controls(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        ui.horizontal(|ui| {
            for (tool, name, action) in [
                (Tool::Foreground, "Paint foreground", Action::ToolForeground),
                (Tool::Background, "Paint background", Action::ToolBackground),
                (Tool::Erase, "Erase", Action::ToolErase),
            ] {
                let tip = hint(&ctx, "What the left button paints", action);
                ui.selectable_value(&mut self.tool, tool, name)
                    .on_hover_text(tip);
            }
        });
        ui.add(
            Slider::new(&mut self.settings.brush_radius, BRUSH_RANGE)
                .logarithmic(true)
                .text("brush px"),
        )
        .on_hover_text(format!(
            "{}; {}",
            hint(&ctx, "Smaller", Action::BrushSmaller),
            hint(&ctx, "bigger", Action::BrushBigger)
        ));
        ui.label(
            RichText::new("Right button always paints background.")
                .small()
                .weak(),
        );
        let can_undo = self.scribbles.as_ref().is_some_and(|s| s.can_undo());
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(can_undo, egui::Button::new("Undo"))
                .on_hover_text(hint(&ctx, "Remove the last stroke", Action::Undo))
                .clicked()
            {
                self.act(Action::Undo);
            }
            if ui
                .button("Clear")
                .on_hover_text(hint(&ctx, "Remove every seed", Action::Clear))
                .clicked()
            {
                self.act(Action::Clear);
            }
            if ui
                .button("Reset")
                .on_hover_text("Back to the source's default seeds")
                .clicked()
            {
                self.reset_seeds();
            }
        });
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Save seeds…")
                .on_hover_text("As a PNG: 0 background, 255 foreground, 128 free")
                .clicked()
            {
                self.tasks.pick(Pick::SaveSeeds, None);
            }
            if ui
                .button("Load seeds…")
                .on_hover_text("A seeds PNG or a trimap of the frame's size")
                .clicked()
            {
                self.tasks.pick(Pick::LoadSeeds, None);
            }
        });
        if ui
            .checkbox(&mut self.settings.show_scribbles, "Show seeds")
            .changed()
        {
            self.picture_stale = true;
        }
    }

    fn view_controls(&mut self, ui: &mut Ui) {
        let s = &mut self.settings;
        let before = (s.background, s.background_colour, s.tint);
        ui.horizontal(|ui| {
            ui.label("Tint");
            ui.color_edit_button_srgb(&mut s.tint);
        });
        ui.label("Background view:");
        ui.horizontal_wrapped(|ui| {
            ui.radio_value(&mut s.background, BackgroundKind::Blur, "Blur");
            ui.radio_value(&mut s.background, BackgroundKind::Colour, "Colour");
            ui.color_edit_button_srgb(&mut s.background_colour);
        });
        let mut pick_picture = false;
        ui.horizontal_wrapped(|ui| {
            let has_picture = self.backdrop.is_some();
            if ui
                .add_enabled(
                    has_picture,
                    egui::RadioButton::new(s.background == BackgroundKind::Image, "Picture"),
                )
                .clicked()
            {
                s.background = BackgroundKind::Image;
            }
            pick_picture = ui.button("Pick picture…").clicked();
        });
        if pick_picture {
            self.tasks.pick(Pick::BackgroundImage, None);
        }
        let s = &self.settings;
        if before != (s.background, s.background_colour, s.tint) {
            self.picture_stale = true;
        }
    }

    fn record_controls(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        let recording = self.recorder.progress().active;
        ui.add_enabled_ui(!recording, |ui| {
            ui.horizontal(|ui| {
                for kind in RecordKind::ALL {
                    let name = match kind {
                        RecordKind::Masks => "Masks",
                        RecordKind::CutOuts => "Cut-outs",
                        RecordKind::Composites => "Composites",
                    };
                    ui.radio_value(&mut self.settings.record_kind, kind, name);
                }
            });
        });
        ui.horizontal_wrapped(|ui| {
            let folder = self
                .settings
                .record_folder
                .as_ref()
                .map_or("no folder chosen".to_string(), |p| p.display().to_string());
            ui.label(RichText::new(folder).small());
            if ui
                .add_enabled(!recording, egui::Button::new("Folder…"))
                .clicked()
            {
                self.tasks
                    .pick(Pick::RecordFolder, self.settings.record_folder.clone());
            }
        });
        ui.horizontal(|ui| {
            let label = if recording {
                "Stop recording"
            } else {
                "Record"
            };
            if ui
                .button(label)
                .on_hover_text(hint(
                    &ctx,
                    "Save every frame as a PNG in the folder",
                    Action::Record,
                ))
                .clicked()
            {
                self.act(Action::Record);
            }
            if ui
                .button("Snapshot")
                .on_hover_text(hint(
                    &ctx,
                    "Save this frame's view, mask and cut-out",
                    Action::Snapshot,
                ))
                .clicked()
            {
                self.act(Action::Snapshot);
            }
        });
        let p = self.recorder.progress();
        if p.queued + p.written + p.skipped > 0 {
            let mut line = format!("{} of {} frames written", p.written, p.queued);
            if p.skipped > 0 {
                line += &format!(", {} skipped (disk too slow)", p.skipped);
            }
            ui.label(line);
            if p.queued > 0 {
                ui.add(
                    egui::ProgressBar::new(p.written as f32 / p.queued as f32).desired_height(6.0),
                );
            }
        }
    }

    fn timing_panel(&mut self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            match self.timing.last() {
                Some(last) => {
                    ui.label(format!(
                        "capture {:.1} · energy {:.1} · cut {:.1} · cleanup {:.1} · display {:.1} ms",
                        last.timing.decode_ms, last.timing.energy_ms, last.timing.cut_ms, last.timing.cleanup_ms, last.display_ms
                    ));
                    ui.separator();
                    ui.label(format!("{} iterations · flow {}", last.iterations, last.flow));
                }
                None => {
                    ui.label("No segmented frame yet");
                }
            }
            if let Some(info) = &self.info {
                ui.separator();
                ui.label(format!("foreground {:.1}%", info.foreground * 100.0));
                if let Some(iou) = info.iou {
                    ui.label(format!("IoU vs truth {:.3}", iou));
                }
                if let Some(error) = &info.error {
                    ui.colored_label(Color32::from_rgb(255, 140, 100), format!("not segmented: {error}"));
                }
            }
        });
        match self.timing.comparison() {
            Some(c) => {
                ui.label(format!(
                    "cut from scratch {:.2} ms · dynamic {:.2} ms · dynamic is {:.1}× {}",
                    c.static_ms,
                    c.dynamic_ms,
                    if c.speedup() >= 1.0 {
                        c.speedup()
                    } else {
                        1.0 / c.speedup()
                    },
                    if c.speedup() >= 1.0 {
                        "faster"
                    } else {
                        "slower"
                    }
                ));
            }
            None => {
                ui.label(
                    RichText::new(
                        "Toggle “Dynamic cuts” (D) to compare static and dynamic cut times.",
                    )
                    .weak(),
                );
            }
        }
        let height = ui.available_height().max(80.0);
        timing::plot(ui, &self.timing, height);
    }

    /// Back to the source's default seeds (or the generic defaults).
    fn reset_seeds(&mut self) {
        if let Some(src) = &self.source {
            let base = src
                .seeds
                .clone()
                .unwrap_or_else(|| super::scribbles::default_seeds(src.width, src.height));
            if let Some(s) = &mut self.scribbles {
                s.reset(base);
            }
        }
    }
}
