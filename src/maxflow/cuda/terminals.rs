//! What a problem's terminal capacities say about its energy, for the schedule choices
//! that depend on it: seeded (strokes or seeds, flow travels far) or an image energy,
//! and whether one terminal pulls far more pixels than the other.

use crate::grid::GridProblem;

/// Terminals are sparse below one pixel in this many.
const SPARSE: usize = 8;

/// One kind of terminal pixel is lopsided at this many times the other or more.
const LOPSIDED: usize = 8;

/// Pixels counted by their terminal capacities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Terminals {
    /// Pixels with any terminal capacity.
    pub any: usize,
    /// Pixels s feeds once each pixel's two terminal capacities are folded into one.
    pub supplies: usize,
    /// Pixels the sink pulls once folded.
    pub deficits: usize,
    /// Pixels of the grid.
    pub pixels: usize,
}

impl Terminals {
    /// Counts the terminals of `problem`.
    pub fn of(problem: &GridProblem) -> Self {
        let mut census = Self {
            pixels: problem.source().len(),
            ..Self::default()
        };
        for (&s, &t) in problem.source().iter().zip(problem.sink()) {
            census.any += usize::from(s != 0 || t != 0);
            census.supplies += usize::from(s > t);
            census.deficits += usize::from(t > s);
        }
        census
    }

    /// The census the device energy counted: pixels with any terminal, supplies and
    /// deficits, of `pixels`.
    pub fn from_census(census: [u32; 3], pixels: usize) -> Self {
        Self {
            any: census[0] as usize,
            supplies: census[1] as usize,
            deficits: census[2] as usize,
            pixels,
        }
    }

    /// Whether fewer than one pixel in eight has a terminal capacity: a seeded energy
    /// (strokes or seeds, contrast edges elsewhere) rather than an image energy, whose
    /// terminals are on most pixels.
    pub fn sparse(&self) -> bool {
        self.any * SPARSE < self.pixels
    }

    /// Whether one kind of terminal pixel (supply or deficit) outnumbers the other eight
    /// times or more: an object on a large background, or the reverse.
    pub fn lopsided(&self) -> bool {
        let (few, many) = (
            self.supplies.min(self.deficits),
            self.supplies.max(self.deficits),
        );
        many > 0 && many >= LOPSIDED * few
    }

    /// Whether this is the energy of an object on a large background: terminals on most
    /// pixels (not seeded), lopsided. Its work stays near the object, which several
    /// schedule choices follow.
    pub fn object(&self) -> bool {
        !self.sparse() && self.lopsided()
    }
}

#[cfg(test)]
mod tests {
    use super::Terminals;
    use crate::grid::{Connectivity, GridProblem};

    /// An 8×8 grid with `supplies` pixels fed by s and `deficits` pulled by t.
    fn grid(supplies: usize, deficits: usize) -> GridProblem {
        let (mut source, mut sink) = (vec![0; 64], vec![0; 64]);
        source[..supplies].fill(5);
        sink[64 - deficits..].fill(5);
        let edges = vec![vec![0; 64]; 4];
        GridProblem::from_arrays(8, 8, Connectivity::Four, source, sink, edges).unwrap()
    }

    #[test]
    fn seeded_energies_have_sparse_terminals() {
        assert!(Terminals::of(&grid(0, 0)).sparse());
        assert!(Terminals::of(&grid(3, 4)).sparse());
        // one pixel in eight
        assert!(!Terminals::of(&grid(4, 4)).sparse());
    }

    #[test]
    fn an_object_on_a_large_background_is_lopsided() {
        assert!(Terminals::of(&grid(1, 8)).lopsided());
        assert!(Terminals::of(&grid(7, 0)).lopsided());
        assert!(!Terminals::of(&grid(2, 15)).lopsided());
        assert!(!Terminals::of(&grid(0, 0)).lopsided());
    }

    #[test]
    fn an_object_is_lopsided_and_not_seeded() {
        assert!(Terminals::of(&grid(1, 8)).object());
        // lopsided, but on 7 pixels of 64: seeded
        assert!(!Terminals::of(&grid(1, 6)).object());
        assert!(!Terminals::of(&grid(2, 15)).object());
    }

    #[test]
    fn folded_terminals_count_once() {
        let mut p = grid(2, 0);
        let mut sink = p.sink().to_vec();
        sink[0] = 5; // pixel 0: both terminals, folds to nothing
        sink[1] = 9; // pixel 1: the sink pulls
        p = GridProblem::from_arrays(
            8,
            8,
            Connectivity::Four,
            p.source().to_vec(),
            sink,
            vec![vec![0; 64]; 4],
        )
        .unwrap();
        let t = Terminals::of(&p);
        assert_eq!((t.any, t.supplies, t.deficits, t.pixels), (2, 0, 1, 64));
    }
}
