//! The engine part of the window: which engine cuts, whether it has stochastic cuts,
//! and whether a CUDA device is there, with the engine and segmentation controls.

use super::command::Command;
use super::lag::Behind;
use super::settings::{BUDGET_RANGE, Settings};
use super::shortcuts::{Action, hint};
use crate::maxflow::{EngineChoice, EngineKind};
use crate::pipeline::MAX_WORKING_SCALE;
use egui::{RichText, Slider, Ui};

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

/// What the worker reported of its engine, and what the probe found.
pub(super) struct EngineStatus {
    /// The engine cutting the frames (the worker starts on the CPU).
    pub(super) in_use: EngineKind,
    /// The engine in use has stochastic cuts.
    pub(super) has_stochastic: bool,
    /// What the energy runs on where not on the CPU ("CUDA", "wgpu on …").
    pub(super) energy: Option<String>,
    pub(super) cuda: DeviceStatus,
    /// The machine fell behind the live source at the working resolution in use.
    pub(super) behind: Option<Behind>,
}

impl Default for EngineStatus {
    fn default() -> Self {
        Self {
            in_use: EngineKind::Cpu,
            has_stochastic: false,
            energy: None,
            cuda: DeviceStatus::Probing,
            behind: None,
        }
    }
}

impl EngineStatus {
    /// The engine choice (CUDA only where a device was found) and the engine in use.
    pub(super) fn ui(&self, ui: &mut Ui, settings: &Settings, commands: &mut Vec<Command>) {
        let mut choice = settings.engine;
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
        if choice != settings.engine {
            commands.push(Command::SwitchEngine(choice));
        }
        ui.label(format!("In use: {}", self.in_use));
        let energy = self.energy.as_deref().unwrap_or("CPU");
        ui.label(format!("Energy on: {energy}"));
    }

    /// The segmentation parameters; a change sends them to the worker.
    pub(super) fn segmentation_ui(
        &self,
        ui: &mut Ui,
        s: &mut Settings,
        commands: &mut Vec<Command>,
    ) {
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
                self.has_stochastic,
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
            .checkbox(&mut s.cleanup_smooth, "Smooth outline")
            .on_hover_text("Close then open the mask with a 3×3 square: steadier outlines")
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
        changed |= self.working_scale_ui(ui, s);
        changed |= budget_ui(ui, s);
        if changed {
            commands.push(Command::ParamsChanged);
        }
    }

    /// The working resolution, and the offer of a lower one where the machine fell
    /// behind; returns whether it changed.
    fn working_scale_ui(&self, ui: &mut Ui, s: &mut Settings) -> bool {
        let mut changed = false;
        ui.horizontal(|ui| {
            ui.label("Cut at:");
            for k in 1..=MAX_WORKING_SCALE {
                let text = if k == 1 {
                    "full size".to_string()
                } else {
                    format!("1/{k}")
                };
                changed |= ui
                    .radio_value(&mut s.working_scale, k, text)
                    .on_hover_text(
                        "Cut a smaller copy of each frame and bring the mask back to full \
                         size along the picture's edges: for a machine that cannot keep up",
                    )
                    .changed();
            }
        });
        if let Some(behind) = self.behind.filter(|_| s.working_scale < MAX_WORKING_SCALE) {
            ui.label(
                RichText::new(format!(
                    "Frames take {:.0} ms; the source sends one every {:.0} ms",
                    behind.work_ms, behind.interval_ms
                ))
                .color(ui.visuals().warn_fg_color),
            );
            let lower = s.working_scale + 1;
            if ui.button(format!("Cut at 1/{lower} size")).clicked() {
                s.working_scale = lower;
                changed = true;
            }
        }
        changed
    }
}

/// The cut's frame budget: off by default; returns whether it changed.
fn budget_ui(ui: &mut Ui, s: &mut Settings) -> bool {
    ui.horizontal(|ui| {
        let on = ui
            .checkbox(&mut s.budget_on, "Frame budget")
            .on_hover_text(
                "Stop each frame's cut after this long and show the cut reached, with how \
                 far from the minimum it can be; the next frame carries on from there. \
                 Off: every cut is exact.",
            )
            .changed();
        let ms = ui
            .add_enabled(
                s.budget_on,
                Slider::new(&mut s.budget_ms, BUDGET_RANGE)
                    .logarithmic(true)
                    .suffix(" ms")
                    .text("per frame"),
            )
            .changed();
        on | ms
    })
    .inner
}
