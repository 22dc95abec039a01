//! The seeds part of the window: the user's scribbles over the source's seeds, the
//! tool the left button paints with, and whether the seeds can be cut, with the
//! scribble controls.

use super::command::Command;
use super::scribbles::{Scribbles, Tool, default_seeds};
use super::settings::Settings;
use super::shortcuts::{Action, hint, shortcut_button};
use super::tasks::Pick;
use crate::energy::{SeedLabel, Seeds};
use crate::pipeline::{SourceId, SourceInfo};
use egui::{RichText, Slider, Ui};

/// Smallest and largest brush radius in frame pixels.
pub(super) const BRUSH_RANGE: std::ops::RangeInclusive<f32> = 1.0..=60.0;

/// The scribbles and what became of them.
pub(super) struct SeedEditor {
    /// `None` until a source is open.
    pub(super) scribbles: Option<Scribbles>,
    /// The source whose frames the scribbles are drawn on.
    pub(super) source: SourceId,
    /// What the left button paints.
    pub(super) tool: Tool,
    /// The seeds have a foreground and a background seed.
    pub(super) usable: bool,
    /// The seeds last sent to the worker, painted over the picture.
    pub(super) shown: Option<Seeds>,
}

impl Default for SeedEditor {
    fn default() -> Self {
        Self {
            scribbles: None,
            source: SourceId::FIRST,
            tool: Tool::Foreground,
            usable: false,
            shown: None,
        }
    }
}

impl SeedEditor {
    /// Starts over on a new source: from its own seeds (which the worker already cuts
    /// with, so nothing is to be sent) or from the generic defaults. Returns whether
    /// the shown seeds changed.
    pub(super) fn on_source(&mut self, info: &SourceInfo) -> bool {
        let (scribbles, shown) = match &info.seeds {
            Some(seeds) => {
                let mut s = Scribbles::new(seeds.clone());
                s.take_changed();
                self.usable = usable(seeds);
                self.shown = Some(seeds.clone());
                (s, true)
            }
            None => (
                Scribbles::new(default_seeds(info.width, info.height)),
                false,
            ),
        };
        self.scribbles = Some(scribbles);
        self.source = info.id;
        shown
    }

    /// The seeds after a change of the scribbles since the last call (shown from now
    /// on), or `None` when nothing changed.
    pub(super) fn take_changed(&mut self) -> Option<Seeds> {
        let scribbles = self.scribbles.as_mut()?;
        if !scribbles.take_changed() {
            return None;
        }
        let seeds = scribbles.rasterize();
        self.usable = usable(&seeds);
        self.shown = Some(seeds.clone());
        Some(seeds)
    }

    /// The pointer is down on the picture at `at` (frame pixels): starts a stroke, or
    /// extends the one being painted. The secondary button paints background.
    pub(super) fn paint(&mut self, at: [f32; 2], secondary: bool, radius: f32) {
        let tool = if secondary {
            Tool::Background
        } else {
            self.tool
        };
        if let Some(scribbles) = &mut self.scribbles {
            if scribbles.painting() {
                scribbles.extend(at);
            } else {
                scribbles.begin(tool, radius, at);
            }
        }
    }

    /// The pointer is up: ends the stroke being painted.
    pub(super) fn end_stroke(&mut self) {
        if let Some(scribbles) = &mut self.scribbles {
            scribbles.finish();
        }
    }

    /// Takes back the last stroke.
    pub(super) fn undo(&mut self) {
        self.scribbles.iter_mut().for_each(Scribbles::undo);
    }

    /// Removes every seed.
    pub(super) fn clear(&mut self) {
        self.scribbles.iter_mut().for_each(Scribbles::clear);
    }

    /// Replaces every seed by `base`.
    pub(super) fn reset(&mut self, base: Seeds) {
        if let Some(s) = &mut self.scribbles {
            s.reset(base);
        }
    }

    /// Tools, brush, undo/clear/reset, saving and loading, and showing the seeds.
    pub(super) fn ui(&mut self, ui: &mut Ui, settings: &mut Settings, commands: &mut Vec<Command>) {
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
            Slider::new(&mut settings.brush_radius, BRUSH_RANGE)
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
                commands.push(Command::Undo);
            }
            if shortcut_button(ui, "Clear", "Remove every seed", Action::Clear) {
                commands.push(Command::ClearSeeds);
            }
            if ui
                .button("Reset")
                .on_hover_text("Back to the source's default seeds")
                .clicked()
            {
                commands.push(Command::ResetSeeds);
            }
        });
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Save seeds…")
                .on_hover_text("As a PNG: 0 background, 255 foreground, 128 free")
                .clicked()
            {
                commands.push(Command::Pick(Pick::SaveSeeds, None));
            }
            if ui
                .button("Load seeds…")
                .on_hover_text("A seeds PNG or a trimap of the frame's size")
                .clicked()
            {
                commands.push(Command::Pick(Pick::LoadSeeds, None));
            }
        });
        if ui
            .checkbox(&mut settings.show_scribbles, "Show seeds")
            .changed()
        {
            commands.push(Command::Recompose);
        }
    }
}

/// Whether seeds can be cut: they need both a foreground and a background seed.
fn usable(seeds: &Seeds) -> bool {
    seeds.count(SeedLabel::Foreground) > 0 && seeds.count(SeedLabel::Background) > 0
}
