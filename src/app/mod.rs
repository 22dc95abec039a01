//! The desktop window (eframe/egui): the live view with its mask, scribbles, heatmap,
//! controls, timing plot and recording. It talks to the segmentation worker only
//! through [`backend`], and knows engines only by their choice and names.

pub mod compose;
pub mod heatmap;
pub mod recorder;
pub mod scribbles;
pub mod settings;
pub mod tasks;
pub mod timing;
