//! User seeds (scribbles or trimaps): per-pixel hard constraints.

use crate::grid::Mask;
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

    /// The seeds an image draws (RGB read as luma; fully transparent pixels
    /// unconstrained). GrabCut trimaps (0/64 background, 128 unknown, 255 foreground)
    /// read as they are. Files are read by `capture::files::read_seeds`, where every
    /// image from outside is decoded within limits.
    pub fn from_image(img: image::DynamicImage) -> Self {
        let img = img.into_luma_alpha8();
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
        Self {
            width,
            height,
            labels,
        }
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

    /// The seeds scaled to `width`×`height` (nearest label), for frames scaled alike.
    pub fn resized(&self, width: u32, height: u32) -> Self {
        let pick =
            |i: u32, to: u32, from: u32| (u64::from(i) * u64::from(from) / u64::from(to)) as usize;
        let labels = (0..height)
            .flat_map(|y| {
                let row = pick(y, height, self.height) * self.width as usize;
                (0..width).map(move |x| self.labels[row + pick(x, width, self.width)])
            })
            .collect();
        Self {
            width,
            height,
            labels,
        }
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

    /// Seeds from a known mask (e.g. a video's first ground-truth frame): foreground
    /// where the mask eroded by `margin` pixels (Euclidean disk) is foreground,
    /// background where the mask dilated by `margin` pixels is background, unknown in
    /// the band between.
    pub fn from_mask(mask: &Mask, margin: u32) -> Self {
        let limit = margin as u64 * margin as u64;
        let to_bg = squared_distance(mask, false);
        let to_fg = squared_distance(mask, true);
        let labels = (0..mask.data.len())
            .map(|i| {
                if mask.is_source(i) && to_bg[i] > limit {
                    SeedLabel::Foreground
                } else if !mask.is_source(i) && to_fg[i] > limit {
                    SeedLabel::Background
                } else {
                    SeedLabel::Unknown
                }
            })
            .collect();
        Self {
            width: mask.width,
            height: mask.height,
            labels,
        }
    }

    /// Number of pixels with the given label.
    pub fn count(&self, label: SeedLabel) -> usize {
        self.labels.iter().filter(|&&l| l == label).count()
    }
}

/// Exact squared Euclidean distance from every pixel to the nearest pixel whose
/// source-side flag equals `target` (`u64::MAX / 4` when there is none), by the
/// separable lower-envelope transform of Felzenszwalb and Huttenlocher.
fn squared_distance(mask: &Mask, target: bool) -> Vec<u64> {
    let (w, h) = (mask.width as usize, mask.height as usize);
    let far = u64::MAX / 4;
    let mut d: Vec<u64> = (0..w * h)
        .map(|i| if mask.is_source(i) == target { 0 } else { far })
        .collect();
    let mut line = Vec::new();
    let mut out = Vec::new();
    for x in 0..w {
        line.clear();
        line.extend((0..h).map(|y| d[y * w + x]));
        envelope(&line, &mut out);
        for y in 0..h {
            d[y * w + x] = out[y];
        }
    }
    for y in 0..h {
        line.clear();
        line.extend_from_slice(&d[y * w..(y + 1) * w]);
        envelope(&line, &mut out);
        d[y * w..(y + 1) * w].copy_from_slice(&out);
    }
    d
}

/// One-dimensional squared distance transform of sampled function `f`.
fn envelope(f: &[u64], out: &mut Vec<u64>) {
    let n = f.len();
    out.clear();
    out.resize(n, 0);
    let far = u64::MAX / 4;
    let sites: Vec<usize> = (0..n).filter(|&q| f[q] < far).collect();
    if sites.is_empty() {
        out.fill(far);
        return;
    }
    // Intersection abscissa of the parabolas rooted at q and p (q > p), as f64.
    let cross = |q: usize, p: usize| {
        let (fq, fp) = (f[q] as f64, f[p] as f64);
        ((fq + (q * q) as f64) - (fp + (p * p) as f64)) / (2.0 * (q as f64 - p as f64))
    };
    let mut v: Vec<usize> = Vec::with_capacity(sites.len());
    let mut z: Vec<f64> = Vec::with_capacity(sites.len() + 1);
    for &q in &sites {
        while let Some(&p) = v.last() {
            if cross(q, p) <= z[z.len() - 1] {
                v.pop();
                z.pop();
            } else {
                break;
            }
        }
        let boundary = v.last().map_or(f64::NEG_INFINITY, |&p| cross(q, p));
        v.push(q);
        z.push(boundary);
    }
    let mut k = 0;
    for (x, o) in out.iter_mut().enumerate() {
        while k + 1 < v.len() && z[k + 1] < x as f64 {
            k += 1;
        }
        let dx = x.abs_diff(v[k]) as u64;
        *o = dx * dx + f[v[k]];
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

    #[test]
    fn squared_distance_matches_brute_force() {
        let mask = Mask::from_fn(13, 9, |i| (i * 7919) % 11 == 0);
        let d = squared_distance(&mask, true);
        for (p, &dist) in d.iter().enumerate() {
            let (px, py) = ((p % 13) as i64, (p / 13) as i64);
            let brute = (0..mask.data.len())
                .filter(|&q| mask.is_source(q))
                .map(|q| {
                    let (qx, qy) = ((q % 13) as i64, (q / 13) as i64);
                    ((px - qx).pow(2) + (py - qy).pow(2)) as u64
                })
                .min()
                .unwrap();
            assert_eq!(dist, brute, "pixel {p}");
        }
    }

    #[test]
    fn seeds_from_mask_leave_a_band() {
        // A 21-wide square of foreground in a 41x41 frame, margin 3.
        let mask = Mask::from_fn(41, 41, |i| {
            (10..31).contains(&(i % 41)) && (10..31).contains(&(i / 41))
        });
        let seeds = Seeds::from_mask(&mask, 3);
        let at = |x: usize, y: usize| seeds.labels[y * 41 + x];
        assert_eq!(at(20, 20), SeedLabel::Foreground);
        assert_eq!(at(12, 20), SeedLabel::Unknown, "3rd pixel inside the edge");
        assert_eq!(
            at(13, 20),
            SeedLabel::Foreground,
            "4th pixel inside the edge"
        );
        assert_eq!(at(7, 20), SeedLabel::Unknown, "3 px outside");
        assert_eq!(at(6, 20), SeedLabel::Background, "4 px outside");
        assert_eq!(at(0, 0), SeedLabel::Background);
    }
}
