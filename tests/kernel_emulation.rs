//! The CUDA engine's kernels (`kernels/pushrelabel/`) run on the host: the source is
//! compiled as C++ (`tests/emulation/`) with one thread per block and the blocks run one
//! after another, a legal schedule of the host-driven scheme. So machines without a GPU
//! (CI) check the kernels' logic: exact flows and certified cuts against the reference,
//! for every schedule setting the driver takes. Needs a C++ compiler (`$CXX`, else `c++`
//! or `g++`) and `gzip`; without one the tests say so and pass.

mod common;

use common::generators::{Change, change, connectivity, neighbour_capacities, random_problem};
use common::grids::{grids_dir, manifest};
use common::reference::reference_flow;
use common::rng::Rng;
use livecut::grid::{GridProblem, Mask, cut_capacity};
use livecut::maxflow::cuda::{PUSH_RELABEL, TILE_HEIGHTS};
use livecut::maxflow::dimacs;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The emulation driver for tiles `tile_h` pixels high, built once per test process
/// (None: no C++ compiler here).
fn driver(tile_h: u32) -> Option<&'static Path> {
    static DRIVERS: [OnceLock<Option<PathBuf>>; TILE_HEIGHTS.len()] =
        [const { OnceLock::new() }; TILE_HEIGHTS.len()];
    let slot = TILE_HEIGHTS
        .iter()
        .position(|&h| h == tile_h)
        .expect("a tile height the engine uses");
    DRIVERS[slot].get_or_init(|| build(tile_h)).as_deref()
}

fn build(tile_h: u32) -> Option<PathBuf> {
    common::cxx::build(
        "driver.cpp",
        &PUSH_RELABEL,
        &[format!("-DTH={tile_h}")],
        &format!("kernel_emulation_th{tile_h}"),
    )
}

/// What one emulated solve printed.
struct Run {
    flow: u64,
    rounds: u64,
    global_relabels: u64,
    mask: Mask,
}

/// Solves `p` with the emulated kernels and the given driver options.
fn emulate(driver: &Path, p: &GridProblem, options: &[&str]) -> Run {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let id = format!(
        "emu-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let (file, mask_file) = (
        dir.join(format!("{id}.max")),
        dir.join(format!("{id}.mask")),
    );
    dimacs::write(p, std::fs::File::create(&file).expect("problem file")).expect("write");
    let mut child = Command::new(driver)
        .arg(&file)
        .arg(&mask_file)
        .args(options)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the emulation driver");
    // a kernel change that stops converging must fail the test, not hang it
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("driver status").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the emulated solve did not finish in 120 s ({options:?})");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().expect("driver output");
    assert!(
        out.status.success(),
        "driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let field = |key: &str| -> u64 {
        let words: Vec<&str> = text.split_whitespace().collect();
        let at = words.iter().position(|w| *w == key).expect(key);
        words[at + 1].parse().expect("number")
    };
    let data = std::fs::read(&mask_file).expect("mask");
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&mask_file);
    Run {
        flow: field("flow"),
        rounds: field("rounds"),
        global_relabels: field("global_relabels"),
        mask: Mask {
            width: p.width(),
            height: p.height(),
            data,
        },
    }
}

/// Checks an emulated solve of `p` against the reference flow and the cut it returns.
fn check(driver: &Path, p: &GridProblem, options: &[&str]) -> Result<(), TestCaseError> {
    let run = emulate(driver, p, options);
    let reference = reference_flow(p);
    prop_assert_eq!(run.flow, reference, "flow ({:?})", options);
    prop_assert_eq!(
        cut_capacity(p, &run.mask),
        run.flow,
        "cut capacity of the mask ({:?})",
        options
    );
    prop_assert!(run.mask.data.iter().all(|&v| v == 0 || v == 255));
    Ok(())
}

/// Sides that cross tile borders (tiles are 32 pixels) and 1-pixel-wide grids.
fn side() -> impl Strategy<Value = u32> {
    prop_oneof![1 => Just(1u32), 2 => 2u32..=33, 2 => 34u32..=80]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    #[test]
    fn emulated_kernels_match_the_reference(w in side(), h in side(), eight in any::<bool>(), seed in any::<u64>(), tile_h in prop::sample::select(TILE_HEIGHTS.to_vec())) {
        let Some(driver) = driver(tile_h) else { return Ok(()) };
        let p = random_problem(&mut Rng(seed), w, h, connectivity(eight));
        check(driver, &p, &[])?;
    }

    /// Every schedule setting keeps the result exact: short and long visits, region
    /// relabels on stalls, global relabels every round, stochastic cuts off, concurrent
    /// tiles (here one after another, which is one of their schedules).
    #[test]
    fn every_schedule_setting_is_exact(w in side(), h in side(), eight in any::<bool>(), seed in any::<u64>(), pick in 0usize..6, tile_h in prop::sample::select(TILE_HEIGHTS.to_vec())) {
        let Some(driver) = driver(tile_h) else { return Ok(()) };
        let p = random_problem(&mut Rng(seed), w, h, connectivity(eight));
        let settings: [&[&str]; 6] = [
            &["budget", "1"],
            &["budget", "200"],
            &["region", "2"],
            &["gr", "1", "work", "1"],
            &["revisit", "1"],
            &["conc", "1"],
        ];
        check(driver, &p, settings[pick])?;
    }
}

/// Seed-only problem where flow travels from the middle to the frame through weak
/// edges: hundreds of pixels, many tiles, many discharge rounds.
fn seeds_only(w: u32, h: u32, eight: bool) -> GridProblem {
    let c = connectivity(eight);
    let n = (w * h) as usize;
    let (mut src, mut sink) = (vec![0i32; n], vec![0i32; n]);
    let (cx, cy) = (w / 2, h / 2);
    let mut rng = Rng(7);
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                sink[i] = 1_000_000_000;
            } else if x.abs_diff(cx) <= 2 && y.abs_diff(cy) <= 2 {
                src[i] = 1_000_000_000;
            }
        }
    }
    let edges = neighbour_capacities(w, h, c, |_, _, _| 1 + rng.below(20) as i32);
    GridProblem::from_arrays(w, h, c, src, sink, edges).expect("grid")
}

#[test]
fn flow_that_crosses_many_tiles_is_exact() {
    for tile_h in TILE_HEIGHTS {
        let Some(driver) = driver(tile_h) else { return };
        for (w, h, eight) in [(150, 97, false), (97, 150, true)] {
            let p = seeds_only(w, h, eight);
            let run = emulate(driver, &p, &[]);
            let what = format!("{w}x{h}, 32x{tile_h} tiles");
            assert_eq!(run.flow, reference_flow(&p), "{what}");
            assert_eq!(cut_capacity(&p, &run.mask), run.flow, "{what}");
            assert!(
                run.rounds > 2 && run.global_relabels > 1,
                "{what}: {} rounds, {} global relabels",
                run.rounds,
                run.global_relabels
            );
        }
    }
}

/// The shared instances (where they are found) give the manifest flow.
#[test]
fn shared_instances_give_the_manifest_flow() {
    let Some(dir) = grids_dir() else { return };
    for (file, expected) in manifest(&dir) {
        let p = dimacs::read_path(&dir.join(&file)).expect("instance");
        for tile_h in TILE_HEIGHTS {
            let Some(driver) = driver(tile_h) else { return };
            let run = emulate(driver, &p, &[]);
            let what = format!("{file}, 32x{tile_h} tiles");
            assert_eq!(run.flow, expected, "{what}");
            assert_eq!(cut_capacity(&p, &run.mask), expected, "{what}");
        }
    }
}

/// What each frame of an emulated sequence printed: how it was solved (`solve`, `update`
/// or `fresh` where the update fell back), its flow and its mask.
fn emulate_sequence(driver: &Path, frames: &[GridProblem]) -> Vec<(String, u64, Mask)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let id = format!(
        "seq-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let files: Vec<PathBuf> = (0..frames.len())
        .map(|k| dir.join(format!("{id}-{k}.max")))
        .collect();
    for (p, file) in frames.iter().zip(&files) {
        dimacs::write(p, std::fs::File::create(file).expect("problem file")).expect("write");
    }
    let mask_file = dir.join(format!("{id}.mask"));
    let mut command = Command::new(driver);
    command.arg(&files[0]).arg(&mask_file);
    for file in &files[1..] {
        command.arg("next").arg(file);
    }
    let out = command.output().expect("run the emulation driver");
    assert!(
        out.status.success(),
        "driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let runs = text
        .lines()
        .enumerate()
        .map(|(k, line)| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let flow = words[words.iter().position(|w| *w == "flow").expect("flow") + 1];
            let path = match k {
                0 => mask_file.clone(),
                k => PathBuf::from(format!("{}.{k}", mask_file.display())),
            };
            let data = std::fs::read(&path).expect("mask");
            let _ = std::fs::remove_file(&path);
            let mask = Mask {
                width: frames[k].width(),
                height: frames[k].height(),
                data,
            };
            (words[0].to_string(), flow.parse().expect("number"), mask)
        })
        .collect::<Vec<_>>();
    for file in files {
        let _ = std::fs::remove_file(file);
    }
    assert_eq!(runs.len(), frames.len(), "one line per frame:\n{text}");
    runs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 80, ..ProptestConfig::default() })]

    /// A dynamic update (pr_reparam*, then the solve resumes) gives every frame of a
    /// sequence of random changes of every kind the flow of a fresh solve and the same
    /// canonical cut (the pixels that cannot reach t); capacities zeroed come back.
    #[test]
    fn emulated_updates_match_fresh_solves(w in side(), h in side(), eight in any::<bool>(), seed in any::<u64>(), kinds in prop::collection::vec(prop::sample::select(Change::ALL.to_vec()), 1..4), tile_h in prop::sample::select(TILE_HEIGHTS.to_vec())) {
        let Some(driver) = driver(tile_h) else { return Ok(()) };
        let mut rng = Rng(seed);
        let mut frames = vec![random_problem(&mut rng, w, h, connectivity(eight))];
        for kind in kinds {
            let last = frames.last().expect("a frame").clone();
            frames.push(change(&mut rng, &last, kind));
            if kind == Change::Zeroed {
                frames.push(last);
            }
        }
        let runs = emulate_sequence(driver, &frames);
        for (k, (p, (how, flow, mask))) in frames.iter().zip(&runs).enumerate() {
            let fresh = emulate(driver, p, &[]);
            prop_assert_eq!(*flow, reference_flow(p), "frame {} ({})", k, how);
            prop_assert_eq!(&mask.data, &fresh.mask.data, "frame {} ({})", k, how);
        }
    }
}

/// Seeded sequences where the flow crosses many tiles: an update after a moved seed
/// stroke stays exact, and updates resume rather than fall back.
#[test]
fn updates_of_seeded_grids_across_many_tiles_are_exact() {
    for tile_h in TILE_HEIGHTS {
        let Some(driver) = driver(tile_h) else { return };
        for (w, h, eight) in [(150, 97, false), (97, 150, true)] {
            let first = seeds_only(w, h, eight);
            let mut rng = Rng(11);
            let frames = vec![
                first.clone(),
                change(&mut rng, &first, Change::Scribble),
                change(&mut rng, &first, Change::Few),
                first.clone(),
            ];
            let runs = emulate_sequence(driver, &frames);
            for (k, (p, (how, flow, mask))) in frames.iter().zip(&runs).enumerate() {
                let what = format!("{w}x{h}, 32x{tile_h} tiles, frame {k}");
                assert_eq!(how, if k == 0 { "solve" } else { "update" }, "{what}");
                assert_eq!(*flow, reference_flow(p), "{what}");
                assert_eq!(cut_capacity(p, mask), *flow, "{what}");
            }
        }
    }
}
