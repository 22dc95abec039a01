//! Frames that cost what changed: the energy recomputed only in the tiles whose inputs
//! moved, and the engine told only those, against the full recompute of every frame —
//! identical capacities, flows and masks on real still-camera footage and on the demo
//! scene (seeded, and with a learned background).

mod common;

use common::footage::pedestrian_frames;
use livecut::capture::{DemoScene, Frame};
use livecut::energy::{
    BackgroundModel, CAPACITY_SCALE, ColorModelKind, ColorModels, EnergyBuilder, EnergyInputs,
    SeedLabel, Side, Smoothness, TemporalPrior, estimate_sigma,
};
use livecut::grid::{ChangedArcs, Connectivity, GridProblem, Mask};
use livecut::maxflow::Engine;
use livecut::maxflow::cpu::CpuEngine;
use livecut::pipeline::{NoiseGate, SegmentParams, Segmenter};

const LEARN: usize = 10;

/// Two builders, one incremental and one recomputing everything, and an engine for
/// each: the incremental one continues from its kept graph on every frame, told the
/// changed tiles; the other solves every frame afresh.
struct Pair {
    incremental: EnergyBuilder,
    full: EnergyBuilder,
    continued: CpuEngine,
    fresh: CpuEngine,
    /// Per frame, the share of tiles its energy changed.
    shares: Vec<f64>,
    /// The incremental builder's last problem, to check the arcs it says changed.
    last: Option<GridProblem>,
}

impl Pair {
    fn new() -> Self {
        let mut full = EnergyBuilder::new();
        full.set_incremental(false);
        let mut continued = CpuEngine::new();
        continued.set_always_resume(true);
        Self {
            incremental: EnergyBuilder::new(),
            full,
            continued,
            fresh: CpuEngine::new(),
            shares: Vec::new(),
            last: None,
        }
    }

    /// Builds one frame's energy both ways (from equal inputs, one set per builder),
    /// checks the capacities, cuts both and checks flows and masks; returns the mask.
    fn frame(&mut self, inputs: [EnergyInputs<'_>; 2], what: &str) -> Mask {
        let [one, other] = inputs;
        let a = self.incremental.build(one).unwrap();
        let b = self.full.build(other).unwrap();
        assert_same_problem(&a, &b, what);
        let changed = self.incremental.changed();
        let (cols, rows) = changed.tiles();
        self.shares
            .push(changed.count() as f64 / f64::from(cols * rows));
        let changes = self.incremental.changes();
        if let (Some(arcs), Some(last)) = (changes.arcs, &self.last) {
            let exact = ChangedArcs::between(last, &a);
            assert!(*arcs == exact, "{what}: the arcs said to change");
        }
        let warm = self.continued.update_changed(&a, changes).unwrap();
        let cold = self.fresh.solve(&b).unwrap();
        assert_eq!(warm.flow, cold.flow, "{what}: flows");
        assert!(warm.mask == cold.mask, "{what}: masks");
        self.last = Some(a.clone());
        self.incremental.recycle(a);
        self.full.recycle(b);
        cold.mask
    }

    /// Checks that most frames changed less than `share` of their tiles (else the
    /// incremental path was hardly taken).
    fn assert_local(&self, share: f64, what: &str) {
        let local = self.shares.iter().filter(|&&s| s < share).count();
        assert!(
            local * 2 > self.shares.len(),
            "{what}: only {local} of {} frames changed less than {share} of the tiles: {:?}",
            self.shares.len(),
            self.shares
        );
    }
}

fn assert_same_problem(a: &GridProblem, b: &GridProblem, what: &str) {
    assert!(a.source() == b.source(), "{what}: source capacities");
    assert!(a.sink() == b.sink(), "{what}: sink capacities");
    for &dir in a.connectivity().directions() {
        assert!(a.edges(dir) == b.edges(dir), "{what}: {dir:?} capacities");
    }
}

fn smoothness(sigma: f32) -> Smoothness {
    Smoothness {
        connectivity: Connectivity::Eight,
        lambda: 50.0,
        sigma: Some(sigma),
        scale: CAPACITY_SCALE,
    }
}

const PRIOR: TemporalPrior = TemporalPrior {
    weight: 5.0,
    ramp: 10.0,
};

/// Background mode as the segmenter runs it: gate, observe, steady colours, energy,
/// cut, adapt; every frame's two energies and cuts must agree, and most frames must
/// change less than `local_share` of the tiles.
fn background_sequence(frames: &[Frame], local_share: f64, what: &str) {
    let (w, h) = (frames[0].width, frames[0].height);
    let mut model = BackgroundModel::new(w, h, LEARN as u32);
    for frame in &frames[..LEARN] {
        model.learn(&frame.rgb);
    }
    let sigma = estimate_sigma(
        &model.mean_rgb(),
        w as usize,
        h as usize,
        Connectivity::Eight,
    );
    let (mut gate, mut pair) = (NoiseGate::default(), Pair::new());
    let mut previous: Option<Mask> = None;
    for (k, frame) in frames.iter().enumerate().skip(LEARN) {
        let mut gated = frame.rgb.clone();
        gate.apply(&mut gated, w, h, 10);
        model.observe(&gated, previous.as_ref());
        let steady = model.take_steady();
        let mut reference = Vec::new();
        model.steady_rgb(&gated, &mut reference);
        assert!(steady == reference, "{what}, frame {k}: steady colours");
        let inputs = || EnergyInputs {
            width: w,
            height: h,
            rgb: &steady,
            smoothness: smoothness(sigma),
            colors: None,
            seeds: None,
            temporal: previous.as_ref().map(|m| (m, PRIOR)),
            background: Some((&model, 2.0)),
            rgb_moves: None,
        };
        let mask = pair.frame([inputs(), inputs()], &format!("{what}, frame {k}"));
        model.restore_steady(steady);
        model.adapt(&gated, &mask);
        previous = Some(mask);
    }
    pair.assert_local(local_share, what);
}

#[test]
fn background_mode_energy_and_cut_follow_the_change_on_pedestrians() {
    let Some(frames) = pedestrian_frames(LEARN + 40) else {
        return;
    };
    // small people in a wide still view
    background_sequence(&frames, 0.25, "pedestrians");
}

#[test]
fn background_mode_energy_and_cut_follow_the_change_on_the_demo() {
    let scene = DemoScene::new(320, 240, 30, 7);
    let frames: Vec<Frame> = (0..LEARN as u64 + 30).map(|i| scene.render(i).0).collect();
    // three large objects moving through the frame
    background_sequence(&frames, 0.75, "demo");
}

/// Colour-model mode: models learned from the demo's seeds on the first frame, which is
/// cut with its seeds as hard constraints; later frames add the temporal prior.
#[test]
fn seeded_energy_and_cut_follow_the_change_on_the_demo() {
    let scene = DemoScene::new(320, 240, 30, 7);
    let seeds = scene.default_seeds();
    let (first, _) = scene.render(0);
    let (w, h) = (first.width, first.height);
    let kind = ColorModelKind::Histogram { bits: 4 };
    let mut models = ColorModels::learn(kind, &first.rgb, |i| match seeds.labels[i] {
        SeedLabel::Foreground => Some(Side::Foreground),
        SeedLabel::Background => Some(Side::Background),
        SeedLabel::Unknown => None,
    })
    .unwrap();
    // a copy for the second builder (the same models, the same generation)
    let mut copy = models.clone();
    let sigma = estimate_sigma(&first.rgb, w as usize, h as usize, Connectivity::Eight);
    let (mut gate, mut pair) = (NoiseGate::default(), Pair::new());
    let mut previous: Option<Mask> = None;
    for k in 0..40 {
        let (frame, _) = scene.render(k);
        let mut gated = frame.rgb.clone();
        gate.apply(&mut gated, w, h, 10);
        let hard = (k == 0).then_some(&seeds);
        let inputs = |colors| EnergyInputs {
            width: w,
            height: h,
            rgb: &gated,
            smoothness: smoothness(sigma),
            colors: Some(colors),
            seeds: hard,
            temporal: previous.as_ref().map(|m| (m, PRIOR)),
            background: None,
            rgb_moves: None,
        };
        let both = [inputs(&mut models), inputs(&mut copy)];
        let mask = pair.frame(both, &format!("demo seeded, frame {k}"));
        previous = Some(mask);
    }
    pair.assert_local(0.75, "demo seeded");
}

/// The segmenter with tiles and with every capacity recomputed, both continuing on
/// every frame: identical flows and masks, on `frames` from `seeds` or a learned
/// background.
fn segmenter_sequence(frames: &[Frame], params: SegmentParams, seeded: bool, what: &str) {
    let scene_seeds = seeded.then(|| DemoScene::new(320, 240, 30, 7).default_seeds());
    let make = |incremental: bool| {
        let mut engine = CpuEngine::new();
        engine.set_always_resume(true);
        let mut s = Segmenter::new(Box::new(engine), params.clone());
        s.set_device_energy(false);
        s.set_incremental(incremental);
        if let Some(seeds) = &scene_seeds {
            s.set_seeds(seeds.clone());
        }
        s
    };
    let (mut tiles, mut full) = (make(true), make(false));
    let mut continued = 0;
    for (k, frame) in frames.iter().enumerate() {
        let a = tiles.segment(frame).unwrap();
        let b = full.segment(frame).unwrap();
        assert_eq!(a.flow, b.flow, "{what}, frame {k}: flows");
        assert!(a.mask == b.mask, "{what}, frame {k}: masks");
        continued += usize::from(a.stats.dynamic);
    }
    assert!(
        continued * 2 > frames.len(),
        "{what}: {continued} continued"
    );
}

#[test]
fn the_segmenter_with_tiles_gives_the_full_frames_masks() {
    let scene = DemoScene::new(320, 240, 30, 7);
    let demo: Vec<Frame> = (0..40).map(|i| scene.render(i).0).collect();
    segmenter_sequence(&demo, SegmentParams::default(), true, "demo seeded");
    let learned = SegmentParams {
        background_frames: LEARN as u32,
        ..SegmentParams::default()
    };
    segmenter_sequence(&demo, learned.clone(), false, "demo, learned background");
    if let Some(frames) = pedestrian_frames(LEARN + 30) {
        segmenter_sequence(&frames, learned, false, "pedestrians");
    }
}

/// `frame` with Gaussian sensor noise of deviation `sigma` added (a sum of uniforms,
/// deterministic from `seed`).
fn noisy(frame: &Frame, sigma: f32, seed: u64) -> Frame {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let rgb = frame
        .rgb
        .iter()
        .map(|&v| {
            // twelve uniforms: mean 6, variance 1
            let g: f32 = (0..12).map(|_| uniform()).sum::<f32>() - 6.0;
            (f32::from(v) + sigma * g).round().clamp(0.0, 255.0) as u8
        })
        .collect();
    Frame {
        rgb,
        ..frame.clone()
    }
}

/// Segments `frames` with a background learned from the first [`LEARN`]; returns the
/// median shares of pixels that passed the noise gate and that the energy recomputed
/// per frame, and the noise gate of the last frame.
fn changed_shares(frames: &[Frame]) -> (f64, f64, u8) {
    let params = SegmentParams {
        background_frames: LEARN as u32,
        ..SegmentParams::default()
    };
    let mut segmenter = Segmenter::new(Box::new(CpuEngine::new()), params);
    segmenter.set_device_energy(false);
    segmenter.set_census(true);
    let (mut passed, mut recomputed, mut gate) = (Vec::new(), Vec::new(), 0);
    for (k, frame) in frames.iter().enumerate() {
        let out = segmenter.segment(frame).unwrap();
        if k <= LEARN {
            continue; // learning, then the first frame cut: every capacity is new
        }
        let census = out.census.expect("counted");
        let pixels = f64::from(frame.width * frame.height);
        passed.push(census.passed_gate.expect("gated") as f64 / pixels);
        recomputed.push(census.recomputed as f64 / pixels);
        gate = out.noise_gate;
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(passed), median(recomputed), gate)
}

#[test]
fn a_noisy_camera_on_a_still_scene_passes_almost_nothing_through_the_gate() {
    // one frame of the scene, filmed again and again by a noisy camera
    let still = DemoScene::new(320, 240, 30, 3).render(0).0;
    let frames: Vec<Frame> = (0..LEARN as u64 + 12)
        .map(|i| Frame {
            index: i,
            ..noisy(&still, 4.0, i)
        })
        .collect();
    let (passed, recomputed, gate) = changed_shares(&frames);
    assert!(
        gate > SegmentParams::default().noise_gate,
        "the gate stays at {gate}"
    );
    assert!(passed < 0.002, "{passed:.4} of the pixels passed the gate");
    assert!(
        recomputed < 0.02,
        "{recomputed:.3} of the pixels recomputed"
    );
}
