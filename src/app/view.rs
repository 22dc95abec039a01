//! The central view: the composed picture scaled to fit, the seeds over it, the
//! heatmap legend, and painting strokes with the mouse (left button: the selected
//! tool; right button: background).

use super::heatmap;
use super::picture;
use super::scribbles::Tool;
use super::settings::ViewMode;
use super::state::{LivecutApp, Picture};
use egui::{Color32, Pos2, Rect, Sense, Stroke, Ui, UiBuilder, Vec2};

/// Accessible name of the view, for tests and screen readers.
pub const VIEW_LABEL: &str = "Live view";

impl LivecutApp {
    /// Draws the view in the remaining space and handles painting on it.
    pub(super) fn view_panel(&mut self, ui: &mut Ui) {
        let (area, response) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, VIEW_LABEL));
        let Some(picture) = &self.picture else {
            ui.painter().text(
                area.center(),
                egui::Align2::CENTER_CENTER,
                "Waiting for the first frame…",
                egui::FontId::proportional(18.0),
                ui.visuals().text_color(),
            );
            return;
        };
        let size = picture.size_vec2();
        let scale = (area.width() / size.x)
            .min(area.height() / size.y)
            .max(1e-3);
        let rect = Rect::from_center_size(area.center(), size * scale);
        let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
        let painter = ui.painter_at(area);
        match picture {
            Picture::Texture(texture) => {
                painter.image(texture.id(), rect, uv, Color32::WHITE);
            }
            Picture::Direct(image) => {
                painter.add(picture::paint_callback(rect, image.clone()));
            }
        }
        self.paint_strokes(ui, &response, rect);
        if let Some(pos) = response.hover_pos().filter(|p| rect.contains(*p)) {
            let colour = match self.tool {
                Tool::Foreground => Color32::from_rgb(40, 230, 80),
                Tool::Background => Color32::from_rgb(240, 60, 60),
                Tool::Erase => Color32::WHITE,
            };
            painter.circle_stroke(
                pos,
                self.settings.brush_radius * scale,
                Stroke::new(1.5, colour),
            );
        }
        if !self.seeds_usable && self.scribbles.is_some() {
            painter.text(
                rect.center_top() + Vec2::new(0.0, 12.0),
                egui::Align2::CENTER_TOP,
                "Paint a foreground stroke (left button) and a background stroke (right button)",
                egui::FontId::proportional(15.0),
                Color32::from_rgb(255, 220, 120),
            );
        }
        if self.settings.view == ViewMode::Heatmap {
            self.legend(ui, rect);
        }
    }

    /// Turns presses and drags on the picture into strokes in frame pixels.
    fn paint_strokes(&mut self, ui: &Ui, response: &egui::Response, rect: Rect) {
        let Some(scribbles) = &mut self.scribbles else {
            return;
        };
        // Pointer position in frame pixels of the scribbles' size (the picture may lag
        // behind a source change by a frame).
        let (w, h) = scribbles.size();
        let to_frame = |p: Pos2| {
            let rel = (p - rect.min) / rect.size();
            [rel.x * w as f32, rel.y * h as f32]
        };
        let radius = self.settings.brush_radius;
        if response.is_pointer_button_down_on() {
            let (pos, secondary) =
                ui.input(|i| (i.pointer.interact_pos(), i.pointer.secondary_down()));
            let tool = if secondary {
                Tool::Background
            } else {
                self.tool
            };
            if let Some(p) = pos.map(to_frame) {
                if scribbles.painting() {
                    scribbles.extend(p);
                } else {
                    scribbles.begin(tool, radius, p);
                }
            }
        } else if scribbles.painting() {
            scribbles.finish();
        }
    }

    /// The heatmap's legend in the picture's lower left corner.
    fn legend(&self, ui: &mut Ui, rect: Rect) {
        let activity = self.latest.as_ref().and_then(|s| s.activity.as_deref());
        let box_rect = Rect::from_min_size(
            rect.left_bottom() + Vec2::new(8.0, -62.0),
            Vec2::new(330.0, 54.0),
        );
        ui.scope_builder(UiBuilder::new().max_rect(box_rect), |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| heatmap::legend(ui, activity));
        });
    }
}
