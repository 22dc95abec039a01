//! The per-node state word of the 3D solver and the three volume neighbourhoods.
//!
//! The word holds the node's tree, its active flag and saturation bits telling which
//! outgoing and which incoming neighbour arcs still have residual capacity, so growth
//! and adoption read one word per neighbour. Parents live in `Solver::pa` (a root
//! hangs from its terminal, an orphan from nothing), not in the word.

use crate::grid::VolumeConnectivity;

/// Tree field.
pub(super) const TREE: u64 = 0b11;
/// Tree field: in no tree.
pub(super) const FREE: u64 = 0;
/// Tree field: in the source tree S.
pub(super) const SOURCE: u64 = 1;
/// Tree field: in the sink tree T.
pub(super) const SINK: u64 = 2;
/// Flag: queued for growth (or being grown).
pub(super) const ACTIVE: u64 = 0b100;
/// First bit of the saturation masks.
const MASKS: u32 = 3;

/// A volume neighbourhood with its state-word type, fixed at compile time so that
/// the solver is specialised for each.
pub(super) trait Hood: Send + 'static {
    /// Arcs per node (6, 10 or 26).
    const K: usize;
    /// Whether the source tree alone searches (sink roots start passive) whatever the
    /// terminal counts: with 10 or 26 neighbours a source node meets a sink root
    /// within a step or two, and growing the sink tree too costs more than it saves
    /// (with 6 it pays on balanced terminals; NOTES.md, Volumes).
    const SOURCE_SEARCHES: bool;
    /// Whether growth re-hangs same-tree neighbours below the grower where it is
    /// closer to the terminal (BK's distance heuristic). The trees grow breadth first,
    /// so they start as shortest-path trees and the test mostly costs a load and a
    /// branch per arc; only 10C keeps it, where random volumes' paths grew long
    /// without it (NOTES.md, Volumes).
    const REHANG: bool;
    /// Storage of the state word: the smallest that holds 3 + 2·K bits.
    type Word: Copy + Default + Send + 'static;
    /// Word → its bits.
    fn get(w: Self::Word) -> u64;
    /// Bits → word.
    fn put(v: u64) -> Self::Word;
    /// The matching volume connectivity.
    fn connectivity() -> VolumeConnectivity;
}

/// 6-connected volumes: 16-bit state word.
pub(super) struct Six;
/// 10-connected volumes (video): 32-bit state word.
pub(super) struct Ten;
/// 26-connected volumes: 64-bit state word.
pub(super) struct TwentySix;

macro_rules! hood {
    ($name:ident, $k:expr, $word:ty, $conn:ident, $source_searches:expr, $rehang:expr) => {
        impl Hood for $name {
            const K: usize = $k;
            const SOURCE_SEARCHES: bool = $source_searches;
            const REHANG: bool = $rehang;
            type Word = $word;
            #[inline(always)]
            fn get(w: $word) -> u64 {
                w as u64
            }
            #[inline(always)]
            fn put(v: u64) -> $word {
                v as $word
            }
            fn connectivity() -> VolumeConnectivity {
                VolumeConnectivity::$conn
            }
        }
    };
}

hood!(Six, 6, u16, Six, false, false);
hood!(Ten, 10, u32, Ten, true, true);
hood!(TwentySix, 26, u64, TwentySix, true, false);

/// Bit set while the arc leaving the node in direction `d` has residual capacity.
#[inline(always)]
pub(super) fn out_bit(d: usize) -> u64 {
    1 << (MASKS as usize + d)
}

/// Bit set while the arc entering the node from its neighbour in direction `d` has
/// residual capacity.
#[inline(always)]
pub(super) fn in_bit<H: Hood>(d: usize) -> u64 {
    1 << (MASKS as usize + H::K + d)
}

/// Directions whose outgoing arcs have residual capacity.
#[inline(always)]
pub(super) fn out_mask<H: Hood>(w: u64) -> u64 {
    (w >> MASKS) & ((1 << H::K) - 1)
}

/// Directions whose incoming arcs have residual capacity.
#[inline(always)]
pub(super) fn in_mask<H: Hood>(w: u64) -> u64 {
    (w >> (MASKS as usize + H::K)) & ((1 << H::K) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fits<H: Hood>(bits: u32) {
        let used = 64 - in_bit::<H>(H::K - 1).leading_zeros();
        assert!(
            used <= bits,
            "{} arcs need {used} bits, more than {bits}",
            H::K
        );
        for d in 0..H::K {
            let both = out_bit(d) | in_bit::<H>(d);
            assert_eq!(both & (TREE | ACTIVE), 0);
            assert_eq!(out_mask::<H>(both), 1 << d);
            assert_eq!(in_mask::<H>(both), 1 << d);
            assert_eq!(H::get(H::put(both)), both);
        }
    }

    #[test]
    fn masks_fit_their_words_and_do_not_overlap_the_flags() {
        fits::<Six>(16);
        fits::<Ten>(32);
        fits::<TwentySix>(64);
    }
}
