//! User seeds (scribbles or trimaps): per-pixel hard constraints.

use std::path::Path;
use thiserror::Error;

/// What a seed says about one pixel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SeedLabel {
    /// No constraint.
    Unknown,
    /// Must be foreground (source side).
    Foreground,
    /// Must be background (sink side).
    Background,
}

/// Why a seeds image cannot be used.
#[derive(Debug, Error)]
pub enum SeedsError {
    /// The file could not be read or decoded.
    #[error("cannot read seeds image: {0}")]
    Read(#[from] image::ImageError),
    /// Its size differs from the frame's.
    #[error("seeds are {got_w}x{got_h} but the frame is {want_w}x{want_h}")]
    WrongSize {
        /// Seeds width.
        got_w: u32,
        /// Seeds height.
        got_h: u32,
        /// Frame width.
        want_w: u32,
        /// Frame height.
        want_h: u32,
    },
}

/// A W×H map of seed labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeds {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major labels.
    pub labels: Vec<SeedLabel>,
}

impl Seeds {
    /// No seeds at all.
    pub fn unknown(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            labels: vec![SeedLabel::Unknown; width as usize * height as usize],
        }
    }

    /// Label of one grey value by the project convention: ≤ 64 background,
    /// ≥ 192 foreground, anything between unconstrained.
    pub fn label_of_grey(value: u8) -> SeedLabel {
        match value {
            0..=64 => SeedLabel::Background,
            192..=255 => SeedLabel::Foreground,
            _ => SeedLabel::Unknown,
        }
    }

    /// Reads a seeds PNG (RGB read as luma; fully transparent pixels unconstrained).
    /// GrabCut trimaps (0/64 background, 128 unknown, 255 foreground) read as they are.
    pub fn read_png(path: &Path) -> Result<Self, SeedsError> {
        let img = image::open(path)?.into_luma_alpha8();
        let (width, height) = img.dimensions();
        let labels = img
            .pixels()
            .map(|p| {
                if p[1] == 0 {
                    SeedLabel::Unknown
                } else {
                    Self::label_of_grey(p[0])
                }
            })
            .collect();
        Ok(Self {
            width,
            height,
            labels,
        })
    }

    /// The seeds as a grey image of the convention (0 / 128 / 255), for saving.
    pub fn to_grey(&self) -> Vec<u8> {
        self.labels
            .iter()
            .map(|l| match l {
                SeedLabel::Background => 0,
                SeedLabel::Unknown => 128,
                SeedLabel::Foreground => 255,
            })
            .collect()
    }

    /// Errors unless the seeds are `width`×`height`.
    pub fn check_size(&self, width: u32, height: u32) -> Result<(), SeedsError> {
        if (self.width, self.height) == (width, height) {
            Ok(())
        } else {
            Err(SeedsError::WrongSize {
                got_w: self.width,
                got_h: self.height,
                want_w: width,
                want_h: height,
            })
        }
    }

    /// Number of pixels with the given label.
    pub fn count(&self, label: SeedLabel) -> usize {
        self.labels.iter().filter(|&&l| l == label).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grey_convention() {
        assert_eq!(Seeds::label_of_grey(0), SeedLabel::Background);
        assert_eq!(Seeds::label_of_grey(64), SeedLabel::Background);
        assert_eq!(Seeds::label_of_grey(128), SeedLabel::Unknown);
        assert_eq!(Seeds::label_of_grey(192), SeedLabel::Foreground);
        assert_eq!(Seeds::label_of_grey(255), SeedLabel::Foreground);
    }
}
