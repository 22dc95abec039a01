//! The CUDA volume engine's kernels (`kernels/volume.cu`) run on the host: the source is
//! compiled as C++ (`tests/emulation/volume_driver.cpp`) with blocks of one voxel run
//! one after another, a legal schedule of the engine's host loop. So machines without a
//! GPU (CI) check the kernels' logic: exact flows and the cut of the voxels that cannot
//! reach t, against the reference, on random volumes of 6, 10 and 26 neighbours and the
//! shared 3D instances. Needs a C++ compiler (`$CXX`, else `c++` or `g++`); without
//! one the tests say so and pass.

mod common;

use common::reference::volume_max_flow as reference;
use common::rng::Rng;
use common::volumes::{connectivity, grids3d_dir, manifest3d, random_volume, side};
use livecut::grid::{Mask, VolumeConnectivity, VolumeProblem};
use livecut::maxflow::cuda::{VOLUME, VOLUME_CYCLES, VOLUME_PUSHES};
use livecut::maxflow::dimacs;
use proptest::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The driver for `k` neighbours, built once per test process (None: no compiler).
fn driver(c: VolumeConnectivity) -> Option<&'static Path> {
    static DRIVERS: [OnceLock<Option<PathBuf>>; 3] = [const { OnceLock::new() }; 3];
    let (slot, k) = match c {
        VolumeConnectivity::Six => (0, 6),
        VolumeConnectivity::Ten => (1, 10),
        VolumeConnectivity::TwentySix => (2, 26),
    };
    DRIVERS[slot]
        .get_or_init(|| {
            common::cxx::build(
                "volume_driver.cpp",
                &VOLUME,
                &[
                    format!("-DVOL_K={k}"),
                    format!(
                        "-DWFF_SOURCE=\"{}/kernels/wff.cu\"",
                        env!("CARGO_MANIFEST_DIR")
                    ),
                ],
                &format!("volume_emulation_k{k}"),
            )
        })
        .as_deref()
}

/// What an emulated solve printed, and its mask.
struct Run {
    flow: u64,
    global_relabels: u64,
    /// Wave Front Fetch's unit operations.
    waves: u64,
    /// Whether push-relabel finished what stalled waves left.
    took_over: bool,
    mask: Mask,
}

/// The two schedules of the engine: push-relabel, and Wave Front Fetch.
const SCHEDULES: [bool; 2] = [false, true];

/// An emulated solve of `p`, by Wave Front Fetch where `wff`.
fn emulate(driver: &Path, p: &VolumeProblem, wff: bool) -> Run {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let id = format!(
        "vol-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let (file, mask_file) = (
        dir.join(format!("{id}.txt")),
        dir.join(format!("{id}.mask")),
    );
    let k = p.connectivity().number() as usize;
    let mut text = format!("{} {} {} {k}\n", p.width(), p.height(), p.depth());
    let arrays = [p.source(), p.sink()]
        .into_iter()
        .chain((0..k).map(|d| p.edges(d)));
    for array in arrays {
        let line: Vec<String> = array.iter().map(i32::to_string).collect();
        text.push_str(&line.join(" "));
        text.push('\n');
    }
    std::fs::File::create(&file)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .expect("problem file");
    let (first, most) = VOLUME_PUSHES;
    let out = Command::new(driver)
        .arg(&file)
        .arg(&mask_file)
        .args([first, most].map(|p| p.to_string()))
        .arg(VOLUME_CYCLES.to_string())
        .args(wff.then_some("wff"))
        .output()
        .expect("run the volume emulation driver");
    assert!(
        out.status.success(),
        "driver failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8_lossy(&out.stdout).to_string();
    let words: Vec<&str> = printed.split_whitespace().collect();
    let field = |key: &str| -> u64 {
        let at = words.iter().position(|w| *w == key).expect(key);
        words[at + 1].parse().expect("number")
    };
    let data = std::fs::read(&mask_file).expect("mask");
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&mask_file);
    let (width, height) = p.mask_size();
    Run {
        flow: field("flow"),
        global_relabels: field("global_relabels"),
        waves: field("waves"),
        took_over: field("took_over") == 1,
        mask: Mask {
            width,
            height,
            data,
        },
    }
}

/// Checks emulated solves of `p` by both schedules against the reference: flow, the
/// cut's capacity and its source side (the voxels that cannot reach t).
fn check(p: &VolumeProblem) -> Result<(), TestCaseError> {
    let Some(driver) = driver(p.connectivity()) else {
        return Ok(());
    };
    let r = reference(p);
    let (w, h) = p.mask_size();
    let side = Mask::from_fn(w, h, |i| !r.reaches_sink[i]);
    for wff in SCHEDULES {
        let run = emulate(driver, p, wff);
        prop_assert_eq!(run.flow, r.flow, "flow (wff {})", wff);
        prop_assert_eq!(p.cut_capacity(&run.mask), Ok(r.flow), "cut (wff {})", wff);
        prop_assert_eq!(&run.mask, &side, "source side (wff {})", wff);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn emulated_volume_kernels_match_the_reference(w in side(7), h in side(7), d in side(7), c in connectivity(), seed in any::<u64>()) {
        check(&random_volume(&mut Rng(seed), (w, h, d), c))?;
    }
}

#[test]
fn flow_that_crosses_a_long_volume_is_exact() {
    // a line of strong arcs from a source voxel at one end to a sink voxel at the
    // other, in a 6-connected volume: the flow needs many relabels and pushes
    let (w, h, d) = (40, 3, 5);
    let c = VolumeConnectivity::Six;
    let probe = VolumeProblem::zeros(w, h, d, c).unwrap();
    let n = probe.voxels();
    let (mut source, mut sink) = (vec![0; n], vec![0; n]);
    source[0] = 1000;
    sink[n - 1] = 1000;
    let edges = (0..6)
        .map(|k| (0..n).map(|i| probe.step(i, k).map_or(0, |_| 7)).collect())
        .collect();
    let p = VolumeProblem::from_arrays((w, h, d), c, source, sink, edges).unwrap();
    check(&p).unwrap();
}

#[test]
fn shared_volumes_give_their_manifest_flows() {
    let Some(dir) = grids3d_dir() else { return };
    for (file, _, flow) in manifest3d(&dir) {
        let p = dimacs::read_volume_path(&dir.join(&file)).unwrap();
        let Some(driver) = driver(p.connectivity()) else {
            return;
        };
        for wff in SCHEDULES {
            let run = emulate(driver, &p, wff);
            assert_eq!(run.flow, flow, "{file} (wff {wff})");
            assert_eq!(
                p.cut_capacity(&run.mask),
                Ok(flow),
                "{file}: cut (wff {wff})"
            );
            eprintln!(
                "{file} (wff {wff}): {} global relabels, {} waves, taken over: {}",
                run.global_relabels, run.waves, run.took_over
            );
        }
    }
}
