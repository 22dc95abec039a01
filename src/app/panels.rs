//! The window's layout: top bar (pause, step, views, rates), notices, the controls
//! panel with each part's section, the timing panel and the view. The parts draw
//! their own sections and collect commands, carried out once the frame is drawn.

use super::command::Command;
use super::settings::ViewMode;
use super::shortcuts::{Action, hint, shortcut_button};
use super::window::LivecutApp;
use egui::{Color32, RichText, ScrollArea, Ui};
use std::time::Instant;

impl LivecutApp {
    /// Draws the whole window for one frame.
    pub fn show(&mut self, ui: &mut Ui) {
        let start = Instant::now();
        let ctx = ui.ctx().clone();
        self.update_state(&ctx);
        let mut commands = Vec::new();
        // The clear colour is the panel colour (see `clear_color`): panels paint no
        // background of their own, which halves the pixels a software renderer shades.
        let style = ctx.global_style();
        let bar = egui::Frame::side_top_panel(&style).fill(Color32::TRANSPARENT);
        let central = egui::Frame::central_panel(&style).fill(Color32::TRANSPARENT);
        egui::Panel::top("top-bar")
            .frame(bar)
            .show(ui, |ui| self.top_bar(ui, &mut commands));
        if !self.notices.list().is_empty() {
            egui::Panel::top("notices")
                .frame(bar)
                .show(ui, |ui| self.notices.ui(ui, &mut commands));
        }
        egui::Panel::left("controls")
            .frame(bar)
            .resizable(true)
            .default_size(290.0)
            .show(ui, |ui| {
                ScrollArea::vertical().show(ui, |ui| self.controls(ui, &mut commands));
            });
        egui::Panel::bottom("timing")
            .frame(bar)
            .resizable(true)
            .default_size(200.0)
            .show(ui, |ui| self.stats.ui(ui));
        egui::CentralPanel::default().frame(central).show(ui, |ui| {
            self.view.ui(ui, &self.seeds, &self.settings, &mut commands)
        });
        for command in commands {
            self.apply(command);
        }
        self.stats.timing.ui_busy_ms += start.elapsed().as_secs_f64() * 1e3;
    }

    fn top_bar(&mut self, ui: &mut Ui, commands: &mut Vec<Command>) {
        let ctx = ui.ctx().clone();
        ui.horizontal_wrapped(|ui| {
            let (label, tip) = if self.source.paused {
                ("Resume", "Take frames again")
            } else {
                ("Pause", "Stop taking frames")
            };
            if shortcut_button(ui, label, tip, Action::PauseResume) {
                commands.push(Command::TogglePause);
            }
            let tip = "Segment one more frame, then stay paused";
            if shortcut_button(ui, "Step", tip, Action::Step) {
                commands.push(Command::Step);
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
                    commands.push(Command::SetView(mode));
                }
            }
            ui.separator();
            self.stats.rates_ui(ui);
            ui.label(RichText::new(self.source.status()).weak());
        });
    }

    /// The controls panel: one collapsible section per part.
    fn controls(&mut self, ui: &mut Ui, commands: &mut Vec<Command>) {
        egui::CollapsingHeader::new("Source")
            .default_open(true)
            .show(ui, |ui| self.source.ui(ui, commands));
        egui::CollapsingHeader::new("Engine")
            .default_open(true)
            .show(ui, |ui| {
                self.engine.ui(ui, &self.settings, commands);
                if self.view.picture_from_device_frame() {
                    ui.label("Picture composed on: the window's GPU, from the frame there");
                } else if self.view.picture_on_gpu() {
                    ui.label("Picture composed on: the window's GPU");
                }
            });
        egui::CollapsingHeader::new("Segmentation")
            .default_open(true)
            .show(ui, |ui| {
                self.engine
                    .segmentation_ui(ui, &mut self.settings, commands)
            });
        egui::CollapsingHeader::new("Learned background")
            .default_open(true)
            .show(ui, |ui| self.background.ui(ui, commands));
        egui::CollapsingHeader::new("Scribbles")
            .default_open(true)
            .show(ui, |ui| self.seeds.ui(ui, &mut self.settings, commands));
        egui::CollapsingHeader::new("View")
            .default_open(true)
            .show(ui, |ui| self.view.look_ui(ui, &mut self.settings, commands));
        egui::CollapsingHeader::new("Recording")
            .default_open(true)
            .show(ui, |ui| self.recorder.ui(ui, &mut self.settings, commands));
        egui::CollapsingHeader::new("Virtual camera")
            .default_open(true)
            .show(ui, |ui| self.vcam.ui(ui, commands));
    }
}
