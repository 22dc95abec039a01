//! Boykov–Kolmogorov max-flow on the CPU, on the compact grid representation of
//! Jamriška, Sýkora and Hornung ("Cache-efficient graph cuts on structured grids"):
//! 32-bit node indices in an 8×8-blocked layout, neighbours at constant offsets,
//! reverse arcs by `d ^ 1`, structure of arrays, terminal pairs folded into one
//! signed residual, and saturation bits in a per-node state word. Before the search a
//! solve pushes flow along the s → u → v → t paths (`prepush`) and, as the terminal
//! counts suggest (`plan`), moves deficits towards supply (then, where many are
//! left, the supplies towards the deficits left; or supplies alone towards
//! deficits), a pass each (`transport`), or lets only the source tree search, so BK is
//! left the paths that need a search, and from sparse terminals (seed strokes) has
//! the trees grow breadth first (with no re-hanging on 8C); a path whose root's
//! terminal arc is its bottleneck also draws on neighbouring roots.
//! The search is single-threaded (a fresh frame's load and an update's new capacities
//! run in bands of block rows on every core, `band`),
//! exact, and dynamic: `update` continues from the kept residual
//! graph and trees. Why each heuristic was chosen, and what was tried instead:
//! `src/maxflow/cpu/NOTES.md`.

mod band;
mod bk;
mod budget;
#[cfg(debug_assertions)]
mod check;
mod dynamic;
#[cfg(test)]
mod fixtures;
mod kept;
mod layout;
mod load;
mod plan;
mod prepush;
mod ring;
mod solver;
mod state;
mod transport;
mod volume;

pub use volume::CpuVolumeEngine;

use super::pace::Pace;
use super::{Certificate, CutSide, Engine, EngineError, EngineKind, Solution, SolveStats};
use crate::grid::{ChangedArcs, Connectivity, GridProblem, Mask, ProblemChanges};
use dynamic::{Changed, Rects};
use layout::Layout;
use solver::Solver;
use state::{Eight, Four, Topology};
use std::time::{Duration, Instant};

/// Boykov–Kolmogorov max-flow on the compact blocked grid layout. Keeps the residual
/// graph and search trees of the last call for `update` and reuses its memory for
/// the next problem of the same shape.
#[derive(Default)]
pub struct CpuEngine {
    solver: Option<Box<dyn Backend>>,
    /// Whether the solver holds the finished residual graph of the last call.
    ready: bool,
    /// `update` continues from the kept graph even where solving afresh is faster.
    #[cfg(feature = "experiments")]
    always_resume: bool,
    /// What continuing and solving afresh have cost on this stream.
    pace: Pace,
    /// How long a call may take before its search stops ([`Engine::set_budget`]).
    budget: Option<Duration>,
    /// What the last stopped call's certificate and cut took after its search: the
    /// next search stops that much before the budget ends, so the call ends within it.
    after_stop: Duration,
}

impl CpuEngine {
    /// A new engine holding no problem yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `update` continue from the kept residual graph even where solving afresh
    /// has been faster (by default it then solves afresh): for tests of the
    /// reparameterisation and for measuring what the reuse costs.
    #[cfg(feature = "experiments")]
    pub fn set_always_resume(&mut self, on: bool) {
        self.always_resume = on;
    }

    /// Applies `problem`'s changes to the kept residual graph (only those `changed`
    /// says, where given) and continues its search.
    fn resume(&mut self, problem: &GridProblem, changed: Option<&Changed>) -> Solution {
        let start = Instant::now();
        self.ready = false;
        let deadline = self.deadline(start);
        let solver = self.solver.as_deref_mut().expect("a kept solver");
        solver.set_deadline(deadline);
        let changed = match changed {
            Some(changed) => solver.apply_changes_in(problem, changed),
            None => solver.apply_changes(problem),
        };
        let loaded = Instant::now();
        solver.reuse_trees();
        solver.run();
        let solved = Instant::now();
        let solution = finish(solver, start, loaded, solved, true, changed);
        self.ready = true;
        self.note_stop(&solution);
        solution
    }

    /// When a call that started at `start` must stop searching: its budget, less what
    /// the certificate and cut took after the last stop.
    fn deadline(&self, start: Instant) -> Option<Instant> {
        self.budget
            .map(|b| start + b.saturating_sub(self.after_stop))
    }

    /// Keeps what a stopped call's certificate and cut took, for the next deadline.
    fn note_stop(&mut self, solution: &Solution) {
        if solution.stats.stopped.is_some() {
            self.after_stop = Duration::from_secs_f64(solution.stats.readback_ms / 1e3);
        }
    }

    /// The solver for `problem`'s shape, reusing the current one when it fits.
    fn solver_for(&mut self, problem: &GridProblem) -> Result<&mut dyn Backend, EngineError> {
        if !self.solver.as_ref().is_some_and(|s| s.fits(problem)) {
            self.ready = false;
            self.solver = None;
            // what another shape cost says nothing of this one
            self.pace.reset();
            let layout = Layout::new(problem.width(), problem.height()).ok_or_else(|| {
                EngineError::TooLarge {
                    engine: EngineKind::Cpu,
                    reason: format!(
                        "{}x{} padded to 8x8 blocks needs more than 2^32 nodes",
                        problem.width(),
                        problem.height()
                    ),
                }
            })?;
            self.solver = Some(match problem.connectivity() {
                Connectivity::Four => Box::new(Solver::<Four>::new(layout)),
                Connectivity::Eight => Box::new(Solver::<Eight>::new(layout)),
            });
        }
        Ok(self.solver.as_deref_mut().expect("solver was just set"))
    }
}

impl Engine for CpuEngine {
    fn kind(&self) -> EngineKind {
        super::EngineKind::Cpu
    }

    fn description(&self) -> String {
        "CPU (Boykov-Kolmogorov, blocked grid layout)".into()
    }

    fn cut_side(&self) -> CutSide {
        CutSide::ReachableFromSource
    }

    fn set_budget(&mut self, budget: Option<Duration>) -> bool {
        self.budget = budget;
        true
    }

    fn solve(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        let start = Instant::now();
        self.ready = false;
        let deadline = self.deadline(start);
        let solver = self.solver_for(problem)?;
        solver.set_deadline(deadline);
        solver.load(problem)?;
        let loaded = Instant::now();
        solver.push_short_paths();
        solver.plan_search();
        solver.run();
        let solved = Instant::now();
        let solution = finish(solver, start, loaded, solved, false, 0);
        self.ready = true;
        self.note_stop(&solution);
        Ok(solution)
    }

    /// Continues from the kept residual graph, or solves afresh (`stats.dynamic`
    /// false) when nothing is kept, the shape changed, most capacities changed (a
    /// moving camera, a σ estimated anew), or a fresh solve has been the cheaper way
    /// on this stream (a running estimate of both, the other way probed now and then:
    /// [`Pace`]). Both ways give the same flow and cut.
    fn update(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        self.update_in(problem, None)
    }

    /// [`Self::update`] reading only the changed tiles; a frame that changed nearly
    /// all of its pixels is judged as `update` judges any frame.
    fn update_changed(
        &mut self,
        problem: &GridProblem,
        changes: ProblemChanges<'_>,
    ) -> Result<Solution, EngineError> {
        if changes.any.area() * 4 > problem.pixels() as u64 * 3 {
            return self.update_in(problem, None);
        }
        let fits =
            |a: &&ChangedArcs| a.fits(problem.width(), problem.height(), problem.connectivity());
        let changed = match changes.arcs.filter(fits) {
            Some(arcs) => Changed::Arcs(arcs),
            None => Changed::Rects(Rects {
                terminals: changes.any.rects(1),
                edges: changes.edges.rects(1),
            }),
        };
        self.update_in(problem, Some(&changed))
    }
}

impl CpuEngine {
    /// Continues from the kept graph where that pays ([`Engine::update`]), applying
    /// only the changes `changed` says where given (none elsewhere).
    fn update_in(
        &mut self,
        problem: &GridProblem,
        changed: Option<&Changed>,
    ) -> Result<Solution, EngineError> {
        let kept = self
            .solver
            .as_ref()
            .filter(|s| self.ready && s.fits(problem));
        let resume = match kept {
            None => false,
            #[cfg(feature = "experiments")]
            Some(_) if self.always_resume => true,
            Some(_) if changed.is_some() => self.pace.resume(),
            Some(s) => !s.changed_throughout(problem) && self.pace.resume(),
        };
        let solution = if resume {
            self.resume(problem, changed)
        } else {
            self.solve(problem)?
        };
        let s = &solution.stats;
        self.pace
            .record(resume, s.upload_ms + s.solve_ms + s.readback_ms);
        Ok(solution)
    }
}

/// Reads the cut back and assembles the solution and its statistics.
fn finish(
    solver: &mut dyn Backend,
    start: Instant,
    loaded: Instant,
    solved: Instant,
    dynamic: bool,
    changed_arcs: u64,
) -> Solution {
    let (flow, mask, stopped) = if solver.stopped() {
        let (mask, gap) = solver.budgeted_cut();
        let pushed = solver.flow_so_far();
        let flow = pushed.max(0) as u64;
        let cut = (pushed + gap as i64) as u64;
        (flow, mask, Some(Certificate { flow, cut }))
    } else {
        (solver.total_flow(), solver.mask(), None)
    };
    let done = Instant::now();
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
    let (iterations, engine_bytes, activity) = solver.stats();
    Solution {
        flow,
        mask,
        stats: SolveStats {
            upload_ms: ms(start, loaded),
            solve_ms: ms(loaded, solved),
            readback_ms: ms(solved, done),
            iterations,
            engine_bytes,
            dynamic,
            changed_arcs,
            activity: Some(activity),
            stopped,
            ..SolveStats::default()
        },
    }
}

/// The solver operations the engine needs, independent of the topology.
trait Backend: Send {
    fn fits(&self, problem: &GridProblem) -> bool;
    fn load(&mut self, problem: &GridProblem) -> Result<(), EngineError>;
    fn changed_throughout(&self, problem: &GridProblem) -> bool;
    fn apply_changes(&mut self, problem: &GridProblem) -> u64;
    fn apply_changes_in(&mut self, problem: &GridProblem, changed: &Changed) -> u64;
    fn push_short_paths(&mut self);
    fn plan_search(&mut self);
    fn reuse_trees(&mut self);
    fn run(&mut self);
    fn mask(&mut self) -> Mask;
    fn total_flow(&self) -> u64;
    fn flow_so_far(&self) -> i64;
    fn set_deadline(&mut self, deadline: Option<Instant>);
    /// Whether the last search stopped at its deadline.
    fn stopped(&self) -> bool;
    /// The cut of a stopped search's state, and its capacity minus the flow.
    fn budgeted_cut(&self) -> (Mask, u64);
    /// Augmentations, bytes held, block activity.
    fn stats(&self) -> (u64, u64, super::BlockActivity);
}

impl<T: Topology> Backend for Solver<T> {
    fn fits(&self, problem: &GridProblem) -> bool {
        Solver::fits(self, problem)
    }
    fn load(&mut self, problem: &GridProblem) -> Result<(), EngineError> {
        Solver::load(self, problem)
    }
    fn changed_throughout(&self, problem: &GridProblem) -> bool {
        Solver::changed_throughout(self, problem)
    }
    fn apply_changes(&mut self, problem: &GridProblem) -> u64 {
        Solver::apply_changes(self, problem)
    }
    fn apply_changes_in(&mut self, problem: &GridProblem, changed: &Changed) -> u64 {
        Solver::apply_changes_in(self, problem, changed)
    }
    fn push_short_paths(&mut self) {
        Solver::push_short_paths(self)
    }
    fn plan_search(&mut self) {
        Solver::plan_search(self)
    }
    fn reuse_trees(&mut self) {
        Solver::reuse_trees(self)
    }
    fn run(&mut self) {
        Solver::run(self)
    }
    fn mask(&mut self) -> Mask {
        Solver::mask(self)
    }
    fn total_flow(&self) -> u64 {
        Solver::total_flow(self)
    }
    fn flow_so_far(&self) -> i64 {
        Solver::flow_so_far(self)
    }
    fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }
    fn stopped(&self) -> bool {
        self.stopped
    }
    fn budgeted_cut(&self) -> (Mask, u64) {
        Solver::budgeted_cut(self)
    }
    fn stats(&self) -> (u64, u64, super::BlockActivity) {
        (self.iterations, self.bytes(), self.block_activity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Direction, cut_capacity};

    /// The worked example of the data's FORMAT.md.
    fn worked_example() -> GridProblem {
        let mut edges = vec![vec![0; 2]; 4];
        edges[Direction::East.index()][0] = 3;
        GridProblem::from_arrays(2, 1, Connectivity::Four, vec![5, 0], vec![1, 4], edges).unwrap()
    }

    /// A stopped call's certificate and cut are paid for out of the next call's budget:
    /// its search stops that much earlier; a call that did not stop leaves that as it
    /// was, and without a budget there is no deadline.
    #[test]
    fn the_next_search_stops_early_by_what_the_last_stop_took_after_it() {
        let p = fixtures::random_grid(7, 200, 150, Connectivity::Eight);
        let mut engine = CpuEngine::new();
        let budget = Duration::from_millis(50);
        engine.set_budget(Some(budget));
        let start = Instant::now();
        assert_eq!(
            engine.deadline(start),
            Some(start + budget),
            "nothing stopped yet"
        );
        engine.budget = Some(Duration::ZERO);
        let s = engine.solve(&p).unwrap();
        assert!(s.stats.stopped.is_some());
        let after = engine.after_stop;
        assert!(after > Duration::ZERO);
        assert_eq!(after, Duration::from_secs_f64(s.stats.readback_ms / 1e3));
        engine.set_budget(Some(budget));
        assert_eq!(engine.deadline(start), Some(start + budget - after));
        engine.set_budget(Some(after / 2));
        assert_eq!(
            engine.deadline(start),
            Some(start),
            "a budget the stop exceeds"
        );
        engine.set_budget(None);
        assert!(engine.solve(&p).unwrap().stats.stopped.is_none());
        assert_eq!(engine.deadline(start), None);
        assert_eq!(
            engine.after_stop, after,
            "a finished call keeps the estimate"
        );
    }

    #[test]
    fn worked_example_flow_and_reachable_mask() {
        let p = worked_example();
        let s = CpuEngine::new().solve(&p).unwrap();
        assert_eq!(s.flow, 4);
        assert_eq!(s.mask.data, vec![255, 0]);
        assert_eq!(cut_capacity(&p, &s.mask), 4);
        // Folding pushed s→1→t up front and the short-path sweep s→1→2→t: BK had
        // nothing left to augment.
        assert_eq!(s.stats.iterations, 0);
    }

    #[test]
    fn update_with_identical_problem_keeps_the_answer_without_work() {
        let p = worked_example();
        let mut e = CpuEngine::new();
        e.solve(&p).unwrap();
        let s = e.update(&p).unwrap();
        assert!(s.stats.dynamic);
        assert_eq!(
            (s.flow, s.stats.changed_arcs, s.stats.iterations),
            (4, 0, 0)
        );
        assert_eq!(s.mask.data, vec![255, 0]);
    }

    #[test]
    #[cfg(feature = "experiments")]
    fn update_below_carried_flow_reparameterises() {
        let mut e = CpuEngine::new();
        // One arc of two changes: by default that is reason to solve afresh.
        e.set_always_resume(true);
        e.solve(&worked_example()).unwrap();
        // The arc 1→2 carried 3; cut it to 1.
        let mut edges = vec![vec![0; 2]; 4];
        edges[Direction::East.index()][0] = 1;
        let p = GridProblem::from_arrays(2, 1, Connectivity::Four, vec![5, 0], vec![1, 4], edges)
            .unwrap();
        let s = e.update(&p).unwrap();
        assert_eq!(s.flow, 2);
        assert_eq!(s.mask.data, vec![255, 0]);
        assert_eq!(s.stats.changed_arcs, 1);
    }

    #[test]
    fn update_solves_afresh_when_most_capacities_changed() {
        let grid = |scale: i32| {
            let (w, h) = (20, 10);
            let n = (w * h) as usize;
            let edges = Connectivity::Four
                .directions()
                .iter()
                .map(|&d| {
                    let probe = GridProblem::zeros(w, h, Connectivity::Four).unwrap();
                    (0..n)
                        .map(|i| {
                            let (x, y) = (i as u32 % w, i as u32 / w);
                            let inside = probe.neighbour(x, y, d).is_some();
                            if inside {
                                scale * (1 + (i % 5) as i32)
                            } else {
                                0
                            }
                        })
                        .collect()
                })
                .collect();
            let source = (0..n)
                .map(|i| if i % w as usize == 0 { 50 } else { 0 })
                .collect();
            let sink = (0..n)
                .map(|i| if i % w as usize == 19 { 50 } else { 0 })
                .collect();
            GridProblem::from_arrays(w, h, Connectivity::Four, source, sink, edges).unwrap()
        };
        let mut e = CpuEngine::new();
        e.solve(&grid(1)).unwrap();
        let all_new = grid(2);
        let s = e.update(&all_new).unwrap();
        assert!(!s.stats.dynamic, "every neighbour capacity changed");
        assert_eq!(s.flow, CpuEngine::new().solve(&all_new).unwrap().flow);
        // The same problem again: nothing changed, so the kept graph is reused.
        let s = e.update(&all_new).unwrap();
        assert!(s.stats.dynamic);
        assert_eq!(s.stats.changed_arcs, 0);
    }

    #[test]
    fn shape_change_falls_back_to_solve() {
        let mut e = CpuEngine::new();
        e.solve(&worked_example()).unwrap();
        let p = GridProblem::zeros(3, 3, Connectivity::Eight).unwrap();
        let s = e.update(&p).unwrap();
        assert!(!s.stats.dynamic);
        assert_eq!(s.flow, 0);
        assert_eq!(s.mask.count_source(), 0);
    }
}
