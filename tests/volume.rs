//! Volumes (3D grids): the DIMACS reader and writer of the 3D dialect, the CPU volume
//! engine against a reference max-flow on random volumes (6, 10 and 26 neighbours,
//! degenerate shapes, zero and near-2^31 capacities), dynamic updates against fresh
//! solves, the shared 3D instances against their manifest flows and reference masks,
//! and `livecut maxflow` on a volume.

mod common;

use common::cli::{assert_fails_with, json_output, livecut};
use common::reference::volume_max_flow as reference;
use common::rng::Rng;
use common::volumes::{connectivity, grids3d_dir, manifest3d, random_volume, side};
use livecut::grid::{Mask, VolumeConnectivity, VolumeProblem};
use livecut::maxflow::cpu::CpuVolumeEngine;
use livecut::maxflow::cuda::CudaVolumeEngine;
use livecut::maxflow::dimacs::{self, DimacsError, Dims, Instance};
use livecut::maxflow::{EngineChoice, EngineError, EngineKind, VolumeEngine, create_volume_engine};
use proptest::prelude::*;

/// Checks a solution of `p` against the reference: flow, cut capacity, and the mask
/// of the voxels reachable from s.
fn check(p: &VolumeProblem, flow: u64, mask: &Mask) -> Result<(), TestCaseError> {
    let r = reference(p);
    prop_assert_eq!(flow, r.flow, "flow");
    prop_assert_eq!(p.cut_capacity(mask), Ok(flow), "cut capacity of the mask");
    let (w, h) = p.mask_size();
    let expected = Mask::from_fn(w, h, |i| r.reachable[i]);
    prop_assert_eq!(mask, &expected, "mask = voxels reachable from s");
    Ok(())
}

/// `p` with about one capacity in `one_in` redrawn (terminal and neighbour arcs).
fn perturb(rng: &mut Rng, p: &VolumeProblem, one_in: u64) -> VolumeProblem {
    let size = (p.width(), p.height(), p.depth());
    let redraw = |rng: &mut Rng, arr: &[i32], inside: &dyn Fn(usize) -> bool| -> Vec<i32> {
        (0..arr.len())
            .map(|i| {
                if inside(i) && rng.below(one_in) == 0 {
                    rng.capacity()
                } else {
                    arr[i]
                }
            })
            .collect()
    };
    let source = redraw(rng, p.source(), &|_| true);
    let sink = redraw(rng, p.sink(), &|_| true);
    let k = p.connectivity().number() as usize;
    let edges = (0..k)
        .map(|d| redraw(rng, p.edges(d), &|i| p.step(i, d).is_some()))
        .collect();
    VolumeProblem::from_arrays(size, p.connectivity(), source, sink, edges).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn solve_matches_reference(w in side(6), h in side(6), d in side(6), c in connectivity(), seed in any::<u64>()) {
        let p = random_volume(&mut Rng(seed), (w, h, d), c);
        let s = CpuVolumeEngine::new().solve(&p).unwrap();
        check(&p, s.flow, &s.mask)?;
    }

    #[test]
    fn updates_match_fresh_solves(
        w in side(6), h in side(6), d in side(6), c in connectivity(), seed in any::<u64>(), one_in in 1u64..8,
    ) {
        let mut rng = Rng(seed);
        let mut p = random_volume(&mut rng, (w, h, d), c);
        let mut engine = CpuVolumeEngine::new();
        engine.solve(&p).unwrap();
        for _ in 0..3 {
            p = perturb(&mut rng, &p, one_in);
            let updated = engine.update(&p).unwrap();
            prop_assert!(updated.stats.dynamic);
            let fresh = CpuVolumeEngine::new().solve(&p).unwrap();
            prop_assert_eq!(updated.flow, fresh.flow);
            prop_assert_eq!(&updated.mask, &fresh.mask);
            check(&p, updated.flow, &updated.mask)?;
        }
    }
}

#[test]
fn shared_volumes_give_their_manifest_flows_and_reference_masks() {
    let Some(dir) = grids3d_dir() else { return };
    let instances = manifest3d(&dir);
    assert!(instances.len() >= 9);
    let mut engine = CpuVolumeEngine::new();
    for (file, [w, h, d, c], flow) in &instances {
        let p = dimacs::read_volume_path(&dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let size = [p.width(), p.height(), p.depth(), p.connectivity().number()];
        assert_eq!(size, [*w, *h, *d, *c], "{file}");
        let s = engine.solve(&p).unwrap();
        assert_eq!(s.flow, *flow, "{file}");
        assert_eq!(p.cut_capacity(&s.mask), Ok(*flow), "{file}: cut");
        let png = dir.join(file.replace(".max.gz", ".mask.png"));
        let reference = Mask::read_png(&png).unwrap();
        assert_eq!(s.mask, reference, "{file}: mask");
    }
}

#[test]
fn shared_volumes_updated_from_other_capacities_match_their_fresh_solves() {
    let Some(dir) = grids3d_dir() else { return };
    let mut rng = Rng(53);
    for (file, _, flow) in manifest3d(&dir) {
        let p = dimacs::read_volume_path(&dir.join(&file)).unwrap();
        let mut engine = CpuVolumeEngine::new();
        engine.solve(&perturb(&mut rng, &p, 5)).unwrap();
        let s = engine.update(&p).unwrap();
        assert!(s.stats.dynamic && s.stats.changed_arcs > 0, "{file}");
        assert_eq!(s.flow, flow, "{file}");
        let fresh = CpuVolumeEngine::new().solve(&p).unwrap();
        assert_eq!(s.mask, fresh.mask, "{file}: mask");
    }
}

#[test]
fn a_2d_file_is_never_read_as_a_volume_nor_a_volume_as_2d() {
    let plane = "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 3 1 5\n";
    let volume = "c grid 1 1 2 6\np max 4 2\nn 3 s\nn 4 t\na 3 1 5\na 1 2 3\n";
    let text = |t: &str| std::io::Cursor::new(t.as_bytes().to_vec());
    let err = dimacs::read_volume_any(text(plane)).expect_err("2D as 3D");
    assert!(matches!(
        err,
        DimacsError::Dimension {
            found: Dims::Two,
            expected: Dims::Three
        }
    ));
    let err = dimacs::read(text(volume)).expect_err("3D as 2D");
    assert!(matches!(
        err,
        DimacsError::Dimension {
            found: Dims::Three,
            expected: Dims::Two
        }
    ));
    assert!(err.to_string().contains("'c grid W H D C'"), "{err}");
    let either = dimacs::read_instance_any(text(volume), None).unwrap();
    let Instance::Volume(v) = either else {
        panic!("a volume")
    };
    assert_eq!((v.depth(), v.source()[0], v.edges(4)[0]), (2, 5, 3));
    assert!(matches!(
        dimacs::read_instance_any(text(plane), None),
        Ok(Instance::Plane(_))
    ));
}

#[test]
fn malformed_volumes_name_their_line() {
    let cases: &[(&str, u64, &str)] = &[
        ("c grid 2 2 2 8\n", 1, "C = 6, 10 or 26"),
        ("c grid 2 2 6\n", 1, "C = 4 or 8"),
        ("c grid 2 2 2 2 6\n", 1, "c grid W H D C"),
        ("c grid 2 0 2 6\n", 1, "not supported"),
        ("c grid 2 2 2 6\np max 8 0\n", 2, "W*H*D+2 = 10"),
        (
            "c grid 2 2 2 6\np max 10 0\nn 3 s\n",
            3,
            "source must be node 9",
        ),
        // (0,0,0) -> (1,1,0) is a diagonal: not in a 6-connected volume
        (
            "c grid 2 2 2 6\np max 10 1\nn 9 s\nn 10 t\na 1 4 5\n",
            5,
            "not 6-connected",
        ),
        // (1,0,0) -> (0,0,1) in a 10-connected volume: a step in x and z
        (
            "c grid 2 2 2 10\np max 10 1\nn 9 s\nn 10 t\na 2 5 5\n",
            5,
            "not 10-connected",
        ),
        // a loop is no neighbour
        (
            "c grid 2 2 2 26\np max 10 1\nn 9 s\nn 10 t\na 3 3 5\n",
            5,
            "not 26-connected",
        ),
        (
            "c grid 2 2 2 26\np max 10 1\nn 9 s\nn 10 t\na 9 10 5\n",
            5,
            "source to the sink",
        ),
    ];
    for &(text, line, words) in cases {
        let err = dimacs::read_volume_any(std::io::Cursor::new(text.as_bytes().to_vec()))
            .expect_err(text);
        match &err {
            DimacsError::Syntax { line: got, .. } => assert_eq!(*got, line, "{text}: {err}"),
            other => panic!("{text}: unexpected {other:?}"),
        }
        assert!(
            err.to_string().contains(words),
            "{text}: '{err}' lacks '{words}'"
        );
    }
}

#[test]
fn written_volumes_read_back_equal() {
    let mut rng = Rng(7);
    for c in [
        VolumeConnectivity::Six,
        VolumeConnectivity::Ten,
        VolumeConnectivity::TwentySix,
    ] {
        let p = random_volume(&mut rng, (5, 3, 4), c);
        let mut text = Vec::new();
        dimacs::write_volume(&p, &mut text).unwrap();
        assert!(text.starts_with(format!("c grid 5 3 4 {}\n", c.number()).as_bytes()));
        let back = dimacs::read_volume_any(std::io::Cursor::new(text)).unwrap();
        assert_eq!(back, p);
    }
}

#[test]
fn auto_takes_the_cuda_volume_engine_where_a_device_is_present() {
    let (engine, note) = create_volume_engine(EngineChoice::Auto).unwrap();
    match create_volume_engine(EngineChoice::Cuda) {
        Ok(_) => {
            assert_eq!(engine.kind(), EngineKind::Cuda);
            assert!(note.is_none());
        }
        Err(err) => {
            assert!(matches!(err, EngineError::Gpu(_)), "{err}");
            assert_eq!(engine.kind(), EngineKind::Cpu);
            assert!(note.unwrap().contains("using the CPU engine"));
        }
    }
}

#[test]
fn maxflow_command_solves_a_volume_and_writes_its_canonical_mask() {
    let Some(dir) = grids3d_dir() else { return };
    let file = dir.join("tiny3d_4x3x2_6c.max.gz");
    let out_dir = tempfile::tempdir().unwrap();
    let mask = out_dir.path().join("m.png");
    let (file, mask_arg) = (file.to_string_lossy(), mask.to_string_lossy());
    let out = livecut(&[
        "maxflow",
        &file,
        "--engine",
        "cpu",
        "--json",
        "--mask-out",
        &mask_arg,
    ]);
    let json = json_output(&out);
    assert_eq!(json["flow"], 89);
    assert_eq!(
        (
            json["width"].as_u64(),
            json["height"].as_u64(),
            json["depth"].as_u64()
        ),
        (Some(4), Some(3), Some(2))
    );
    let written = Mask::read_png(&mask).unwrap();
    assert_eq!(
        written,
        Mask::read_png(&dir.join("tiny3d_4x3x2_6c.mask.png")).unwrap()
    );
    // the CUDA engine's answer where there is a device, a clear refusal where not
    let out = livecut(&["maxflow", &file, "--engine", "cuda", "--json"]);
    if CudaVolumeEngine::new().is_ok() {
        let json = json_output(&out);
        assert_eq!(
            (json["flow"].as_u64(), json["engine"].as_str()),
            (Some(89), Some("cuda"))
        );
    } else {
        assert_fails_with(&out, "CUDA");
    }
}

#[test]
fn bench_command_checks_volumes_against_their_manifest() {
    let Some(dir) = grids3d_dir() else { return };
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("rows.json");
    let file = dir
        .join("rand3d_32x24x8_6c.max.gz")
        .to_string_lossy()
        .into_owned();
    let json_arg = json.to_string_lossy().into_owned();
    let out = livecut(&[
        "bench", &file, "--engine", "cpu", "--runs", "1", "--json", &json_arg,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rows[0]["correct"], true);
    assert_eq!(rows[0]["depth"], 8);
    assert_eq!(rows[0]["flow"], 99153);
}
