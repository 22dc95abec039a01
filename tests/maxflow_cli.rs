//! `livecut maxflow` and `livecut bench --sequence` as a user runs them: JSON facts, the
//! canonical mask, static against dynamic timings, and one-line errors with exit status 2
//! and no mask file for bad input.

mod common;

use common::cli::{assert_fails_with, json_output, livecut};
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn bad_input_is_one_error_line_with_exit_2_and_no_mask() {
    let dir = tempfile::tempdir().unwrap();
    let mask = dir.path().join("mask.png");
    let mask_arg = mask.to_string_lossy().into_owned();
    let cases = [
        (
            "neg.max",
            "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 3 1 -5\n",
            ":5: negative capacity",
        ),
        (
            "nop.max",
            "c grid 2 1 4\nn 3 s\n",
            ":2: expected the 'p max N M' line",
        ),
        (
            "nogrid.max",
            "p max 4 0\n",
            ":1: the first line must be 'c grid W H C'",
        ),
        ("empty.max", "", ": empty file"),
        (
            "short.max",
            "c grid 2 1 4\np max 4 2\nn 3 s\nn 4 t\na 3 1 5\n",
            "truncated file?",
        ),
    ];
    for (name, text, expected) in cases {
        let file = write(dir.path(), name, text);
        let out = livecut(&["maxflow", &file, "--engine", "cpu", "--mask-out", &mask_arg]);
        assert_fails_with(&out, expected);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!("error: {file}")),
            "{name}: {stderr}"
        );
        assert!(!mask.exists(), "{name}: no mask left behind");
    }
    let out = livecut(&["maxflow", "/nonexistent/x.max"]);
    assert_fails_with(&out, "error: /nonexistent/x.max: cannot open");
}

#[test]
fn worked_example_gives_flow_4_and_the_reachable_mask() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "ex.max",
        "c grid 2 1 4\np max 4 4\nn 3 s\nn 4 t\na 3 1 5\na 1 2 3\na 2 4 4\na 1 4 1\n",
    );
    let mask = dir.path().join("ex.png");
    let out = livecut(&[
        "maxflow",
        &file,
        "--engine",
        "cpu",
        "--json",
        "--mask-out",
        mask.to_str().unwrap(),
    ]);
    let v = json_output(&out);
    assert_eq!(v["flow"], 4);
    assert_eq!(v["cut_capacity"], 4);
    assert_eq!(v["width"], 2);
    assert_eq!(v["height"], 1);
    assert_eq!(v["connectivity"], 4);
    assert_eq!(v["engine"], "cpu");
    for key in ["read_ms", "build_ms", "solve_ms", "engine_bytes"] {
        assert!(v[key].is_number(), "{key}");
    }
    let png = image::open(&mask).unwrap().into_luma8();
    assert_eq!(png.into_raw(), vec![255, 0]);

    let text = livecut(&["maxflow", &file, "--engine", "cpu"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("max flow    4"));
}

#[test]
fn auto_engine_says_which_it_uses() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "z.max",
        "c grid 1 1 4\np max 3 0\nn 2 s\nn 3 t\n",
    );
    let out = livecut(&["maxflow", &file, "--json"]);
    let v = json_output(&out);
    assert_eq!(v["flow"], 0);
    let engine = v["engine"].as_str().unwrap();
    if engine == "cpu" {
        assert!(String::from_utf8_lossy(&out.stderr).contains("using the CPU engine"));
    }
}

#[test]
fn bench_sequence_times_static_and_dynamic_with_the_same_masks() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sequence.json");
    let out = livecut(&[
        "bench",
        "--sequence",
        "demo",
        "--size",
        "96x64",
        "--frames",
        "5",
        "--engine",
        "cpu",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("2 runs: flows identical; masks identical within each engine\n"),
        "{table}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    let modes: Vec<&str> = rows.iter().map(|r| r["mode"].as_str().unwrap()).collect();
    assert_eq!(modes, ["static", "dynamic"]);
    for row in rows {
        assert_eq!(row["frames"], 4, "the first frame is a warm-up");
        assert_eq!(
            (row["width"].as_u64(), row["height"].as_u64()),
            (Some(96), Some(64))
        );
        assert_eq!(row["same_flows"], true);
        assert_eq!(row["same_masks"], true);
        let stages: Vec<&str> = row["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[0].as_str().unwrap())
            .collect();
        assert_eq!(
            stages,
            [
                "energy", "upload", "cut", "download", "engine", "cleanup", "total"
            ]
        );
        assert_eq!(row["energy"], "cpu", "the CPU engine builds on the CPU");
    }
    assert_eq!(rows[0]["continued"], 0, "a static run never continues");
}

#[test]
fn bench_sequence_times_the_wgpu_energy_beside_the_cpus_with_the_same_flows_and_masks() {
    if common::device::compute_device().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sequence.json");
    let out = livecut(&[
        "bench",
        "--sequence",
        "demo",
        "--size",
        "96x64",
        "--frames",
        "5",
        "--engine",
        "cpu",
        "--wgpu",
        "--json",
        json.to_str().unwrap(),
    ]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{table}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        table.contains("4 runs: flows identical; masks identical within each engine\n"),
        "{table}"
    );
    assert!(
        table.contains("cpu engine, wgpu energy, dynamic: median total"),
        "{table}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let energies: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["energy"].as_str().unwrap())
        .collect();
    assert_eq!(energies, ["cpu", "cpu", "wgpu", "wgpu"]);
    assert!(rows[3]["gpu"].as_str().unwrap().starts_with("wgpu on "));
}

#[test]
fn bench_sequence_needs_seeds_for_files_and_two_frames() {
    let out = livecut(&["bench", "--sequence", "demo", "--frames", "1"]);
    assert_fails_with(&out, "--frames must be at least 2");
    let dir = tempfile::tempdir().unwrap();
    let out = livecut(&["bench", "--sequence", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}
