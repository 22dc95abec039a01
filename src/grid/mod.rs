//! The W×H grid max-flow problem: terminal capacities and one capacity per pixel per
//! direction, held as whole arrays so energies can be built without per-edge calls;
//! its W×H×D sibling for volumes in `volume`.

mod arcs;
mod mask;
mod tiles;
mod volume;

pub use arcs::{ChangedArcs, WORD as ARC_WORD, copy_marking};
pub use mask::{Mask, cut_capacity};
pub use tiles::{ChangedTiles, PixelRect, ProblemChanges, TILE};
pub use volume::{OFFSETS, VolumeConnectivity, VolumeError, VolumeProblem};

use thiserror::Error;

/// Largest number of pixels a grid may have: node indices (pixels plus the two
/// terminals) must fit the 32-bit indices the engines use.
pub const MAX_PIXELS: u64 = (u32::MAX - 2) as u64;

/// Neighbourhood of a pixel: 4 (edge-adjacent) or 8 (edge- and corner-adjacent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Connectivity {
    /// (x±1, y) and (x, y±1).
    Four,
    /// The four above plus the four diagonals.
    Eight,
}

impl Connectivity {
    /// Parses the number used in files and on the command line (4 or 8).
    pub fn from_number(n: u32) -> Option<Self> {
        match n {
            4 => Some(Self::Four),
            8 => Some(Self::Eight),
            _ => None,
        }
    }

    /// 4 or 8.
    pub fn number(self) -> u32 {
        match self {
            Self::Four => 4,
            Self::Eight => 8,
        }
    }

    /// The directions of this neighbourhood, in `Direction::ALL` order.
    pub fn directions(self) -> &'static [Direction] {
        &Direction::ALL[..self.number() as usize]
    }
}

/// Direction from a pixel to one of its neighbours. The order pairs each direction
/// with its reverse (`d.index() ^ 1`), which engines use as their reverse-edge table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Direction {
    /// (x+1, y)
    East = 0,
    /// (x−1, y)
    West = 1,
    /// (x, y+1)
    South = 2,
    /// (x, y−1)
    North = 3,
    /// (x+1, y+1)
    SouthEast = 4,
    /// (x−1, y−1)
    NorthWest = 5,
    /// (x−1, y+1)
    SouthWest = 6,
    /// (x+1, y−1)
    NorthEast = 7,
}

impl Direction {
    /// All eight directions; the first four are the 4-connected ones.
    pub const ALL: [Direction; 8] = [
        Direction::East,
        Direction::West,
        Direction::South,
        Direction::North,
        Direction::SouthEast,
        Direction::NorthWest,
        Direction::SouthWest,
        Direction::NorthEast,
    ];

    /// Position in `ALL`, used to index per-direction arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The direction pointing back.
    pub fn reverse(self) -> Direction {
        Self::ALL[self.index() ^ 1]
    }

    /// (dx, dy) step to the neighbour.
    pub fn offset(self) -> (i32, i32) {
        match self {
            Direction::East => (1, 0),
            Direction::West => (-1, 0),
            Direction::South => (0, 1),
            Direction::North => (0, -1),
            Direction::SouthEast => (1, 1),
            Direction::NorthWest => (-1, -1),
            Direction::SouthWest => (-1, 1),
            Direction::NorthEast => (1, -1),
        }
    }

    /// The direction with step (dx, dy), if it is one of the eight.
    pub fn from_offset(dx: i32, dy: i32) -> Option<Direction> {
        Self::ALL.into_iter().find(|d| d.offset() == (dx, dy))
    }

    /// Whether a diagonal (only present in 8-connected grids).
    pub fn is_diagonal(self) -> bool {
        self.index() >= 4
    }
}

/// What is wrong with arrays handed to [`GridProblem`].
#[derive(Debug, Error, PartialEq, Eq)]
pub enum GridError {
    /// Width or height is zero or the pixel count exceeds [`MAX_PIXELS`].
    #[error("grid size {width}x{height} is not supported (1 to {MAX_PIXELS} pixels)")]
    BadSize {
        /// Requested width.
        width: u64,
        /// Requested height.
        height: u64,
    },
    /// An array does not hold one value per pixel.
    #[error("{what} has {got} values, expected {expected}")]
    BadLength {
        /// Which array.
        what: &'static str,
        /// Its length.
        got: usize,
        /// Width × height.
        expected: usize,
    },
    /// A capacity is negative.
    #[error("{what} capacity at pixel ({x}, {y}) is negative ({value})")]
    Negative {
        /// Which array.
        what: &'static str,
        /// Pixel column.
        x: u32,
        /// Pixel row.
        y: u32,
        /// The value.
        value: i32,
    },
    /// An edge leaves the grid.
    #[error("edge {dir:?} from pixel ({x}, {y}) leaves the grid but has capacity {value}")]
    OffGrid {
        /// Direction of the edge.
        dir: Direction,
        /// Pixel column.
        x: u32,
        /// Pixel row.
        y: u32,
        /// The non-zero capacity.
        value: i32,
    },
}

/// A W×H grid max-flow problem. Pixel (x, y) is index `y * width + x` in every array.
///
/// `edges[d][p]` is the capacity of the arc from pixel p to its neighbour in
/// direction `Direction::ALL[d]`; arcs p→q and q→p are independent. All capacities
/// are `i32 ≥ 0` and arcs that would leave the grid are 0, which the constructors check
/// so engines can rely on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GridProblem {
    width: u32,
    height: u32,
    connectivity: Connectivity,
    source: Vec<i32>,
    sink: Vec<i32>,
    edges: Vec<Vec<i32>>,
}

impl GridProblem {
    /// A grid with every capacity zero.
    pub fn zeros(width: u32, height: u32, connectivity: Connectivity) -> Result<Self, GridError> {
        let n = checked_pixels(width, height)?;
        let dirs = connectivity.number() as usize;
        Ok(Self {
            width,
            height,
            connectivity,
            source: vec![0; n],
            sink: vec![0; n],
            edges: vec![vec![0; n]; dirs],
        })
    }

    /// Builds a problem from whole arrays (`edges` has one array per direction of the
    /// connectivity, in `Direction::ALL` order), checking lengths, signs and borders.
    pub fn from_arrays(
        width: u32,
        height: u32,
        connectivity: Connectivity,
        source: Vec<i32>,
        sink: Vec<i32>,
        edges: Vec<Vec<i32>>,
    ) -> Result<Self, GridError> {
        let problem = Self::from_built_arrays(width, height, connectivity, source, sink, edges)?;
        problem.validate()?;
        Ok(problem)
    }

    /// [`Self::from_arrays`] for arrays whose capacities hold by construction (the
    /// energy's): only the lengths are checked, since a pass over every capacity costs
    /// a still frame more than its changes do (the builder checks the rest in debug
    /// builds with [`Self::validate`]).
    pub(crate) fn from_built_arrays(
        width: u32,
        height: u32,
        connectivity: Connectivity,
        source: Vec<i32>,
        sink: Vec<i32>,
        edges: Vec<Vec<i32>>,
    ) -> Result<Self, GridError> {
        let n = checked_pixels(width, height)?;
        check_len("source", source.len(), n)?;
        check_len("sink", sink.len(), n)?;
        check_len(
            "edge direction list",
            edges.len(),
            connectivity.number() as usize,
        )?;
        for e in &edges {
            check_len("edge", e.len(), n)?;
        }
        Ok(Self {
            width,
            height,
            connectivity,
            source,
            sink,
            edges,
        })
    }

    /// Checks the signs of every capacity and that no arc leaves the grid.
    pub(crate) fn validate(&self) -> Result<(), GridError> {
        /// Index of the first negative value; the sign bits are OR-ed first (a loop
        /// that vectorises) since valid problems, the common case, have none.
        fn first_negative(arr: &[i32]) -> Option<usize> {
            if arr.iter().fold(0, |acc, &c| acc | c) >= 0 {
                return None;
            }
            arr.iter().position(|&c| c < 0)
        }

        let w = self.width as usize;
        let at = |i: usize| ((i % w) as u32, (i / w) as u32);
        for (what, arr) in [("source", &self.source), ("sink", &self.sink)] {
            if let Some(i) = first_negative(arr) {
                let (x, y) = at(i);
                return Err(GridError::Negative {
                    what,
                    x,
                    y,
                    value: arr[i],
                });
            }
        }
        for &dir in self.connectivity.directions() {
            let arr = &self.edges[dir.index()];
            if let Some(i) = first_negative(arr) {
                let (x, y) = at(i);
                return Err(GridError::Negative {
                    what: "edge",
                    x,
                    y,
                    value: arr[i],
                });
            }
            // Only pixels on the border can have an arc leaving the grid.
            let (dx, dy) = dir.offset();
            let h = self.height as usize;
            for y in 0..h {
                let row = &arr[y * w..(y + 1) * w];
                let whole_row = (y == 0 && dy < 0) || (y + 1 == h && dy > 0);
                let found = if whole_row {
                    (0..w).find(|&x| row[x] != 0)
                } else {
                    [(0, dx < 0), (w - 1, dx > 0)]
                        .into_iter()
                        .find(|&(x, leaves)| leaves && row[x] != 0)
                        .map(|(x, _)| x)
                };
                if let Some(x) = found {
                    let (x, y) = (x as u32, y as u32);
                    return Err(GridError::OffGrid {
                        dir,
                        x,
                        y,
                        value: row[x as usize],
                    });
                }
            }
        }
        Ok(())
    }

    /// Grid width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Grid height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Number of pixels.
    pub fn pixels(&self) -> usize {
        self.source.len()
    }

    /// 4- or 8-connected.
    pub fn connectivity(&self) -> Connectivity {
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

    /// Capacities p→neighbour in direction `dir` (all zero for diagonals of a 4C grid).
    pub fn edges(&self, dir: Direction) -> &[i32] {
        self.edges.get(dir.index()).map_or(&[], Vec::as_slice)
    }

    /// Index of the neighbour of (x, y) in direction `dir`, if it is on the grid.
    pub fn neighbour(&self, x: u32, y: u32, dir: Direction) -> Option<usize> {
        let (dx, dy) = dir.offset();
        let nx = x as i64 + dx as i64;
        let ny = y as i64 + dy as i64;
        let inside = nx >= 0 && ny >= 0 && nx < self.width as i64 && ny < self.height as i64;
        inside.then(|| ny as usize * self.width as usize + nx as usize)
    }

    /// Takes the arrays back (source, sink, edges) so their memory can be reused for
    /// the next frame's problem.
    pub fn into_arrays(self) -> (Vec<i32>, Vec<i32>, Vec<Vec<i32>>) {
        (self.source, self.sink, self.edges)
    }

    /// Sum of all terminal capacities out of s: an upper bound on the flow.
    pub fn source_total(&self) -> u64 {
        self.source.iter().map(|&c| c as u64).sum()
    }
}

fn checked_pixels(width: u32, height: u32) -> Result<usize, GridError> {
    let n = width as u64 * height as u64;
    if n == 0 || n > MAX_PIXELS {
        return Err(GridError::BadSize {
            width: width as u64,
            height: height as u64,
        });
    }
    usize::try_from(n).map_err(|_| GridError::BadSize {
        width: width as u64,
        height: height as u64,
    })
}

fn check_len(what: &'static str, got: usize, expected: usize) -> Result<(), GridError> {
    if got == expected {
        Ok(())
    } else {
        Err(GridError::BadLength {
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
    fn reverse_pairs_are_opposite_steps() {
        for d in Direction::ALL {
            let (dx, dy) = d.offset();
            assert_eq!(d.reverse().offset(), (-dx, -dy));
            assert_eq!(d.reverse().reverse(), d);
            assert_eq!(Direction::from_offset(dx, dy), Some(d));
        }
    }

    #[test]
    fn off_grid_edges_are_rejected() {
        let mut edges = vec![vec![0; 4]; 4];
        edges[Direction::East.index()][1] = 3; // pixel (1,0) of a 2x2 grid
        let err = GridProblem::from_arrays(2, 2, Connectivity::Four, vec![0; 4], vec![0; 4], edges);
        assert!(matches!(err, Err(GridError::OffGrid { x: 1, y: 0, .. })));
    }

    #[test]
    fn negative_and_wrong_length_are_rejected() {
        let edges = vec![vec![0; 4]; 4];
        let err = GridProblem::from_arrays(
            2,
            2,
            Connectivity::Four,
            vec![0, -1, 0, 0],
            vec![0; 4],
            edges.clone(),
        );
        assert!(matches!(err, Err(GridError::Negative { x: 1, y: 0, .. })));
        let err = GridProblem::from_arrays(2, 2, Connectivity::Four, vec![0; 3], vec![0; 4], edges);
        assert!(matches!(err, Err(GridError::BadLength { .. })));
        assert!(GridProblem::zeros(0, 5, Connectivity::Eight).is_err());
    }
}
