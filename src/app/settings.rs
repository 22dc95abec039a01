//! What the user chose in the window, kept between runs through eframe's storage.
//! Settings that cannot be read, are out of range or come from another version are
//! not used: the window starts with the defaults and says why.

use super::seeds::BRUSH_RANGE;
use crate::energy::ColorModelKind;
use crate::grid::Connectivity;
use crate::maxflow::EngineChoice;
use crate::pipeline::{MAX_WORKING_SCALE, SegmentParams};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

/// Key under which the settings are stored.
pub const STORAGE_KEY: &str = "livecut-settings";

/// Version of the stored settings; bumped when a field changes meaning, so that
/// settings of another version are not taken for what they are not.
pub const SETTINGS_VERSION: u32 = 1;

/// Why stored settings were not used.
#[derive(Debug, Error, PartialEq)]
pub enum SettingsError {
    /// The text is not settings (damaged, or written by something else).
    #[error("they cannot be read ({0})")]
    Corrupt(String),
    /// Written by a livecut with another settings version (0: before versions).
    #[error("they are from {} version of livecut", if *.0 < SETTINGS_VERSION { "an older" } else { "a newer" })]
    Version(u32),
    /// A value no control can set.
    #[error("{0} is out of range")]
    OutOfRange(&'static str),
}

/// How the frame and its mask are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum ViewMode {
    /// The frame with the foreground tinted and the background dimmed.
    Overlay,
    /// The foreground on a checkerboard.
    CutOut,
    /// The foreground over a replaced background (blur, colour or image).
    Background,
    /// The mask alone, white on black.
    Mask,
    /// Where the solver worked: block activity as a colour map over the frame.
    Heatmap,
}

impl ViewMode {
    /// Every mode, in the order of the view picker.
    pub const ALL: [ViewMode; 5] = [
        ViewMode::Overlay,
        ViewMode::CutOut,
        ViewMode::Background,
        ViewMode::Mask,
        ViewMode::Heatmap,
    ];

    /// Label of the view picker.
    pub fn label(self) -> &'static str {
        match self {
            ViewMode::Overlay => "Overlay",
            ViewMode::CutOut => "Cut-out",
            ViewMode::Background => "Background",
            ViewMode::Mask => "Mask",
            ViewMode::Heatmap => "Heatmap",
        }
    }
}

/// What replaces the background in [`ViewMode::Background`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BackgroundKind {
    /// The frame itself, blurred.
    Blur,
    /// A flat colour.
    Colour,
    /// A picture the user picked.
    Image,
}

/// What a recording saves for each frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RecordKind {
    /// The mask as an 8-bit grey PNG (255 foreground).
    Masks,
    /// The frame with the mask as alpha (transparent background).
    CutOuts,
    /// What the view shows.
    Composites,
}

impl RecordKind {
    /// Every kind, in the order of the picker.
    pub const ALL: [RecordKind; 3] = [
        RecordKind::Masks,
        RecordKind::CutOuts,
        RecordKind::Composites,
    ];

    /// Label of the picker and prefix of the file names.
    pub fn label(self) -> &'static str {
        match self {
            RecordKind::Masks => "mask",
            RecordKind::CutOuts => "cutout",
            RecordKind::Composites => "composite",
        }
    }
}

/// Everything the window remembers between runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The [`SETTINGS_VERSION`] they were written with (0 when missing).
    #[serde(default)]
    pub version: u32,
    /// Selected view.
    pub view: ViewMode,
    /// Background replacement.
    pub background: BackgroundKind,
    /// Colour of [`BackgroundKind::Colour`].
    pub background_colour: [u8; 3],
    /// Picture of [`BackgroundKind::Image`].
    pub background_image: Option<PathBuf>,
    /// Tint of the foreground in the overlay view.
    pub tint: [u8; 3],
    /// Engine the user asked for.
    #[serde(with = "engine_choice")]
    pub engine: EngineChoice,
    /// Smoothness weight λ.
    pub lambda: f32,
    /// Whether σ is estimated from each frame.
    pub sigma_auto: bool,
    /// σ when not estimated.
    pub sigma: f32,
    /// 8-connected smoothness (else 4).
    pub eight_connected: bool,
    /// Continue from the previous frame's residual graph.
    pub dynamic: bool,
    /// Stochastic cuts in the CUDA engine (skip idle blocks).
    pub stochastic: bool,
    /// Gaussian mixtures as colour models (else colour histograms).
    pub gmm: bool,
    /// Drop foreground components that touch no seed or previous foreground.
    pub drop_unanchored: bool,
    /// Weight of the temporal prior (0 = off).
    pub temporal: f32,
    /// Cleanup: smallest foreground component and largest hole kept, in pixels.
    pub cleanup_min_area: u32,
    /// Cleanup: close then open the mask with a 3×3 square.
    pub cleanup_smooth: bool,
    /// Brush radius in frame pixels.
    pub brush_radius: f32,
    /// Draw the scribbles over the view.
    pub show_scribbles: bool,
    /// What recordings save.
    pub record_kind: RecordKind,
    /// Folder of recordings and snapshots.
    pub record_folder: Option<PathBuf>,
    /// Cut at 1/k of the frame's width and height (1 = full size), for a machine that
    /// cannot keep up.
    #[serde(default = "full_size")]
    pub working_scale: u32,
    /// Stop each frame's cut at `budget_ms` and show the cut reached (off: exact).
    #[serde(default)]
    pub budget_on: bool,
    /// The frame budget of the cut, in milliseconds.
    #[serde(default = "default_budget_ms")]
    pub budget_ms: f32,
}

/// The working scale of settings stored before it existed.
fn full_size() -> u32 {
    1
}

/// The budget slider's range, in milliseconds.
pub const BUDGET_RANGE: std::ops::RangeInclusive<f32> = 0.5..=100.0;

/// Where the budget slider starts: a third of a 30 frames/s interval.
fn default_budget_ms() -> f32 {
    10.0
}

impl Default for Settings {
    fn default() -> Self {
        let params = SegmentParams::default();
        Self {
            version: SETTINGS_VERSION,
            view: ViewMode::Overlay,
            background: BackgroundKind::Blur,
            background_colour: [40, 120, 200],
            background_image: None,
            tint: [40, 220, 90],
            engine: EngineChoice::Auto,
            lambda: params.lambda,
            sigma_auto: params.sigma.is_none(),
            sigma: params.sigma.unwrap_or(10.0),
            eight_connected: params.connectivity == Connectivity::Eight,
            dynamic: params.dynamic,
            stochastic: params.stochastic,
            gmm: matches!(params.color_model, ColorModelKind::Gmm { .. }),
            drop_unanchored: params.drop_unanchored,
            temporal: params.temporal,
            cleanup_min_area: params.cleanup_min_area,
            cleanup_smooth: params.cleanup_smooth,
            brush_radius: 6.0,
            show_scribbles: true,
            record_kind: RecordKind::Composites,
            record_folder: None,
            working_scale: params.working_scale,
            budget_on: params.budget.is_some(),
            budget_ms: default_budget_ms(),
        }
    }
}

impl Settings {
    /// The segmentation parameters these settings stand for.
    pub fn segment_params(&self) -> SegmentParams {
        SegmentParams {
            lambda: self.lambda,
            sigma: (!self.sigma_auto).then_some(self.sigma),
            connectivity: if self.eight_connected {
                Connectivity::Eight
            } else {
                Connectivity::Four
            },
            dynamic: self.dynamic,
            stochastic: self.stochastic,
            temporal: self.temporal,
            cleanup_min_area: self.cleanup_min_area,
            cleanup_smooth: self.cleanup_smooth,
            color_model: if self.gmm {
                ColorModelKind::Gmm { components: 5 }
            } else {
                ColorModelKind::Histogram { bits: 4 }
            },
            drop_unanchored: self.drop_unanchored,
            working_scale: self.working_scale,
            budget: self
                .budget_on
                .then(|| Duration::from_secs_f32(self.budget_ms / 1e3)),
            ..SegmentParams::default()
        }
    }

    /// Reads the settings from eframe's storage: the defaults where there are none,
    /// and the defaults with a message for the user where they cannot be used.
    pub fn load(storage: Option<&dyn eframe::Storage>) -> (Self, Option<String>) {
        let Some(text) = storage.and_then(|s| s.get_string(STORAGE_KEY)) else {
            return (Self::default(), None);
        };
        match Self::from_stored(&text) {
            Ok(settings) => (settings, None),
            Err(e) => (
                Self::default(),
                Some(format!(
                    "The saved settings were not used: {e}. Starting with the defaults."
                )),
            ),
        }
    }

    /// Parses stored settings (eframe stores RON) and checks their version and values.
    pub fn from_stored(text: &str) -> Result<Self, SettingsError> {
        let settings: Self =
            ron::from_str(text).map_err(|e| SettingsError::Corrupt(e.to_string()))?;
        if settings.version != SETTINGS_VERSION {
            return Err(SettingsError::Version(settings.version));
        }
        settings.check()?;
        Ok(settings)
    }

    /// Errors on values the controls cannot produce (which other parts need not
    /// expect): numbers that are not finite or outside their slider's range.
    fn check(&self) -> Result<(), SettingsError> {
        let checks = [
            ("λ", self.lambda.is_finite() && self.lambda >= 0.0),
            ("σ", self.sigma.is_finite() && self.sigma > 0.0),
            (
                "the temporal prior",
                self.temporal.is_finite() && self.temporal >= 0.0,
            ),
            ("the brush radius", BRUSH_RANGE.contains(&self.brush_radius)),
            (
                "the working resolution",
                (1..=MAX_WORKING_SCALE).contains(&self.working_scale),
            ),
            ("the frame budget", BUDGET_RANGE.contains(&self.budget_ms)),
        ];
        match checks.into_iter().find(|(_, ok)| !ok) {
            Some((name, _)) => Err(SettingsError::OutOfRange(name)),
            None => Ok(()),
        }
    }

    /// Writes the settings to eframe's storage.
    pub fn store(&self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, STORAGE_KEY, self);
    }
}

/// Stores an [`EngineChoice`] by its command-line name (`auto`, `cpu`, `cuda`).
mod engine_choice {
    use crate::maxflow::EngineChoice;
    use clap::ValueEnum;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(choice: &EngineChoice, s: S) -> Result<S::Ok, S::Error> {
        let value = choice
            .to_possible_value()
            .expect("no engine choice is hidden");
        s.serialize_str(value.get_name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<EngineChoice, D::Error> {
        let name = String::deserialize(d)?;
        EngineChoice::from_str(&name, true).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_follow_the_settings() {
        let mut s = Settings {
            lambda: 7.5,
            sigma_auto: false,
            sigma: 3.0,
            eight_connected: false,
            dynamic: false,
            temporal: 0.25,
            cleanup_min_area: 40,
            cleanup_smooth: true,
            gmm: true,
            drop_unanchored: true,
            working_scale: 3,
            ..Settings::default()
        };
        let p = s.segment_params();
        assert_eq!(p.working_scale, 3);
        assert_eq!(p.lambda, 7.5);
        assert_eq!(p.sigma, Some(3.0));
        assert_eq!(p.connectivity, Connectivity::Four);
        assert!(!p.dynamic);
        assert_eq!(p.temporal, 0.25);
        assert_eq!(p.cleanup_min_area, 40);
        assert!(p.cleanup_smooth);
        assert_eq!(p.color_model, ColorModelKind::Gmm { components: 5 });
        assert!(p.drop_unanchored);
        s.sigma_auto = true;
        assert_eq!(s.segment_params().sigma, None);
    }

    #[test]
    fn unusable_stored_settings_are_refused_with_a_reason() {
        let mut stored = ron::ser::to_string(&Settings::default()).unwrap();
        assert_eq!(Settings::from_stored(&stored), Ok(Settings::default()));
        assert!(matches!(
            Settings::from_stored("(view: Overlay, lam"),
            Err(SettingsError::Corrupt(_))
        ));
        assert_eq!(
            Settings::from_stored("(lambda: 12.0)"),
            Err(SettingsError::Version(0))
        );
        stored = stored.replace("lambda:", "lambda: -");
        let err = Settings::from_stored(&stored).unwrap_err();
        assert_eq!(err, SettingsError::OutOfRange("λ"));
        assert_eq!(err.to_string(), "λ is out of range");
        assert_eq!(
            SettingsError::Version(0).to_string(),
            "they are from an older version of livecut"
        );
    }

    #[test]
    fn serde_round_trip_and_missing_fields() {
        let s = Settings {
            view: ViewMode::Heatmap,
            engine: EngineChoice::Cpu,
            record_folder: Some("/tmp/rec".into()),
            ..Settings::default()
        };
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<Settings>(&text).unwrap(), s);
        // Missing fields take the defaults, except the version, which reads as 0 (a
        // store from before versions, which `from_stored` refuses).
        let old: Settings = serde_json::from_str(r#"{"lambda": 12.0}"#).unwrap();
        assert_eq!(old.lambda, 12.0);
        assert_eq!(old.view, Settings::default().view);
        assert_eq!(old.version, 0);
    }
}
