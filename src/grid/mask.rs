//! A minimum-cut result as a per-pixel mask, and the capacity of the cut it defines.

use super::GridProblem;
use std::io;
use std::path::Path;

/// A W×H binary mask, one byte per pixel: 255 on the source side (foreground), 0 on
/// the sink side — the PNG convention of the project's data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mask {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major bytes, 255 or 0.
    pub data: Vec<u8>,
}

impl Mask {
    /// An all-background mask.
    pub fn empty(width: u32, height: u32) -> Self {
        Self {
            width,
            height,
            data: vec![0; width as usize * height as usize],
        }
    }

    /// Builds a mask from a per-pixel source-side predicate.
    pub fn from_fn(width: u32, height: u32, mut source_side: impl FnMut(usize) -> bool) -> Self {
        let data = (0..width as usize * height as usize)
            .map(|i| if source_side(i) { 255 } else { 0 })
            .collect();
        Self {
            width,
            height,
            data,
        }
    }

    /// Whether pixel `i` (row-major) is on the source side.
    pub fn is_source(&self, i: usize) -> bool {
        self.data[i] != 0
    }

    /// Writes the mask as an 8-bit greyscale PNG. The file appears whole or not at all:
    /// it is written beside the target and renamed into place.
    pub fn write_png(&self, path: &Path) -> io::Result<()> {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let result = self
            .write_png_to(&tmp)
            .and_then(|()| std::fs::rename(&tmp, path));
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    fn write_png_to(&self, path: &Path) -> io::Result<()> {
        let file = io::BufWriter::new(std::fs::File::create(path)?);
        let mut encoder = png::Encoder::new(file, self.width, self.height);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(io::Error::other)?;
        writer
            .write_image_data(&self.data)
            .map_err(io::Error::other)?;
        writer.finish().map_err(io::Error::other)
    }

    /// Reads a mask PNG (any format the `image` crate reads, as grey): pixels ≥ 128
    /// are source side.
    pub fn read_png(path: &Path) -> Result<Self, image::ImageError> {
        let grey = image::open(path)?.into_luma8();
        let (width, height) = grey.dimensions();
        let data = grey
            .into_raw()
            .into_iter()
            .map(|v| if v >= 128 { 255 } else { 0 })
            .collect();
        Ok(Self {
            width,
            height,
            data,
        })
    }

    /// Number of source-side pixels.
    pub fn count_source(&self) -> usize {
        self.data.iter().filter(|&&v| v != 0).count()
    }
}

/// Capacity of the s–t cut whose source side is `mask`: every terminal and neighbour
/// arc from the source side to the sink side, in 64 bits. For a minimum cut it equals
/// the max-flow value, which makes it a cheap certificate of any engine's answer.
pub fn cut_capacity(problem: &GridProblem, mask: &Mask) -> u64 {
    assert_eq!(
        (mask.width, mask.height),
        (problem.width(), problem.height()),
        "mask size must match the grid"
    );
    let w = problem.width();
    let h = problem.height();
    let mut total = 0u64;
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            if mask.is_source(i) {
                total += problem.sink()[i] as u64;
                for &dir in problem.connectivity().directions() {
                    if let Some(j) = problem.neighbour(x, y, dir)
                        && !mask.is_source(j)
                    {
                        total += problem.edges(dir)[i] as u64;
                    }
                }
            } else {
                total += problem.source()[i] as u64;
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Connectivity, Direction};

    #[test]
    fn worked_example_of_format_md() {
        // 2x1 grid: s->1 = 5, 1->2 = 3, 2->t = 4, 1->t = 1; mask [255, 0] cuts 3 + 1.
        let mut edges = vec![vec![0; 2]; 4];
        edges[Direction::East.index()][0] = 3;
        let p = GridProblem::from_arrays(2, 1, Connectivity::Four, vec![5, 0], vec![1, 4], edges)
            .unwrap();
        let mask = Mask {
            width: 2,
            height: 1,
            data: vec![255, 0],
        };
        assert_eq!(cut_capacity(&p, &mask), 4);
        assert_eq!(cut_capacity(&p, &Mask::empty(2, 1)), 5);
    }

    #[test]
    fn png_round_trip() {
        let dir = std::env::temp_dir().join(format!("livecut-mask-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.png");
        let mask = Mask::from_fn(7, 3, |i| i % 3 == 0);
        mask.write_png(&path).unwrap();
        assert_eq!(Mask::read_png(&path).unwrap(), mask);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
