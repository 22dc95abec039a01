//! The per-node state word and the two grid topologies.
//!
//! One small word per node holds what growth and adoption need: search-tree
//! membership, the direction of the parent, two flags, and saturation bits telling
//! which outgoing and which incoming neighbour arcs still have residual capacity. The
//! hot search loops therefore read this word only and touch the residual capacities
//! just while augmenting.

use crate::grid::Connectivity;

/// Parent field: a direction (0..8) towards the parent, or one of the codes below.
pub(super) const PARENT: u32 = 0x0F;
/// Parent code: the node hangs directly from its terminal.
pub(super) const TERMINAL: u32 = 8;
/// Parent code: the node lost its parent and waits for adoption.
pub(super) const ORPHAN: u32 = 9;
/// Tree field.
pub(super) const TREE: u32 = 0x30;
/// Tree field: in no tree.
pub(super) const FREE: u32 = 0x00;
/// Tree field: in the source tree S.
pub(super) const SOURCE: u32 = 0x10;
/// Tree field: in the sink tree T.
pub(super) const SINK: u32 = 0x20;
/// Flag: queued for growth (or being grown).
pub(super) const ACTIVE: u32 = 0x40;
/// Flag with two phase-local uses, clear outside them: during adoption "origin
/// verified in this adoption phase" (BK's timestamp), during an update "capacities
/// changed, pending re-initialisation".
pub(super) const MARK: u32 = 0x80;
/// First bit of the saturation masks.
const MASKS: u32 = 8;

/// A neighbourhood with its state-word type and heuristics, fixed at compile time so
/// the solver is specialised for each.
pub(super) trait Topology: Send + 'static {
    /// Arcs per node (4 or 8).
    const K: usize;
    /// log2 of `K`.
    const SHIFT: u32;
    /// Whether adoption picks the parent closest to the terminal (BK's distance
    /// heuristic; needs one `u32` per node) instead of the first valid one.
    const MARKING: bool;
    /// Whether growth re-parents same-tree neighbours that are closer to the terminal
    /// (BK's marking heuristic in growth; needs timestamps and distances), where the
    /// trees grow by the sweep (see `Solver::run`).
    const GROW_MARK: bool;
    /// Storage of the state word (16 bits suffice for 4 arcs).
    type Word: Copy + Default + Send + Sync + 'static;
    /// Word → its bits.
    fn get(w: Self::Word) -> u32;
    /// Bits → word.
    fn put(v: u32) -> Self::Word;
    /// The matching grid connectivity.
    fn connectivity() -> Connectivity;
}

/// 4-connected grids: 16-bit state word, first valid parent in adoption.
pub(super) struct Four;

/// 8-connected grids: 32-bit state word, distance heuristic in adoption.
pub(super) struct Eight;

impl Topology for Four {
    const K: usize = 4;
    const SHIFT: u32 = 2;
    const MARKING: bool = false;
    const GROW_MARK: bool = false;
    type Word = u16;
    #[inline(always)]
    fn get(w: u16) -> u32 {
        w as u32
    }
    #[inline(always)]
    fn put(v: u32) -> u16 {
        v as u16
    }
    fn connectivity() -> Connectivity {
        Connectivity::Four
    }
}

impl Topology for Eight {
    const K: usize = 8;
    const SHIFT: u32 = 3;
    const MARKING: bool = true;
    const GROW_MARK: bool = true;
    type Word = u32;
    #[inline(always)]
    fn get(w: u32) -> u32 {
        w
    }
    #[inline(always)]
    fn put(v: u32) -> u32 {
        v
    }
    fn connectivity() -> Connectivity {
        Connectivity::Eight
    }
}

/// Bit set while the arc leaving the node in direction `d` has residual capacity.
#[inline(always)]
pub(super) fn out_bit<T: Topology>(d: usize) -> u32 {
    1 << (MASKS as usize + d)
}

/// Bit set while the arc entering the node from its neighbour in direction `d` has
/// residual capacity.
#[inline(always)]
pub(super) fn in_bit<T: Topology>(d: usize) -> u32 {
    1 << (MASKS as usize + T::K + d)
}

/// Directions whose outgoing arcs have residual capacity.
#[inline(always)]
pub(super) fn out_mask<T: Topology>(w: u32) -> u32 {
    (w >> MASKS) & ((1 << T::K) - 1)
}

/// Directions whose incoming arcs have residual capacity.
#[inline(always)]
pub(super) fn in_mask<T: Topology>(w: u32) -> u32 {
    (w >> (MASKS as usize + T::K)) & ((1 << T::K) - 1)
}

/// Directions of the residual arcs out of a node (`outgoing`) or into it: those a
/// source tree grows along from it, or a sink tree's.
#[inline(always)]
pub(super) fn growth_mask<T: Topology>(w: u32, outgoing: bool) -> u32 {
    if outgoing {
        out_mask::<T>(w)
    } else {
        in_mask::<T>(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_fit_their_words_and_do_not_overlap_the_tag() {
        for d in 0..4 {
            assert!(in_bit::<Four>(d) <= u16::MAX as u32);
            assert_eq!(out_mask::<Four>(out_bit::<Four>(d)), 1 << d);
            assert_eq!(in_mask::<Four>(in_bit::<Four>(d)), 1 << d);
            assert_eq!(in_mask::<Four>(out_bit::<Four>(d)), 0);
        }
        for d in 0..8 {
            let both = out_bit::<Eight>(d) | in_bit::<Eight>(d);
            assert_eq!(both & (PARENT | TREE | ACTIVE | MARK), 0);
            assert_eq!(out_mask::<Eight>(both), 1 << d);
            assert_eq!(in_mask::<Eight>(both), 1 << d);
        }
    }
}
