//! A video's frames → one x-y-t problem ([`VolumeProblem`]): each frame's own energy
//! as a slice, and between consecutive frames a link from each pixel to the same pixel
//! in the next frame, weighted by their colour likeness with the smoothness term's own
//! contrast function, so that a cut agrees over time where the colours do.
//!
//! 8-connected frames give the 10-connected video volume (4-connected: 6).

use super::seeds::{SeedLabel, Seeds};
use crate::grid::{Connectivity, GridProblem, Mask};
use crate::grid::{VolumeConnectivity, VolumeError, VolumeProblem};

/// One frame of a volume.
pub struct Slice<'a> {
    /// The frame's energy (every slice the same size and connectivity).
    pub problem: &'a GridProblem,
    /// The colours its contrast term read (`width·height·3` bytes).
    pub rgb: &'a [u8],
    /// Its hard seeds, whose pixels keep their labels whatever the links say.
    pub hard: Option<&'a Seeds>,
}

/// The volume's neighbourhood for frames of `connectivity`: the frame's neighbours
/// and one link each way along time.
pub fn volume_connectivity(connectivity: Connectivity) -> VolumeConnectivity {
    match connectivity {
        Connectivity::Four => VolumeConnectivity::Six,
        Connectivity::Eight => VolumeConnectivity::Ten,
    }
}

/// Why slices cannot be stacked.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StackError {
    /// No slice was given.
    #[error("a volume needs one frame at least")]
    Empty,
    /// A slice, its colours or its seeds differ from the first slice.
    #[error("frame {index} of the volume does not match the first ({what})")]
    Mismatch {
        /// Position in the volume.
        index: usize,
        /// What differs.
        what: &'static str,
    },
    /// The volume is too large.
    #[error(transparent)]
    Volume(#[from] VolumeError),
}

/// Stacks `slices` (in time order) into one volume. `time_weights` gives a time
/// link's capacity by the squared colour difference of its two pixels (0 past its
/// end): the frames' straight-arc table ([`super::Smoothness::tables`]), so that time
/// is one more direction of the same smoothness term.
pub fn stack(slices: &[Slice<'_>], time_weights: &[i32]) -> Result<VolumeProblem, StackError> {
    let first = slices.first().ok_or(StackError::Empty)?.problem;
    let (width, height) = (first.width(), first.height());
    let n = first.pixels();
    check_slices(slices, first)?;
    let connectivity = volume_connectivity(first.connectivity());
    let depth = slices.len();
    // every array is written whole from the slices, but the two along time
    let gather = |array: &dyn Fn(&GridProblem) -> &[i32]| {
        let mut all = Vec::with_capacity(n * depth);
        for slice in slices {
            all.extend_from_slice(array(slice.problem));
        }
        all
    };
    let mut source = gather(&|p| p.source());
    let mut sink = gather(&|p| p.sink());
    let mut edges: Vec<Vec<i32>> = vec![Vec::new(); connectivity.number() as usize];
    for &dir in first.connectivity().directions() {
        let (dx, dy) = dir.offset();
        let d = connectivity
            .direction((dx as i64, dy as i64, 0))
            .expect("every frame direction is a volume direction");
        edges[d] = gather(&|p| p.edges(dir));
    }
    for time in edges.iter_mut().filter(|e| e.is_empty()) {
        *time = vec![0; n * depth];
    }
    let weight = |a: &[u8], b: &[u8]| time_weights.get(squared(a, b)).copied().unwrap_or(0);
    let (up, down) = time_arrays(&mut edges, connectivity);
    for (z, pair) in slices.windows(2).enumerate() {
        let [a, b] = pair else {
            unreachable!("windows of two")
        };
        for p in 0..n {
            let both_hard = is_hard(a.hard, p) && is_hard(b.hard, p);
            let w = if both_hard {
                0
            } else {
                weight(&a.rgb[3 * p..3 * p + 3], &b.rgb[3 * p..3 * p + 3])
            };
            up[z * n + p] = w;
            down[(z + 1) * n + p] = w;
        }
    }
    for (z, slice) in slices.iter().enumerate() {
        let Some(hard) = slice.hard else { continue };
        for (p, &label) in hard.labels.iter().enumerate() {
            let v = z * n + p;
            // a seeded pixel's arc must outweigh every arc a cut could trade it for
            let extra = up[v].saturating_add(down[v]);
            match label {
                SeedLabel::Foreground => source[v] = source[v].saturating_add(extra),
                SeedLabel::Background => sink[v] = sink[v].saturating_add(extra),
                SeedLabel::Unknown => {}
            }
        }
    }
    // each array comes from checked problems, or is a time link (≥ 0, inside)
    Ok(VolumeProblem::from_built_arrays(
        (width, height, depth as u32),
        connectivity,
        source,
        sink,
        edges,
    )?)
}

/// The two time directions' arrays (towards the next frame, towards the previous):
/// a direction and its reverse, as every pair in [`crate::grid::OFFSETS`].
fn time_arrays(
    edges: &mut [Vec<i32>],
    connectivity: VolumeConnectivity,
) -> (&mut [i32], &mut [i32]) {
    let up = connectivity.direction((0, 0, 1)).expect("a time link");
    debug_assert_eq!(connectivity.direction((0, 0, -1)), Some(up ^ 1));
    let (head, tail) = edges.split_at_mut(up + 1);
    (&mut head[up], &mut tail[0])
}

fn is_hard(seeds: Option<&Seeds>, p: usize) -> bool {
    seeds.is_some_and(|s| s.labels[p] != SeedLabel::Unknown)
}

fn squared(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let d = x as i32 - y as i32;
            (d * d) as usize
        })
        .sum()
}

/// Checks that every slice, its colours and its seeds fit the first.
fn check_slices(slices: &[Slice<'_>], first: &GridProblem) -> Result<(), StackError> {
    let n = first.pixels();
    let mismatch = |index, what| Err(StackError::Mismatch { index, what });
    for (index, slice) in slices.iter().enumerate() {
        let p = slice.problem;
        if (p.width(), p.height()) != (first.width(), first.height()) {
            return mismatch(index, "size");
        }
        if p.connectivity() != first.connectivity() {
            return mismatch(index, "connectivity");
        }
        if slice.rgb.len() != 3 * n {
            return mismatch(index, "colours");
        }
        if slice.hard.is_some_and(|s| s.labels.len() != n) {
            return mismatch(index, "seeds");
        }
    }
    Ok(())
}

/// Splits a volume's W × (H·D) mask into its D frames' masks.
pub fn unstack(mask: &Mask, height: u32) -> Vec<Mask> {
    let n = mask.width as usize * height as usize;
    mask.data
        .chunks(n.max(1))
        .map(|data| Mask {
            width: mask.width,
            height,
            data: data.to_vec(),
        })
        .collect()
}
