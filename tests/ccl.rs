//! Connected-component labelling: the CPU labeller against a breadth-first reference,
//! the GPU labellers (CUDA, wgpu) against the CPU one (exactly the same canonical
//! labels), and mask cleanup with each. GPU tests run every GPU labeller the machine
//! has: CUDA where a device is, wgpu on any adapter (lavapipe in CI).
//!
//! Extra real masks for the GPU comparison: set `LIVECUT_CCL_MASKS` to a folder of
//! PNG masks (e.g. GrabCut ground truth); every file is labelled as it is (all grey
//! values, 4- and 8-connected).

mod common;

use common::rng::Rng;
use livecut::ccl::{
    Cleaner, CleanupParams, CleanupReport, Constraints, CpuLabeller, CudaLabeller, Labeller,
    WgpuLabeller,
};
use livecut::grid::{Connectivity, Mask};
use proptest::prelude::*;
use std::collections::VecDeque;
use std::time::Instant;

/// Canonical labels by breadth-first search from each unlabelled pixel in raster
/// order (so each component's label is its smallest index).
fn reference(values: &[u8], w: usize, h: usize, conn: Connectivity) -> Vec<u32> {
    let mut labels = vec![u32::MAX; w * h];
    let steps: &[(i64, i64)] = match conn {
        Connectivity::Four => &[(1, 0), (-1, 0), (0, 1), (0, -1)],
        Connectivity::Eight => &[
            (1, 0),
            (-1, 0),
            (0, 1),
            (0, -1),
            (1, 1),
            (-1, -1),
            (-1, 1),
            (1, -1),
        ],
    };
    for start in 0..w * h {
        if labels[start] != u32::MAX {
            continue;
        }
        labels[start] = start as u32;
        let mut queue = VecDeque::from([start]);
        while let Some(p) = queue.pop_front() {
            let (x, y) = ((p % w) as i64, (p / w) as i64);
            for &(dx, dy) in steps {
                let (nx, ny) = (x + dx, y + dy);
                if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                    continue;
                }
                let q = ny as usize * w + nx as usize;
                if labels[q] == u32::MAX && values[q] == values[p] {
                    labels[q] = start as u32;
                    queue.push_back(q);
                }
            }
        }
    }
    labels
}

fn cpu_labels(values: &[u8], w: u32, h: u32, conn: Connectivity) -> Vec<u32> {
    let mut out = Vec::new();
    CpuLabeller::new()
        .label(values, w, h, conn, &mut out)
        .expect("valid input");
    out
}

/// Deterministic pseudo-random bytes, values below `levels`.
fn noise(n: usize, levels: u8, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed);
    (0..n).map(|_| rng.below(levels as u64) as u8).collect()
}

/// A one-pixel-wide spiral path on a background: the worst case for propagation,
/// whose component is as long as a third of the image.
fn spiral(w: usize, h: usize) -> Vec<u8> {
    let mut v = vec![0u8; w * h];
    let (mut x0, mut y0, mut x1, mut y1) = (0i64, 0i64, w as i64 - 1, h as i64 - 1);
    while x0 <= x1 && y0 <= y1 {
        for x in x0..=x1 {
            v[y0 as usize * w + x as usize] = 255;
        }
        for y in y0..=y1 {
            v[y as usize * w + x1 as usize] = 255;
        }
        for x in x0..=x1 {
            v[y1 as usize * w + x as usize] = 255;
        }
        for y in (y0 + 2).min(y1)..=y1 {
            v[y as usize * w + x0 as usize] = 255;
        }
        if x0 + 1 < w as i64 && y0 + 2 < h as i64 {
            v[(y0 + 2) as usize * w + (x0 + 1) as usize] = 255;
        }
        x0 += 2;
        y0 += 2;
        x1 -= 2;
        y1 -= 2;
    }
    v
}

/// Blobs: thresholded sums of a few smooth waves, like real segmentation masks.
fn blobs(w: usize, h: usize, seed: u64) -> Vec<u8> {
    let r = noise(8, 255, seed);
    (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f64, (i / w) as f64);
            let f = (x / (9.0 + r[0] as f64 / 8.0) + r[1] as f64).sin()
                + (y / (7.0 + r[2] as f64 / 8.0) + r[3] as f64).cos()
                + ((x + y) / (13.0 + r[4] as f64 / 16.0)).sin();
            if f > 0.3 { 255 } else { 0 }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn cpu_matches_reference(
        w in 1usize..24,
        h in 1usize..24,
        levels in 2u8..4,
        seed in any::<u64>(),
        eight in any::<bool>(),
    ) {
        let values = noise(w * h, levels, seed);
        let conn = if eight { Connectivity::Eight } else { Connectivity::Four };
        prop_assert_eq!(cpu_labels(&values, w as u32, h as u32, conn), reference(&values, w, h, conn));
    }
}

#[test]
fn cpu_handles_long_components() {
    for (w, h) in [(101, 77), (1, 300), (300, 1)] {
        let values = spiral(w, h);
        for conn in [Connectivity::Four, Connectivity::Eight] {
            assert_eq!(
                cpu_labels(&values, w as u32, h as u32, conn),
                reference(&values, w, h, conn),
                "{w}x{h} {conn:?}"
            );
        }
    }
}

/// Every GPU labeller this machine has, named: CUDA where a device is (else a note),
/// wgpu on any adapter (lavapipe in CI).
fn gpus() -> Vec<(String, Box<dyn Labeller>)> {
    let mut gpus: Vec<(String, Box<dyn Labeller>)> = Vec::new();
    match CudaLabeller::new() {
        Ok(gpu) => {
            eprintln!(
                "CUDA: {} (kernels compiled in {:.1} ms)",
                gpu.device_name(),
                gpu.compile_ms()
            );
            gpus.push(("CUDA".into(), Box::new(gpu)));
        }
        Err(e) => eprintln!("note: no CUDA labeller: {e}"),
    }
    if let Some(device) = common::device::compute_device() {
        let name = format!("wgpu {}", device.adapter);
        let gpu = WgpuLabeller::new(device).expect("the wgpu labeller's shaders compile");
        gpus.push((name, Box::new(gpu)));
    }
    gpus
}

fn assert_gpu_matches(
    gpu: &mut (String, Box<dyn Labeller>),
    values: &[u8],
    w: u32,
    h: u32,
    what: &str,
) {
    let (name, gpu) = gpu;
    for conn in [Connectivity::Four, Connectivity::Eight] {
        let mut labels = Vec::new();
        let start = Instant::now();
        gpu.label(values, w, h, conn, &mut labels)
            .expect("GPU labelling");
        let gpu_ms = start.elapsed().as_secs_f64() * 1e3;
        let start = Instant::now();
        let cpu = cpu_labels(values, w, h, conn);
        let cpu_ms = start.elapsed().as_secs_f64() * 1e3;
        let differ = labels.iter().zip(&cpu).filter(|(a, b)| a != b).count();
        assert_eq!(
            differ, 0,
            "{name}: {what} {w}x{h} {conn:?}: {differ} labels differ"
        );
        let components = cpu
            .iter()
            .enumerate()
            .filter(|&(i, &l)| l as usize == i)
            .count();
        eprintln!(
            "{name}: {what:<22} {w:>5}x{h:<5} {:>2}C {components:>7} components  identical  (GPU {gpu_ms:.2} ms incl. copies, CPU {cpu_ms:.2} ms)",
            conn.number(),
        );
    }
}

#[test]
fn gpu_matches_cpu_on_small_grids() {
    for mut gpu in gpus() {
        for (w, h) in [
            (1, 1),
            (1, 37),
            (37, 1),
            (31, 9),
            (33, 8),
            (64, 64),
            (65, 17),
        ] {
            for (levels, seed) in [(2, 1), (3, 2), (2, 3)] {
                let values = noise(w * h, levels, seed);
                assert_gpu_matches(&mut gpu, &values, w as u32, h as u32, "random");
            }
        }
    }
}

#[test]
fn gpu_matches_cpu_on_large_and_adversarial_grids() {
    for mut gpu in gpus() {
        for (w, h) in [(640, 480), (854, 480), (1920, 1080)] {
            let values = noise(w * h, 2, w as u64);
            assert_gpu_matches(&mut gpu, &values, w as u32, h as u32, "random 50%");
            assert_gpu_matches(
                &mut gpu,
                &blobs(w, h, h as u64),
                w as u32,
                h as u32,
                "blobs",
            );
            assert_gpu_matches(&mut gpu, &spiral(w, h), w as u32, h as u32, "spiral");
        }
        assert_gpu_matches(&mut gpu, &vec![7u8; 1920 * 1080], 1920, 1080, "uniform");
    }
}

#[test]
fn gpu_matches_cpu_on_real_masks() {
    let Ok(dir) = std::env::var("LIVECUT_CCL_MASKS") else {
        eprintln!("skipped: LIVECUT_CCL_MASKS is not set");
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("LIVECUT_CCL_MASKS is a folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no PNG in {dir}");
    let mut gpus = gpus();
    for path in files {
        let grey = image::open(&path).expect("PNG").into_luma8();
        let (w, h) = grey.dimensions();
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        for gpu in &mut gpus {
            assert_gpu_matches(gpu, grey.as_raw(), w, h, &name);
        }
    }
}

/// Cleans `mask` with `labeller`, no pixel fixed: components under `min_area` pixels
/// or with no pixel where `anchor` holds are dropped, holes under `min_area` filled.
fn clean_anchored(
    mask: &mut Mask,
    connectivity: Connectivity,
    min_area: u32,
    anchor: &dyn Fn(usize) -> bool,
    labeller: &mut dyn Labeller,
) -> CleanupReport {
    let constraints = Constraints {
        fixed_foreground: None,
        fixed_background: None,
        anchor: Some(anchor),
    };
    let params = CleanupParams {
        connectivity,
        min_area,
        drop_unanchored: true,
        smooth: false,
    };
    Cleaner::new()
        .clean(mask, &params, &constraints, labeller)
        .unwrap()
}

#[test]
fn cleanup_is_the_same_with_either_labeller() {
    let (w, h) = (300, 200);
    let mask = Mask {
        width: w,
        height: h,
        data: blobs(w as usize, h as usize, 5),
    };
    let anchor = |p: usize| p.is_multiple_of(997);
    let clean = |mask: &mut Mask, labeller: &mut dyn Labeller| {
        clean_anchored(mask, Connectivity::Eight, 150, &anchor, labeller)
    };
    let mut on_cpu = mask.clone();
    let a = clean(&mut on_cpu, &mut CpuLabeller::new());
    assert!(a.changed_pixels > 0, "the fixture has something to clean");
    for (name, mut gpu) in gpus() {
        let mut on_gpu = mask.clone();
        let b = clean(&mut on_gpu, gpu.as_mut());
        assert_eq!(a, b, "{name}");
        assert_eq!(on_cpu, on_gpu, "{name}");
    }
}

#[test]
fn cleanup_keeps_the_anchored_object_and_fills_its_holes() {
    // A 20x20 square with a 2x2 hole, plus a speck and an unanchored square.
    let (w, h) = (60u32, 40u32);
    let mask = Mask::from_fn(w, h, |i| {
        let (x, y) = (i as u32 % w, i as u32 / w);
        let square = (5..25).contains(&x)
            && (5..25).contains(&y)
            && !((10..12).contains(&x) && (10..12).contains(&y));
        let speck = x == 40 && y == 3;
        let other = (35..45).contains(&x) && (20..30).contains(&y);
        square || speck || other
    });
    let anchor = |i: usize| i == (15 * w + 15) as usize;
    let mut cleaned = mask.clone();
    let report = clean_anchored(
        &mut cleaned,
        Connectivity::Four,
        10,
        &anchor,
        &mut CpuLabeller::new(),
    );
    assert_eq!(report.dropped_components, 2);
    assert_eq!(report.filled_holes, 1);
    assert_eq!(cleaned.count_source(), 400);
}
