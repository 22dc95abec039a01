//! The CPU engine against a reference max-flow: random small grids (4C and 8C,
//! degenerate shapes, zero and near-2^31 capacities, pixels with both terminal arcs),
//! dynamic updates against fresh solves, and the shared instances against their
//! manifest flows and reference masks.

mod common;

use common::generators::{connectivity, perturb, perturb_backward, random_problem, symmetrise};
use common::grids::{grids_dir, manifest};
use common::reference::{max_flow, reference_flow};
use common::rng::Rng;
use livecut::grid::{Connectivity, GridProblem, Mask, cut_capacity};
use livecut::maxflow::cpu::CpuEngine;
use livecut::maxflow::{CutSide, Engine, Solution};
use proptest::prelude::*;

/// Checks `s` against the reference solution of `p`.
fn check_against_reference(p: &GridProblem, s: &Solution) -> Result<(), TestCaseError> {
    let r = max_flow(p);
    prop_assert_eq!(s.flow, r.flow, "flow");
    prop_assert_eq!(cut_capacity(p, &s.mask), s.flow, "cut capacity of the mask");
    let expected = Mask::from_fn(p.width(), p.height(), |i| r.reachable[i]);
    prop_assert_eq!(&s.mask, &expected, "mask = pixels reachable from s");
    Ok(())
}

/// Grid side: 1 often (1×N and N×1 grids), else up to 12.
fn side() -> impl Strategy<Value = u32> {
    prop_oneof![1 => Just(1u32), 5 => 1u32..=12]
}

/// A grid shape (width, height, 8-connected) and a seed for its capacities.
fn shape() -> impl Strategy<Value = (u32, u32, bool, u64)> {
    (side(), side(), any::<bool>(), any::<u64>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn solve_matches_reference_4c(w in side(), h in side(), seed in any::<u64>()) {
        let p = random_problem(&mut Rng(seed), w, h, Connectivity::Four);
        let s = CpuEngine::new().solve(&p).unwrap();
        check_against_reference(&p, &s)?;
    }

    #[test]
    fn solve_matches_reference_8c(w in side(), h in side(), seed in any::<u64>()) {
        let p = random_problem(&mut Rng(seed), w, h, Connectivity::Eight);
        let s = CpuEngine::new().solve(&p).unwrap();
        check_against_reference(&p, &s)?;
    }
}

/// `p`'s neighbour capacities with the terminal capacities `source` and `sink`.
fn with_terminals(p: &GridProblem, source: Vec<i32>, sink: Vec<i32>) -> GridProblem {
    let edges = p
        .connectivity()
        .directions()
        .iter()
        .map(|&d| p.edges(d).to_vec())
        .collect();
    GridProblem::from_arrays(p.width(), p.height(), p.connectivity(), source, sink, edges)
        .expect("same shape")
}

/// `p` with s feeding at most one pixel in sixteen: the sink pulls many times more
/// nodes than s feeds, as on an object over a large background (the engine then
/// leaves the sink tree's roots passive).
fn sink_heavy(rng: &mut Rng, p: &GridProblem) -> GridProblem {
    let source = p
        .source()
        .iter()
        .map(|&c| if rng.below(16) == 0 { c } else { 0 })
        .collect();
    let sink = p.sink().iter().map(|&c| c.max(1)).collect();
    with_terminals(p, source, sink)
}

/// `p` with its terminal arcs kept on about one pixel in twenty-four, as seed strokes
/// give (the engine then grows its trees breadth first from them).
fn seeded(rng: &mut Rng, p: &GridProblem) -> GridProblem {
    let mut keep = |c: &i32| if rng.below(24) == 0 { *c } else { 0 };
    let source = p.source().iter().map(&mut keep).collect();
    let sink = p.sink().iter().map(&mut keep).collect();
    with_terminals(p, source, sink)
}

/// Solves `variant` of a random problem of the given shape (sides at least 4) and
/// checks it against the reference.
fn check_variant(
    (w, h, eight, seed): (u32, u32, bool, u64),
    variant: fn(&mut Rng, &GridProblem) -> GridProblem,
) -> Result<(), TestCaseError> {
    let mut rng = Rng(seed);
    let p = random_problem(&mut rng, w.max(4), h.max(4), connectivity(eight));
    let p = variant(&mut rng, &p);
    let s = CpuEngine::new().solve(&p).unwrap();
    check_against_reference(&p, &s)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 800, ..ProptestConfig::default() })]

    #[test]
    fn sink_heavy_problems_match_reference(shape in shape()) {
        check_variant(shape, sink_heavy)?;
    }

    #[test]
    fn seeded_problems_match_reference(shape in shape()) {
        check_variant(shape, seeded)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    /// One engine solving unrelated problems of one shape in a row (its arrays are
    /// then overwritten, not cleared) gives each one's reference answer.
    #[test]
    fn one_engine_solves_problems_of_one_shape_in_a_row((w, h, eight, seed) in shape()) {
        let mut rng = Rng(seed);
        let mut engine = CpuEngine::new();
        for _ in 0..3 {
            let p = random_problem(&mut rng, w, h, connectivity(eight));
            let s = engine.solve(&p).unwrap();
            check_against_reference(&p, &s)?;
        }
    }
}

/// An engine that has solved `p` and continues from the kept graph at every change
/// rate.
fn resuming_engine(p: &GridProblem) -> CpuEngine {
    let mut engine = CpuEngine::new();
    engine.set_always_resume(true);
    engine.solve(p).unwrap();
    engine
}

/// Checks that `s`, an update of `p` that continued from the kept graph, gives the
/// flow and mask of a fresh solve, which it returns.
fn check_resumed_update(p: &GridProblem, s: &Solution) -> Result<Solution, TestCaseError> {
    prop_assert!(s.stats.dynamic);
    let fresh = CpuEngine::new().solve(p).unwrap();
    prop_assert_eq!(s.flow, fresh.flow, "update vs fresh flow");
    prop_assert_eq!(&s.mask, &fresh.mask, "update vs fresh mask");
    Ok(fresh)
}

/// A chain of updates: a grid shape from `shape`, 1 to 4 steps and a change rate from
/// `rates`.
fn update_chain(
    shape: impl Strategy<Value = (u32, u32, bool, u64)>,
    rates: impl Strategy<Value = u64>,
) -> impl Strategy<Value = ((u32, u32, bool, u64), usize, u64)> {
    (shape, 1usize..=4, rates)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// Several consecutive updates with random changes (increases, decreases to
    /// zero, swapped terminals) give the flow and mask of a fresh solve and of the
    /// reference, with the tracked flow equal to the mask's cut capacity; the
    /// residual graph is reused at every change rate, and the default engine (which
    /// solves afresh when most arcs changed) agrees.
    #[test]
    fn updates_match_fresh_solves(
        ((w, h, eight, seed), steps, rate) in
            update_chain(shape(), prop_oneof![Just(3u64), Just(15), Just(50), Just(100)]),
    ) {
        let mut rng = Rng(seed);
        let mut p = random_problem(&mut rng, w, h, connectivity(eight));
        let mut engine = resuming_engine(&p);
        let mut auto = CpuEngine::new();
        auto.solve(&p).unwrap();
        for _ in 0..steps {
            p = perturb(&mut rng, &p, rate);
            let s = engine.update(&p).unwrap();
            let fresh = check_resumed_update(&p, &s)?;
            check_against_reference(&p, &s)?;
            let a = auto.update(&p).unwrap();
            prop_assert_eq!(a.flow, fresh.flow, "default update vs fresh flow");
            prop_assert_eq!(&a.mask, &fresh.mask, "default update vs fresh mask");
        }
    }
}

/// A grid shape as [`shape`], but sometimes wider than the stretches an update
/// compares at once (64 pairs).
fn wide_shape() -> impl Strategy<Value = (u32, u32, bool, u64)> {
    let width = prop_oneof![1 => 1u32..=12, 1 => 60u32..=140];
    (width, 1u32..=5, any::<bool>(), any::<u64>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Symmetric problems (as smoothness terms are) updated with changes that keep
    /// them symmetric, change only backward capacities, or break the symmetry: an
    /// update passes over the stretches it finds unchanged and must still give a
    /// fresh solve's answer.
    #[test]
    fn symmetric_problems_updated_match_fresh_solves(
        ((w, h, eight, seed), steps, rate) in
            update_chain(wide_shape(), prop_oneof![Just(1u64), Just(5), Just(30)]),
    ) {
        let mut rng = Rng(seed);
        let mut p = symmetrise(&random_problem(&mut rng, w, h, connectivity(eight)));
        let mut engine = resuming_engine(&p);
        for _ in 0..steps {
            p = match rng.below(3) {
                0 => symmetrise(&perturb(&mut rng, &p, rate)),
                1 => perturb_backward(&mut rng, &p, rate),
                _ => perturb(&mut rng, &p, rate),
            };
            check_resumed_update(&p, &engine.update(&p).unwrap())?;
        }
    }
}

#[test]
fn one_engine_reused_across_shapes_and_connectivities() {
    let mut rng = Rng(7);
    let mut engine = CpuEngine::new();
    for round in 0..60 {
        let (w, h) = (1 + rng.below(12) as u32, 1 + rng.below(12) as u32);
        let p = random_problem(&mut rng, w, h, connectivity(round % 3 == 0));
        // Alternate solve and update: an update after a shape change is a solve.
        let s = if round % 2 == 0 {
            engine.solve(&p)
        } else {
            engine.update(&p)
        }
        .unwrap();
        assert_eq!(s.flow, reference_flow(&p), "round {round}");
    }
}

#[test]
fn degenerate_problems() {
    let mut engine = CpuEngine::new();
    assert_eq!(engine.cut_side(), CutSide::ReachableFromSource);
    for (w, h, c) in [
        (1, 1, Connectivity::Four),
        (1, 9, Connectivity::Eight),
        (9, 1, Connectivity::Four),
    ] {
        let p = GridProblem::zeros(w, h, c).unwrap();
        let s = engine.solve(&p).unwrap();
        assert_eq!((s.flow, s.mask.count_source()), (0, 0));
        // Every pixel tied to s only: all reachable, no flow.
        let n = (w * h) as usize;
        let edges = vec![vec![0; n]; c.number() as usize];
        let p = GridProblem::from_arrays(w, h, c, vec![i32::MAX; n], vec![0; n], edges).unwrap();
        let s = engine.update(&p).unwrap();
        assert_eq!((s.flow, s.mask.count_source()), (0, n));
        // Both terminal arcs at the maximum everywhere: flow is their sum.
        let edges = vec![vec![0; n]; c.number() as usize];
        let p =
            GridProblem::from_arrays(w, h, c, vec![i32::MAX; n], vec![i32::MAX; n], edges).unwrap();
        let s = engine.update(&p).unwrap();
        assert_eq!(s.flow, n as u64 * i32::MAX as u64);
        assert_eq!(s.mask.count_source(), 0);
    }
}

#[test]
fn memory_stays_under_40_bytes_per_pixel_for_4c() {
    let p = random_problem(&mut Rng(3), 320, 240, Connectivity::Four);
    let s = CpuEngine::new().solve(&p).unwrap();
    let per_pixel = s.stats.engine_bytes as f64 / p.pixels() as f64;
    assert!(per_pixel <= 40.0, "{per_pixel:.1} bytes per pixel");
}

#[test]
fn statistics_describe_the_call() {
    let p = random_problem(&mut Rng(11), 20, 13, Connectivity::Eight);
    let mut engine = CpuEngine::new();
    let s = engine.solve(&p).unwrap();
    assert!(!s.stats.dynamic);
    assert!(s.stats.iterations > 0);
    let a = s.stats.activity.expect("activity recorded");
    assert_eq!(
        (a.block_width, a.block_height, a.columns, a.rows),
        (8, 8, 3, 2)
    );
    assert_eq!(a.counts.len(), 6);
    assert!(a.counts.iter().all(|&c| c > 0));
    let s = engine.update(&p).unwrap();
    assert!(s.stats.dynamic);
    assert_eq!((s.stats.changed_arcs, s.stats.iterations), (0, 0));
}

#[test]
fn shared_instances_give_manifest_flows_and_reference_masks() {
    let Some(dir) = grids_dir() else { return };
    let mut engine = CpuEngine::new();
    for (file, flow) in manifest(&dir) {
        let p = livecut::maxflow::dimacs::read_path(&dir.join(&file)).unwrap();
        let s = engine.solve(&p).unwrap();
        assert_eq!(s.flow, flow, "{file}: flow");
        assert_eq!(cut_capacity(&p, &s.mask), flow, "{file}: cut capacity");
        let mask_path = dir.join(file.replace(".max.gz", ".mask.png"));
        let reference = Mask::read_png(&mask_path).unwrap();
        assert!(
            s.mask == reference,
            "{file}: mask differs from the reference"
        );
    }
}

#[test]
fn shared_instances_updated_like_video_frames_match_fresh_solves() {
    let Some(dir) = grids_dir() else { return };
    let mut rng = Rng(42);
    for file in [
        "coins_384x303_4c.max.gz",
        "camera_320x240_8c.max.gz",
        "seeds_disk_320x240_4c.max.gz",
    ] {
        let mut p = livecut::maxflow::dimacs::read_path(&dir.join(file)).unwrap();
        let mut engine = CpuEngine::new();
        engine.solve(&p).unwrap();
        for rate in [1, 10] {
            p = perturb(&mut rng, &p, rate);
            let s = engine.update(&p).unwrap();
            let fresh = CpuEngine::new().solve(&p).unwrap();
            assert_eq!(s.flow, fresh.flow, "{file}: flow after update");
            assert_eq!(
                cut_capacity(&p, &s.mask),
                s.flow,
                "{file}: cut capacity after update"
            );
            assert!(s.mask == fresh.mask, "{file}: mask after update");
        }
    }
}

/// Checks a call made under a budget against `p`'s maximum flow `exact`: stopped, its
/// certificate is its mask's cut and brackets the maximum flow; not stopped, it is
/// exact. Returns whether it stopped.
fn check_budgeted(p: &GridProblem, s: &Solution, exact: &Solution) -> Result<bool, TestCaseError> {
    let Some(c) = s.stats.stopped else {
        prop_assert_eq!(s.flow, exact.flow, "a call that ran to the end is exact");
        prop_assert_eq!(&s.mask, &exact.mask);
        return Ok(false);
    };
    prop_assert_eq!(c.flow, s.flow, "the certificate's flow is the call's");
    prop_assert_eq!(
        cut_capacity(p, &s.mask),
        c.cut,
        "the certificate's cut is the mask's"
    );
    prop_assert!(
        c.flow <= exact.flow && exact.flow <= c.cut,
        "{c:?} vs {}",
        exact.flow
    );
    Ok(true)
}

/// Solves and updates stopped at once by a zero budget return cuts whose
/// certificates hold, and the calls after them continue where they stopped: the
/// first call without a budget gives the exact flow and mask.
#[test]
fn budgeted_calls_certify_their_cuts_and_the_next_calls_finish_them() {
    let mut stops = 0;
    for seed in 0..120u64 {
        let mut rng = Rng(seed);
        let (w, h) = (8 + rng.below(40) as u32, 8 + rng.below(40) as u32);
        let mut p = random_problem(&mut rng, w, h, connectivity(seed % 2 == 0));
        let mut engine = CpuEngine::new();
        engine.set_always_resume(true);
        assert!(engine.set_budget(Some(std::time::Duration::ZERO)));
        let mut run = || -> Result<usize, TestCaseError> {
            let mut stopped = 0;
            let s = engine.solve(&p)?;
            stopped += usize::from(check_budgeted(&p, &s, &CpuEngine::new().solve(&p)?)?);
            for _ in 0..3 {
                p = perturb(&mut rng, &p, 15);
                let s = engine.update(&p)?;
                stopped += usize::from(check_budgeted(&p, &s, &CpuEngine::new().solve(&p)?)?);
            }
            engine.set_budget(None);
            check_resumed_update(&p, &engine.update(&p)?)?;
            Ok(stopped)
        };
        stops += run().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
    assert!(
        stops > 100,
        "only {stops} of 480 calls stopped at their budget"
    );
}
