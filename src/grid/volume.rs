//! The W×H×D grid max-flow problem (a volume, or a video as x-y-t): the 3D sibling of
//! [`GridProblem`](super::GridProblem), with 6, 10 or 26 neighbours per voxel, held as
//! whole arrays like its 2D sibling.

use super::{MAX_PIXELS, Mask};
use thiserror::Error;

/// Steps (dx, dy, dz) to the neighbours, in direction order. Each direction is paired
/// with its reverse (`d ^ 1`), and each neighbourhood is a prefix: 6-connected the
/// first 6, 10-connected (8 in a slice, one along z each way) the first 10, 26 all.
pub const OFFSETS: [(i32, i32, i32); 26] = [
    (1, 0, 0),
    (-1, 0, 0),
    (0, 1, 0),
    (0, -1, 0),
    (0, 0, 1),
    (0, 0, -1),
    (1, 1, 0),
    (-1, -1, 0),
    (-1, 1, 0),
    (1, -1, 0),
    (1, 0, 1),
    (-1, 0, -1),
    (-1, 0, 1),
    (1, 0, -1),
    (0, 1, 1),
    (0, -1, -1),
    (0, -1, 1),
    (0, 1, -1),
    (1, 1, 1),
    (-1, -1, -1),
    (-1, 1, 1),
    (1, -1, -1),
    (1, -1, 1),
    (-1, 1, -1),
    (-1, -1, 1),
    (1, 1, -1),
];

/// Neighbourhood of a voxel in a volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum VolumeConnectivity {
    /// (±1,0,0), (0,±1,0), (0,0,±1): GridCut's 3D 6-connected.
    Six,
    /// The 8 neighbours in the slice and (0,0,±1): a video volume.
    Ten,
    /// Every step in {-1,0,1}³ but (0,0,0): GridCut's 3D 26-connected.
    TwentySix,
}

impl VolumeConnectivity {
    /// Parses the number used in files and on the command line (6, 10 or 26).
    pub fn from_number(n: u32) -> Option<Self> {
        match n {
            6 => Some(Self::Six),
            10 => Some(Self::Ten),
            26 => Some(Self::TwentySix),
            _ => None,
        }
    }

    /// 6, 10 or 26.
    pub fn number(self) -> u32 {
        match self {
            Self::Six => 6,
            Self::Ten => 10,
            Self::TwentySix => 26,
        }
    }

    /// The steps of this neighbourhood, in direction order (a prefix of [`OFFSETS`]).
    pub fn offsets(self) -> &'static [(i32, i32, i32)] {
        &OFFSETS[..self.number() as usize]
    }

    /// The direction with step (dx, dy, dz) in this neighbourhood, if there is one.
    pub fn direction(self, step: (i64, i64, i64)) -> Option<usize> {
        self.offsets()
            .iter()
            .position(|&(x, y, z)| (x as i64, y as i64, z as i64) == step)
    }
}

/// What is wrong with arrays handed to [`VolumeProblem`].
#[derive(Debug, Error, PartialEq, Eq)]
pub enum VolumeError {
    /// A side is zero or the voxel count exceeds [`MAX_PIXELS`].
    #[error("volume size {width}x{height}x{depth} is not supported (1 to {MAX_PIXELS} voxels)")]
    BadSize {
        /// Requested width.
        width: u64,
        /// Requested height.
        height: u64,
        /// Requested depth.
        depth: u64,
    },
    /// An array does not hold one value per voxel (or the wrong number of arrays).
    #[error("{what} has {got} values, expected {expected}")]
    BadLength {
        /// Which array.
        what: &'static str,
        /// Its length.
        got: usize,
        /// What it should be.
        expected: usize,
    },
    /// A capacity is negative.
    #[error("{what} capacity at voxel {at:?} is negative ({value})")]
    Negative {
        /// Which array.
        what: &'static str,
        /// The voxel (x, y, z).
        at: (u32, u32, u32),
        /// The value.
        value: i32,
    },
    /// An arc leaves the volume.
    #[error("arc {step:?} from voxel {at:?} leaves the volume but has capacity {value}")]
    OffGrid {
        /// The arc's step (dx, dy, dz).
        step: (i32, i32, i32),
        /// The voxel (x, y, z).
        at: (u32, u32, u32),
        /// The non-zero capacity.
        value: i32,
    },
    /// A mask is not W × (H·D).
    #[error("mask of {got:?} does not match the volume's canonical {expected:?}")]
    MaskSize {
        /// The mask's (width, height).
        got: (u32, u32),
        /// (W, H·D).
        expected: (u32, u32),
    },
}

/// A W×H×D grid max-flow problem. Voxel (x, y, z) is index `(z * H + y) * W + x` in
/// every array, which is also its pixel in the canonical W × (H·D) mask.
///
/// `edges[d][p]` is the capacity of the arc from voxel p to its neighbour at step
/// `OFFSETS[d]`; arcs p→q and q→p are independent, all capacities are `i32 ≥ 0`, and
/// arcs that would leave the volume are 0, which the constructor checks so engines can
/// rely on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolumeProblem {
    width: u32,
    height: u32,
    depth: u32,
    connectivity: VolumeConnectivity,
    source: Vec<i32>,
    sink: Vec<i32>,
    edges: Vec<Vec<i32>>,
}

impl VolumeProblem {
    /// A volume with every capacity zero.
    pub fn zeros(
        width: u32,
        height: u32,
        depth: u32,
        connectivity: VolumeConnectivity,
    ) -> Result<Self, VolumeError> {
        let n = checked_voxels(width, height, depth)?;
        Ok(Self {
            width,
            height,
            depth,
            connectivity,
            source: vec![0; n],
            sink: vec![0; n],
            edges: vec![vec![0; n]; connectivity.number() as usize],
        })
    }

    /// Builds a problem from whole arrays (`edges` one array per direction of the
    /// connectivity, in [`OFFSETS`] order), checking lengths, signs and borders.
    pub fn from_arrays(
        size: (u32, u32, u32),
        connectivity: VolumeConnectivity,
        source: Vec<i32>,
        sink: Vec<i32>,
        edges: Vec<Vec<i32>>,
    ) -> Result<Self, VolumeError> {
        let problem = Self::assemble(size, connectivity, source, sink, edges)?;
        problem.validate()?;
        Ok(problem)
    }

    /// [`Self::from_arrays`] checking lengths only, for arrays built from problems
    /// whose signs and borders were checked (frames stacked into a volume); debug
    /// builds check everything.
    pub(crate) fn from_built_arrays(
        size: (u32, u32, u32),
        connectivity: VolumeConnectivity,
        source: Vec<i32>,
        sink: Vec<i32>,
        edges: Vec<Vec<i32>>,
    ) -> Result<Self, VolumeError> {
        let problem = Self::assemble(size, connectivity, source, sink, edges)?;
        debug_assert_eq!(problem.validate(), Ok(()));
        Ok(problem)
    }

    /// The problem of these arrays, their lengths checked.
    fn assemble(
        (width, height, depth): (u32, u32, u32),
        connectivity: VolumeConnectivity,
        source: Vec<i32>,
        sink: Vec<i32>,
        edges: Vec<Vec<i32>>,
    ) -> Result<Self, VolumeError> {
        let n = checked_voxels(width, height, depth)?;
        check_len("source", source.len(), n)?;
        check_len("sink", sink.len(), n)?;
        let k = connectivity.number() as usize;
        check_len("edge direction list", edges.len(), k)?;
        for e in &edges {
            check_len("edge", e.len(), n)?;
        }
        let problem = Self {
            width,
            height,
            depth,
            connectivity,
            source,
            sink,
            edges,
        };
        Ok(problem)
    }

    fn validate(&self) -> Result<(), VolumeError> {
        let terminals = [("source", &self.source), ("sink", &self.sink)];
        for (what, arr) in terminals
            .into_iter()
            .chain(self.edges.iter().map(|e| ("edge", e)))
        {
            if let Some(i) = arr.iter().position(|&c| c < 0) {
                return Err(VolumeError::Negative {
                    what,
                    at: self.coords(i),
                    value: arr[i],
                });
            }
        }
        for (d, arr) in self.edges.iter().enumerate() {
            let step = OFFSETS[d];
            let off = self.off_grid(step).find(|&i| arr[i] != 0);
            if let Some(i) = off {
                return Err(VolumeError::OffGrid {
                    step,
                    at: self.coords(i),
                    value: arr[i],
                });
            }
        }
        Ok(())
    }

    /// The voxels whose neighbour at `step` lies outside the volume, visited row by
    /// row: whole rows where y or z leaves it, else the row's end that x leaves by.
    fn off_grid(&self, (dx, dy, dz): (i32, i32, i32)) -> impl Iterator<Item = usize> + '_ {
        let (w, h, d) = (
            self.width as usize,
            self.height as usize,
            self.depth as usize,
        );
        let leaves = |c: usize, dc: i32, n: usize| (dc < 0 && c == 0) || (dc > 0 && c + 1 == n);
        (0..d * h).flat_map(move |row| {
            let (y, z) = (row % h, row / h);
            let first = row * w;
            let xs = if leaves(y, dy, h) || leaves(z, dz, d) {
                0..w
            } else if dx < 0 {
                0..1
            } else if dx > 0 {
                w - 1..w
            } else {
                0..0
            };
            xs.map(move |x| first + x)
        })
    }

    /// Volume width in voxels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Volume height in voxels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Number of slices.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Number of voxels.
    pub fn voxels(&self) -> usize {
        self.source.len()
    }

    /// 6, 10 or 26 neighbours.
    pub fn connectivity(&self) -> VolumeConnectivity {
        self.connectivity
    }

    /// Capacities s→p.
    pub fn source(&self) -> &[i32] {
        &self.source
    }

    /// Capacities p→t.
    pub fn sink(&self) -> &[i32] {
        &self.sink
    }

    /// Capacities p→neighbour in direction `d` (an index into [`OFFSETS`] below the
    /// connectivity's number).
    pub fn edges(&self, d: usize) -> &[i32] {
        self.edges.get(d).map_or(&[], Vec::as_slice)
    }

    /// (x, y, z) of voxel `i`.
    pub fn coords(&self, i: usize) -> (u32, u32, u32) {
        let (w, h) = (self.width as usize, self.height as usize);
        ((i % w) as u32, (i / w % h) as u32, (i / (w * h)) as u32)
    }

    /// Index of voxel `i`'s neighbour in direction `d`, if it is inside the volume.
    pub fn step(&self, i: usize, d: usize) -> Option<usize> {
        let (x, y, z) = self.coords(i);
        let (dx, dy, dz) = OFFSETS[d];
        let inside = |c: u32, dc: i32, n: u32| (c as i64 + dc as i64).clamp(-1, n as i64) as u32;
        let (nx, ny, nz) = (
            inside(x, dx, self.width),
            inside(y, dy, self.height),
            inside(z, dz, self.depth),
        );
        let ok = nx < self.width && ny < self.height && nz < self.depth;
        ok.then(|| {
            ((nz as usize * self.height as usize) + ny as usize) * self.width as usize + nx as usize
        })
    }

    /// Size of the canonical mask: W × (H·D), slice z in rows z·H .. z·H + H − 1.
    pub fn mask_size(&self) -> (u32, u32) {
        (self.width, self.height * self.depth)
    }

    /// Takes the arrays back (source, sink, edges) so their memory can be reused.
    pub fn into_arrays(self) -> (Vec<i32>, Vec<i32>, Vec<Vec<i32>>) {
        (self.source, self.sink, self.edges)
    }

    /// Capacity of the s–t cut whose source side is `mask` (W × (H·D)): every
    /// terminal and neighbour arc from the source side to the sink side, in 64 bits;
    /// for a minimum cut it equals the max-flow value.
    pub fn cut_capacity(&self, mask: &Mask) -> Result<u64, VolumeError> {
        let expected = self.mask_size();
        if (mask.width, mask.height) != expected {
            return Err(VolumeError::MaskSize {
                got: (mask.width, mask.height),
                expected,
            });
        }
        let mut total = 0u64;
        for i in 0..self.voxels() {
            if !mask.is_source(i) {
                total += self.source[i] as u64;
                continue;
            }
            total += self.sink[i] as u64;
            for (d, arr) in self.edges.iter().enumerate() {
                if arr[i] != 0 && self.step(i, d).is_some_and(|j| !mask.is_source(j)) {
                    total += arr[i] as u64;
                }
            }
        }
        Ok(total)
    }
}

fn checked_voxels(width: u32, height: u32, depth: u32) -> Result<usize, VolumeError> {
    let n = width as u64 * height as u64 * depth as u64;
    let bad = || VolumeError::BadSize {
        width: width as u64,
        height: height as u64,
        depth: depth as u64,
    };
    if n == 0 || n > MAX_PIXELS {
        return Err(bad());
    }
    usize::try_from(n).map_err(|_| bad())
}

fn check_len(what: &'static str, got: usize, expected: usize) -> Result<(), VolumeError> {
    if got == expected {
        Ok(())
    } else {
        Err(VolumeError::BadLength {
            what,
            got,
            expected,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_pair_with_their_reverse_and_neighbourhoods_are_prefixes() {
        for (d, &(x, y, z)) in OFFSETS.iter().enumerate() {
            assert_eq!(OFFSETS[d ^ 1], (-x, -y, -z));
        }
        let distinct: std::collections::HashSet<_> = OFFSETS.iter().collect();
        assert_eq!(distinct.len(), 26);
        assert!(
            OFFSETS[..6]
                .iter()
                .all(|&(x, y, z)| x.abs() + y.abs() + z.abs() == 1)
        );
        assert!(
            OFFSETS[6..10]
                .iter()
                .all(|&(x, y, z)| x != 0 && y != 0 && z == 0)
        );
        assert_eq!(VolumeConnectivity::Ten.direction((0, 0, -1)), Some(5));
        assert_eq!(VolumeConnectivity::Six.direction((1, 1, 0)), None);
    }

    #[test]
    fn an_arc_is_refused_exactly_where_its_step_leaves_the_volume() {
        let (w, h, d) = (3, 4, 2);
        let n = (w * h * d) as usize;
        let c = VolumeConnectivity::TwentySix;
        let zeros = VolumeProblem::zeros(w, h, d, c).unwrap();
        for i in 0..n {
            for dir in 0..26 {
                let mut edges = vec![vec![0; n]; 26];
                edges[dir][i] = 1;
                let p = VolumeProblem::from_arrays((w, h, d), c, vec![0; n], vec![0; n], edges);
                assert_eq!(
                    p.is_ok(),
                    zeros.step(i, dir).is_some(),
                    "voxel {i} dir {dir}"
                );
            }
        }
    }

    #[test]
    fn arcs_leaving_the_volume_and_negative_capacities_are_refused() {
        let n = 2 * 3 * 2;
        let mut edges = vec![vec![0; n]; 6];
        edges[4][7] = 1; // +z from voxel (1, 0, 1), in the last slice
        let c = VolumeConnectivity::Six;
        let err = VolumeProblem::from_arrays((2, 3, 2), c, vec![0; n], vec![0; n], edges);
        assert_eq!(
            err,
            Err(VolumeError::OffGrid {
                step: (0, 0, 1),
                at: (1, 0, 1),
                value: 1
            })
        );
        let mut sink = vec![0; n];
        sink[5] = -2;
        let err = VolumeProblem::from_arrays((2, 3, 2), c, vec![0; n], sink, vec![vec![0; n]; 6]);
        assert!(matches!(
            err,
            Err(VolumeError::Negative { at: (1, 2, 0), .. })
        ));
        assert!(VolumeProblem::zeros(3, 0, 2, c).is_err());
    }

    #[test]
    fn steps_stay_inside_and_the_cut_counts_arcs_leaving_the_source_side() {
        let c = VolumeConnectivity::TwentySix;
        let mut p = VolumeProblem::zeros(2, 2, 2, c).unwrap();
        assert_eq!(p.step(0, 18), Some(7)); // (1,1,1)
        assert_eq!(p.step(7, 18), None);
        // s → voxel 0 (5), voxel 0 → voxel 7 (3), voxel 7 → t (4)
        p.source[0] = 5;
        p.edges[18][0] = 3;
        p.sink[7] = 4;
        let mask = Mask::from_fn(2, 4, |i| i == 0);
        assert_eq!(p.cut_capacity(&mask), Ok(3));
        assert_eq!(p.cut_capacity(&Mask::empty(2, 4)), Ok(5));
        assert!(p.cut_capacity(&Mask::empty(4, 2)).is_err());
    }
}
