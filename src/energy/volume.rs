//! A video's frames → one x-y-t problem ([`VolumeProblem`]): each frame's own energy
//! as a slice, and between consecutive frames a link from each pixel to the same pixel
//! in the next frame, weighted by their colour likeness with the smoothness term's own
//! contrast function, so that a cut agrees over time where the colours do.
//!
//! 8-connected frames give the 10-connected video volume (4-connected: 6).

use super::seeds::{SeedLabel, Seeds};
use crate::bands;
use crate::grid::{Connectivity, Direction, GridProblem, Mask};
use crate::grid::{VolumeConnectivity, VolumeError, VolumeProblem};

/// What the links along time read of one frame of a volume.
pub struct Slice<'a> {
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

/// A volume gathered one frame at a time: each frame's energy is copied into the
/// volume's arrays as it comes, so that no frame's arrays wait beside them; the links
/// along time and the seeds' pull on them come once the volume is complete
/// ([`Self::finish`]).
pub struct Gather {
    /// Size and connectivity of the first frame, which the others must share.
    frame: Option<(u32, u32, Connectivity)>,
    frames: usize,
    /// Frames the arrays are sized for.
    expected: usize,
    source: Vec<i32>,
    sink: Vec<i32>,
    /// One array per volume direction; those along time stay empty until the end.
    edges: Vec<Vec<i32>>,
}

impl Gather {
    /// An empty volume sized for `expected` frames (it takes more or fewer).
    pub fn new(expected: usize) -> Self {
        Self {
            frame: None,
            frames: 0,
            expected: expected.max(1),
            source: Vec::new(),
            sink: Vec::new(),
            edges: Vec::new(),
        }
    }

    /// Frames gathered so far.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Appends the next frame's energy, which must have the first frame's size and
    /// connectivity.
    pub fn push(&mut self, problem: &GridProblem) -> Result<(), StackError> {
        let shape = (problem.width(), problem.height(), problem.connectivity());
        let n = problem.pixels();
        match self.frame {
            None => {
                self.frame = Some(shape);
                let volume = volume_connectivity(shape.2);
                let room = n * self.expected;
                self.source = Vec::with_capacity(room);
                self.sink = Vec::with_capacity(room);
                self.edges = vec![Vec::new(); volume.number() as usize];
                for &dir in shape.2.directions() {
                    self.edges[frame_direction(volume, dir)] = Vec::with_capacity(room);
                }
            }
            Some(first) if (first.0, first.1) != (shape.0, shape.1) => {
                return Err(self.mismatch("size"));
            }
            Some(first) if first.2 != shape.2 => return Err(self.mismatch("connectivity")),
            Some(_) => {}
        }
        let volume = volume_connectivity(shape.2);
        // one array a part, the parts over the cores
        let mut parts: Vec<(&mut Vec<i32>, &[i32])> = vec![
            (&mut self.source, problem.source()),
            (&mut self.sink, problem.sink()),
        ];
        let dirs = shape.2.directions();
        for (d, array) in self.edges.iter_mut().enumerate() {
            // the frame's direction with this step, none for the two along time
            if let Some(&dir) = dirs.iter().find(|&&dir| frame_direction(volume, dir) == d) {
                parts.push((array, problem.edges(dir)));
            }
        }
        bands::for_each_part(parts, |(array, frame)| array.extend_from_slice(frame));
        self.frames += 1;
        Ok(())
    }

    fn mismatch(&self, what: &'static str) -> StackError {
        StackError::Mismatch {
            index: self.frames,
            what,
        }
    }

    /// The volume: the gathered frames with, between consecutive ones, a link from
    /// each pixel to itself in the next frame whose capacity `time_weights` gives by
    /// the squared colour difference of the two pixels (0 past its end) — the frames'
    /// straight-arc table ([`super::Smoothness::tables`]), so that time is one more
    /// direction of the same smoothness term. `slices` are the frames' colours and
    /// seeds, one per frame gathered.
    pub fn finish(
        self,
        slices: &[Slice<'_>],
        time_weights: &[i32],
    ) -> Result<VolumeProblem, StackError> {
        let Some((width, height, frame)) = self.frame else {
            return Err(StackError::Empty);
        };
        let n = width as usize * height as usize;
        let depth = self.frames;
        check_slices(slices, depth, n)?;
        let connectivity = volume_connectivity(frame);
        let (mut source, mut sink, mut edges) = (self.source, self.sink, self.edges);
        for time in edges.iter_mut().filter(|e| e.is_empty()) {
            *time = vec![0; n * depth];
        }
        let weight = |a: &[u8], b: &[u8]| time_weights.get(squared(a, b)).copied().unwrap_or(0);
        let (up, down) = time_arrays(&mut edges, connectivity);
        // a part per pair of consecutive frames: its links up from the first and down
        // from the second, over the cores
        let pairs = slices
            .windows(2)
            .zip(up.chunks_mut(n))
            .zip(down.chunks_mut(n).skip(1));
        bands::for_each_part(pairs.collect(), |((pair, up), down)| {
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
                up[p] = w;
                down[p] = w;
            }
        });
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
}

/// The volume direction of a frame's direction.
fn frame_direction(volume: VolumeConnectivity, dir: Direction) -> usize {
    let (dx, dy) = dir.offset();
    volume
        .direction((dx as i64, dy as i64, 0))
        .expect("every frame direction is a volume direction")
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

/// Checks that there is a slice per frame, with colours and seeds of `n` pixels.
fn check_slices(slices: &[Slice<'_>], frames: usize, n: usize) -> Result<(), StackError> {
    let mismatch = |index, what| Err(StackError::Mismatch { index, what });
    if slices.len() != frames {
        return mismatch(slices.len().min(frames), "frame count");
    }
    for (index, slice) in slices.iter().enumerate() {
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
