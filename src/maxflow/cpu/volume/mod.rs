//! Boykov–Kolmogorov max-flow on volumes (3D grids of 6, 10 or 26 neighbours), on
//! the blocked layout of Jamriška, Sýkora and Hornung for N-D grids: 32-bit node
//! indices in blocks of 64 nodes with power-of-two extents, neighbours at constant
//! offsets picked by bit masks, reverse arcs by `d ^ 1`, structure of arrays, terminal
//! pairs folded into one signed residual, saturation bits in a per-node state word.
//! Before the search, as in 2D: flow pushed along s → u → v → t, deficits moved towards
//! supply where both are common, the sink's roots passive where the source tree alone
//! should search; the trees then grow breadth first. Exact, single-threaded, and
//! dynamic: `update` keeps the flow of the last call and continues from it. Why each
//! choice, and what was tried instead: `src/maxflow/cpu/NOTES.md`, Volumes.

mod bk;
mod hood;
mod layout;
mod solver;
mod transport;

use crate::grid::{Mask, VolumeConnectivity, VolumeProblem};
use crate::maxflow::{CutSide, EngineError, EngineKind, Solution, SolveStats, VolumeEngine};
use hood::{Hood, Six, Ten, TwentySix};
use layout::Layout;
use solver::Solver;
use std::time::Instant;

/// Boykov–Kolmogorov max-flow on the blocked volume layout. Keeps the residual graph
/// of the last call for `update` and reuses its memory for the next problem of the
/// same shape.
#[derive(Default)]
pub struct CpuVolumeEngine {
    solver: Option<Box<dyn Backend>>,
    /// Whether the solver holds the finished residual graph of the last call.
    ready: bool,
}

impl CpuVolumeEngine {
    /// A new engine holding no problem yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Solves `problem` from scratch and keeps `kept(problem)` (the problem itself, or
    /// a copy where the caller keeps it) for a later update.
    fn solve_kept<P: std::borrow::Borrow<VolumeProblem>>(
        &mut self,
        problem: P,
        kept: impl FnOnce(P) -> VolumeProblem,
    ) -> Result<Solution, EngineError> {
        let start = Instant::now();
        self.ready = false;
        let solver = self.solver_for(problem.borrow())?;
        solver.load(problem.borrow())?;
        solver.keep(kept(problem));
        let loaded = Instant::now();
        solver.start_search();
        solver.run();
        let solution = finish(solver, start, loaded, None);
        self.ready = true;
        Ok(solution)
    }

    /// The solver for `problem`'s shape, reusing the current one when it fits.
    fn solver_for(&mut self, problem: &VolumeProblem) -> Result<&mut dyn Backend, EngineError> {
        if !self.solver.as_ref().is_some_and(|s| s.fits(problem)) {
            self.ready = false;
            let size = (problem.width(), problem.height(), problem.depth());
            let c = problem.connectivity();
            let k = c.number() as usize;
            let layout = Layout::new(size, k).ok_or_else(|| EngineError::TooLarge {
                engine: EngineKind::Cpu,
                reason: format!(
                    "{}x{}x{} padded to blocks of 64 needs more than 2^32 nodes",
                    size.0, size.1, size.2
                ),
            })?;
            self.solver = Some(match c {
                VolumeConnectivity::Six => Box::new(Solver::<Six>::new(layout)),
                VolumeConnectivity::Ten => Box::new(Solver::<Ten>::new(layout)),
                VolumeConnectivity::TwentySix => Box::new(Solver::<TwentySix>::new(layout)),
            });
        }
        Ok(self.solver.as_deref_mut().expect("solver was just set"))
    }
}

impl VolumeEngine for CpuVolumeEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Cpu
    }

    fn description(&self) -> String {
        "CPU (Boykov-Kolmogorov, blocked volume layout)".into()
    }

    fn cut_side(&self) -> CutSide {
        CutSide::ReachableFromSource
    }

    fn solve(&mut self, problem: &VolumeProblem) -> Result<Solution, EngineError> {
        self.solve_kept(problem, |p| p.clone())
    }

    fn solve_owned(&mut self, problem: VolumeProblem) -> Result<Solution, EngineError> {
        self.solve_kept(problem, |p| p)
    }

    /// Applies the changed capacities to the kept residual graph and continues from
    /// its flow (`stats.dynamic`), or solves afresh where nothing is kept or the shape
    /// changed. Both ways give the same flow and the same (canonical) cut.
    fn update(&mut self, problem: &VolumeProblem) -> Result<Solution, EngineError> {
        let kept = self.ready && self.solver.as_ref().is_some_and(|s| s.fits(problem));
        if !kept {
            return self.solve(problem);
        }
        let start = Instant::now();
        self.ready = false;
        let solver = self.solver.as_deref_mut().expect("a kept solver");
        let changed = solver.apply_changes(problem);
        let loaded = Instant::now();
        solver.start_search();
        solver.run();
        let solution = finish(solver, start, loaded, Some(changed));
        self.ready = true;
        Ok(solution)
    }
}

/// Reads the cut back and assembles the solution and its statistics (`changed`: the
/// arcs an update changed, `None` for a fresh solve).
fn finish(solver: &dyn Backend, start: Instant, loaded: Instant, changed: Option<u64>) -> Solution {
    let solved = Instant::now();
    let mask = solver.mask();
    let flow = solver.total_flow();
    let done = Instant::now();
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
    let (iterations, engine_bytes) = solver.stats();
    Solution {
        flow,
        mask,
        stats: SolveStats {
            upload_ms: ms(start, loaded),
            solve_ms: ms(loaded, solved),
            readback_ms: ms(solved, done),
            iterations,
            engine_bytes,
            dynamic: changed.is_some(),
            changed_arcs: changed.unwrap_or(0),
            ..SolveStats::default()
        },
    }
}

/// The solver operations the engine needs, independent of the neighbourhood.
trait Backend: Send {
    fn fits(&self, problem: &VolumeProblem) -> bool;
    fn load(&mut self, problem: &VolumeProblem) -> Result<(), EngineError>;
    fn keep(&mut self, problem: VolumeProblem);
    fn apply_changes(&mut self, problem: &VolumeProblem) -> u64;
    fn start_search(&mut self);
    fn run(&mut self);
    fn mask(&self) -> Mask;
    fn total_flow(&self) -> u64;
    /// Augmentations and bytes held.
    fn stats(&self) -> (u64, u64);
}

impl<H: Hood> Backend for Solver<H> {
    fn fits(&self, problem: &VolumeProblem) -> bool {
        Solver::fits(self, problem)
    }
    fn load(&mut self, problem: &VolumeProblem) -> Result<(), EngineError> {
        Solver::load(self, problem)
    }
    fn keep(&mut self, problem: VolumeProblem) {
        Solver::keep(self, problem)
    }
    fn apply_changes(&mut self, problem: &VolumeProblem) -> u64 {
        Solver::apply_changes(self, problem)
    }
    fn start_search(&mut self) {
        Solver::start_search(self)
    }
    fn run(&mut self) {
        Solver::run(self)
    }
    fn mask(&self) -> Mask {
        Solver::mask(self)
    }
    fn total_flow(&self) -> u64 {
        Solver::total_flow(self)
    }
    fn stats(&self) -> (u64, u64) {
        (self.iterations, self.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of 3 voxels along z: s → 0 (5), 0 → 1 (3), 1 → 2 (4), 2 → t (9).
    fn line(middle: i32) -> VolumeProblem {
        let c = VolumeConnectivity::Six;
        let mut edges = vec![vec![0; 3]; 6];
        edges[4][0] = 3;
        edges[4][1] = middle;
        VolumeProblem::from_arrays((1, 1, 3), c, vec![5, 0, 0], vec![0, 0, 9], edges).unwrap()
    }

    #[test]
    fn a_line_along_z_is_cut_at_its_bottleneck() {
        let s = CpuVolumeEngine::new().solve(&line(4)).unwrap();
        assert_eq!(s.flow, 3);
        assert_eq!(s.mask.data, vec![255, 0, 0]);
        assert_eq!((s.mask.width, s.mask.height), (1, 3));
    }

    #[test]
    fn update_cuts_back_flow_above_a_lowered_capacity() {
        let mut e = CpuVolumeEngine::new();
        e.solve(&line(4)).unwrap();
        // 1 → 2 carried 3; lowered to 1, the extra 2 goes back to the terminals
        let s = e.update(&line(1)).unwrap();
        assert!(s.stats.dynamic);
        assert_eq!((s.flow, s.stats.changed_arcs), (1, 1));
        assert_eq!(s.mask.data, vec![255, 255, 0]);
        let s = e.update(&line(1)).unwrap();
        assert_eq!(
            (s.flow, s.stats.changed_arcs, s.stats.iterations),
            (1, 0, 0)
        );
    }
}
