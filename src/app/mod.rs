//! The desktop window (eframe/egui, wgpu renderer): the live view with its mask in
//! several looks, the active-block heatmap, scribbles, controls, the timing plot and
//! recording. It talks to the segmentation worker only through [`backend`], and knows
//! engines only by their choice and kind.
//!
//! The window keeps its remembered [`settings`] apart from its runtime handles and
//! is made of parts, each with its own state and controls: the source, the seeds,
//! the view, the engine, the timing, the notices and the [`recorder`]. What the user
//! asks for (buttons, [`shortcuts`], strokes) becomes a command, collected while the
//! frame is drawn and carried out in one place after it.
//!
//! The UI thread composes pictures and draws; capture, solving, decoding and file
//! writing happen on the pipeline's threads, the recorder's writer thread and
//! short-lived [`tasks`].

pub mod backend;
mod background;
mod command;
pub mod compose;
mod engine;
mod events;
pub mod heatmap;
mod lag;
mod notices;
mod panels;
pub mod picture;
pub mod recorder;
pub mod scribbles;
mod seeds;
pub mod settings;
pub mod shortcuts;
mod source;
mod stats;
pub mod tasks;
pub mod timing;
mod vcam;
mod view;
mod window;

pub use engine::DeviceStatus;
pub use notices::Notice;
pub use source::{CameraList, SourceState, demo_spec, demo_spec_with};
pub use view::VIEW_LABEL;
pub use window::{AppOptions, LivecutApp};

use thiserror::Error;

/// The window's icon, a PNG made for livecut.
const ICON_PNG: &[u8] = include_bytes!("../../assets/icon.png");

/// Why the window could not run.
#[derive(Debug, Error)]
pub enum AppError {
    /// The graphics context or the window could not be created.
    #[error("cannot open the window: {0}")]
    Window(String),
}

/// Opens the window and runs it until it is closed. Settings are restored from and
/// saved to eframe's storage.
pub fn run(options: AppOptions) -> Result<(), AppError> {
    let mut viewport = egui::ViewportBuilder::default()
        .with_title("livecut")
        .with_app_id("livecut")
        .with_inner_size([1280.0, 800.0])
        .with_min_inner_size([640.0, 420.0]);
    if let Some(icon) = icon() {
        viewport = viewport.with_icon(icon);
    }
    let native = eframe::NativeOptions {
        viewport,
        renderer: eframe::Renderer::Wgpu,
        ..Default::default()
    };
    eframe::run_native(
        "livecut",
        native,
        Box::new(move |cc| {
            let gpu = options.gpu;
            let mut app = LivecutApp::new(options, cc.storage)?;
            if let Some(render_state) = &cc.wgpu_render_state {
                app.draw_picture_with(render_state);
                app.compute_with(render_state, gpu);
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| AppError::Window(e.to_string()))
}

fn icon() -> Option<egui::IconData> {
    let img = image::load_from_memory(ICON_PNG).ok()?.into_rgba8();
    let (width, height) = img.dimensions();
    Some(egui::IconData {
        rgba: img.into_raw(),
        width,
        height,
    })
}
