//! The view part of the window: the newest frame and its mask composed into the
//! picture in the chosen look, drawn scaled to fit with the heatmap legend, and the
//! pointer on it turned into strokes (left button: the selected tool; right button:
//! background). Also the look's controls (tint, background).

use super::command::Command;
use super::compose::{self, Backdrop, Look};
use super::heatmap;
use super::picture::{self, DevicePicture, PictureImage, Source};
use super::recorder::Shot;
use super::scribbles::Tool;
use super::seeds::SeedEditor;
use super::settings::{BackgroundKind, Settings, ViewMode};
use super::tasks::Pick;
use crate::composite::Composite;
use crate::composite::wgpu::WgpuCompositor;
use crate::compute::ComputeDevice;
use crate::energy::Seeds;
use egui::{
    Color32, ColorImage, Pos2, Rect, Sense, Stroke, TextureHandle, TextureOptions, Ui, UiBuilder,
    Vec2,
};
use image::RgbImage;
use std::sync::Arc;
use std::time::Instant;

/// Accessible name of the view, for tests and screen readers.
pub const VIEW_LABEL: &str = "Live view";

/// The picture as the view draws it.
enum Picture {
    /// An egui texture, drawn by egui's shape shader.
    Texture(TextureHandle),
    /// Pixels or a device texture for [`picture::paint_callback`].
    Direct(Source),
}

impl Picture {
    /// Size in pixels.
    fn size_vec2(&self) -> Vec2 {
        match self {
            Picture::Texture(texture) => texture.size_vec2(),
            Picture::Direct(Source::Host(image)) => image.size_vec2(),
            Picture::Direct(Source::Device(picture)) => picture.size_vec2(),
        }
    }
}

/// The newest frame, its picture and what the picture is composed of.
#[derive(Default)]
pub(super) struct View {
    /// The newest processed frame.
    pub(super) latest: Option<Shot>,
    /// The background picture of [`BackgroundKind::Image`], once loaded.
    pub(super) backdrop: Option<Arc<RgbImage>>,
    /// The picture must be composed again (new frame, seeds or look).
    pub(super) stale: bool,
    picture: Option<Picture>,
    /// Draw the picture with [`picture`]'s own wgpu pipeline (installed by the window).
    direct: bool,
    /// Counts composed pictures, so the wgpu pipeline uploads each once.
    generation: u64,
    /// Composes the cut-out and background views on the renderer's device, where it
    /// lent one: the picture is drawn from there.
    gpu: Option<WgpuCompositor>,
    /// The picture shown was composed there.
    on_gpu: bool,
    /// It was composed from the frame the energy left on the device (no second upload).
    frame_on_device: bool,
    /// Why the GPU stopped composing, once: the CPU composes from then on.
    pub(super) gpu_failure: Option<String>,
}

impl View {
    /// Draws the picture with livecut's own wgpu pipeline from now on.
    pub(super) fn draw_directly(&mut self) {
        self.direct = true;
        self.picture = None;
        self.stale = true;
    }

    /// Composes the cut-out and background views on `gpu`, the renderer's own device
    /// (a picture made there is drawn without a copy); says why not where the shaders
    /// do not compile there.
    pub(super) fn compose_on(&mut self, gpu: ComputeDevice) -> Result<(), String> {
        let compositor = WgpuCompositor::new(gpu).map_err(|e| e.to_string())?;
        self.gpu = Some(compositor);
        self.stale = true;
        Ok(())
    }

    /// Whether the picture shown was composed on the GPU (the cut-out and background
    /// views with no seeds painted over them, where the window lent its device).
    pub(super) fn picture_on_gpu(&self) -> bool {
        self.on_gpu
    }

    /// Whether that picture was composed from the frame the energy left on the device.
    pub(super) fn picture_from_device_frame(&self) -> bool {
        self.on_gpu && self.frame_on_device
    }

    /// How the view is drawn with `settings`.
    pub(super) fn look(&self, settings: &Settings) -> Look {
        let backdrop = match (settings.background, &self.backdrop) {
            (BackgroundKind::Blur, _) | (BackgroundKind::Image, None) => Backdrop::Blur,
            (BackgroundKind::Colour, _) => Backdrop::Colour(settings.background_colour),
            (BackgroundKind::Image, Some(img)) => Backdrop::Image(img.clone()),
        };
        Look {
            mode: settings.view,
            tint: settings.tint,
            backdrop,
        }
    }

    /// Composes the picture again (with `seeds` painted over it, when shown) if it is
    /// stale; returns the milliseconds that took.
    pub(super) fn refresh(
        &mut self,
        ctx: &egui::Context,
        settings: &Settings,
        seeds: Option<&Seeds>,
    ) -> Option<f64> {
        if !self.stale {
            return None;
        }
        self.latest.as_ref()?;
        let start = Instant::now();
        let painted = settings.show_scribbles && seeds.is_some();
        if !painted && let Some(picture) = self.compose_on_gpu(settings) {
            self.generation += 1;
            self.picture = Some(Picture::Direct(Source::Device(Arc::new(DevicePicture {
                generation: self.generation,
                texture: picture,
            }))));
            self.stale = false;
            self.on_gpu = true;
            return Some(start.elapsed().as_secs_f64() * 1e3);
        }
        self.on_gpu = false;
        let shot = self.latest.as_ref()?;
        let mut img = compose::compose(
            &shot.captured.frame,
            shot.mask.as_deref(),
            shot.activity.as_deref(),
            &self.look(settings),
        );
        if settings.show_scribbles
            && let Some(seeds) = seeds
        {
            compose::paint_seeds(&mut img, seeds);
        }
        self.generation += 1;
        if self.direct {
            self.picture = Some(Picture::Direct(Source::Host(Arc::new(PictureImage {
                generation: self.generation,
                width: img.width(),
                height: img.height(),
                rgba: img.into_raw(),
            }))));
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
        self.stale = false;
        Some(start.elapsed().as_secs_f64() * 1e3)
    }

    /// The picture of the cut-out or background view composed on the GPU, drawn with
    /// the wgpu pipeline; `None` where it is not to be (no GPU, another view, no mask)
    /// or the GPU failed (the CPU composes from then on, told once).
    fn compose_on_gpu(&mut self, settings: &Settings) -> Option<eframe::wgpu::Texture> {
        let composite = match settings.view {
            ViewMode::CutOut => Composite::CutOut,
            ViewMode::Background => Composite::Background(self.look(settings).backdrop),
            _ => return None,
        };
        let shot = self.latest.as_ref()?;
        let mask = shot.mask.as_deref()?;
        let frame = &shot.captured.frame;
        if !self.direct || (mask.width, mask.height) != (frame.width, frame.height) {
            return None;
        }
        let gpu = self.gpu.as_mut()?;
        let composed = gpu
            .compose(&composite, frame, shot.on_device.as_deref(), mask)
            .cloned();
        match composed {
            Ok(texture) => {
                self.frame_on_device = gpu.frame_was_on_device();
                Some(texture)
            }
            Err(e) => {
                self.gpu = None;
                self.gpu_failure = Some(format!(
                    "The GPU failed composing the picture ({e}); composing on the CPU"
                ));
                None
            }
        }
    }

    /// Draws the view in the remaining space; presses and drags on the picture become
    /// stroke commands.
    pub(super) fn ui(
        &self,
        ui: &mut Ui,
        seeds: &SeedEditor,
        settings: &Settings,
        commands: &mut Vec<Command>,
    ) {
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
            Picture::Direct(source) => {
                painter.add(picture::paint_callback(rect, source.clone()));
            }
        }
        let radius = settings.brush_radius;
        strokes(ui, &response, rect, seeds, radius, commands);
        if let Some(pos) = response.hover_pos().filter(|p| rect.contains(*p)) {
            let colour = match seeds.tool {
                Tool::Foreground => Color32::from_rgb(40, 230, 80),
                Tool::Background => Color32::from_rgb(240, 60, 60),
                Tool::Erase => Color32::WHITE,
            };
            painter.circle_stroke(pos, radius * scale, Stroke::new(1.5, colour));
        }
        if !seeds.usable && seeds.scribbles.is_some() {
            painter.text(
                rect.center_top() + Vec2::new(0.0, 12.0),
                egui::Align2::CENTER_TOP,
                "Paint a foreground stroke (left button) and a background stroke (right button)",
                egui::FontId::proportional(15.0),
                Color32::from_rgb(255, 220, 120),
            );
        }
        if settings.view == ViewMode::Heatmap {
            self.legend(ui, rect);
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

    /// The look's controls: tint, and what replaces the background.
    pub(super) fn look_ui(&self, ui: &mut Ui, s: &mut Settings, commands: &mut Vec<Command>) {
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
            if ui.button("Pick picture…").clicked() {
                commands.push(Command::Pick(Pick::BackgroundImage, None));
            }
        });
        if before != (s.background, s.background_colour, s.tint) {
            commands.push(Command::Recompose);
        }
    }
}

/// Turns the pointer on the picture into stroke commands in frame pixels.
fn strokes(
    ui: &Ui,
    response: &egui::Response,
    rect: Rect,
    seeds: &SeedEditor,
    radius: f32,
    commands: &mut Vec<Command>,
) {
    let Some(scribbles) = &seeds.scribbles else {
        return;
    };
    // Pointer position in frame pixels of the scribbles' size (the picture may lag
    // behind a source change by a frame).
    let (w, h) = scribbles.size();
    let to_frame = |p: Pos2| {
        let rel = (p - rect.min) / rect.size();
        [rel.x * w as f32, rel.y * h as f32]
    };
    if response.is_pointer_button_down_on() {
        let (pos, secondary) = ui.input(|i| (i.pointer.interact_pos(), i.pointer.secondary_down()));
        if let Some(at) = pos.map(to_frame) {
            commands.push(Command::Paint {
                at,
                secondary,
                radius,
            });
        }
    } else if scribbles.painting() {
        commands.push(Command::EndStroke);
    }
}
