//! Criterion benchmarks of the CPU engine on generated segmentation scenes (no data
//! files needed): a noisy bright disk on a textured background with a colour-model
//! data term and a contrast-sensitive smoothness term, as the app builds them.
//!
//! `cargo bench --bench maxflow` times `solve` from scratch at 640×480 (4C, 8C) and
//! 1280×720 (4C), and `update` between two frames where the disk moved.

use criterion::{Criterion, criterion_group, criterion_main};
use livecut::grid::{Connectivity, GridProblem};
use livecut::maxflow::Engine;
use livecut::maxflow::cpu::CpuEngine;
use std::hint::black_box;

/// Grey image: a disk (mean 170) centred at (cx, cy) on a background (mean 70) with
/// stripes and pseudo-random noise, deterministic.
fn scene(w: u32, h: u32, cx: f64, cy: f64) -> Vec<f64> {
    let r = 0.3 * w.min(h) as f64;
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 1000) as f64 / 1000.0 - 0.5
    };
    let mut img = Vec::with_capacity((w * h) as usize);
    for y in 0..h {
        for x in 0..w {
            let (dx, dy) = (x as f64 - cx, y as f64 - cy);
            let inside = dx * dx + dy * dy < r * r;
            let base = if inside {
                170.0
            } else {
                70.0 + 25.0 * ((x / 16 + y / 24) % 2) as f64
            };
            img.push(base + 60.0 * noise());
        }
    }
    img
}

/// Segmentation energy of `img`: t-links round(10·(I−µ)²/(2·40²)) against the two
/// means (folded), neighbour arcs round(500·exp(−ΔI²/2σ²)/dist).
fn problem(img: &[f64], w: u32, h: u32, c: Connectivity) -> GridProblem {
    let n = (w * h) as usize;
    let cost =
        |v: f64, mean: f64| (10.0 * (v - mean).powi(2) / (2.0 * 40.0f64.powi(2))).round() as i32;
    let (mut source, mut sink) = (vec![0; n], vec![0; n]);
    for (i, &v) in img.iter().enumerate() {
        let (bg, fg) = (cost(v, 70.0), cost(v, 170.0));
        let m = bg.min(fg);
        source[i] = bg - m;
        sink[i] = fg - m;
    }
    let mut sum = 0.0;
    let mut pairs = 0.0f64;
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            if x + 1 < w {
                sum += (img[i] - img[i + 1]).powi(2);
                pairs += 1.0;
            }
            if y + 1 < h {
                sum += (img[i] - img[i + w as usize]).powi(2);
                pairs += 1.0;
            }
        }
    }
    let two_sigma2 = (2.0 * sum / pairs.max(1.0)).max(1e-9);
    let edges = c
        .directions()
        .iter()
        .map(|&dir| {
            let (dx, dy) = dir.offset();
            let dist = ((dx * dx + dy * dy) as f64).sqrt();
            (0..n)
                .map(|i| {
                    let (x, y) = ((i as u32 % w) as i64, (i as u32 / w) as i64);
                    let (nx, ny) = (x + dx as i64, y + dy as i64);
                    if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                        return 0;
                    }
                    let d2 = (img[i] - img[(ny * w as i64 + nx) as usize]).powi(2);
                    (500.0 * (-d2 / two_sigma2).exp() / dist).round() as i32
                })
                .collect()
        })
        .collect();
    GridProblem::from_arrays(w, h, c, source, sink, edges).expect("generated problem is valid")
}

fn solve_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_solve");
    group.sample_size(10);
    for (w, h, conn) in [
        (640, 480, Connectivity::Four),
        (640, 480, Connectivity::Eight),
        (1280, 720, Connectivity::Four),
    ] {
        let img = scene(w, h, w as f64 / 2.0, h as f64 / 2.0);
        let p = problem(&img, w, h, conn);
        let mut engine = CpuEngine::new();
        group.bench_function(format!("{w}x{h}_{}c", conn.number()), |b| {
            b.iter(|| black_box(engine.solve(&p).expect("solve").flow))
        });
    }
    group.finish();
}

fn update_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_update");
    group.sample_size(10);
    let (w, h) = (640, 480);
    for conn in [Connectivity::Four, Connectivity::Eight] {
        let frames = [320.0, 324.0].map(|cx| problem(&scene(w, h, cx, 240.0), w, h, conn));
        let mut engine = CpuEngine::new();
        engine.solve(&frames[0]).expect("solve");
        let mut next = 1;
        group.bench_function(format!("{w}x{h}_{}c_disk_moved_4px", conn.number()), |b| {
            b.iter(|| {
                let s = engine.update(&frames[next]).expect("update");
                next ^= 1;
                black_box(s.flow)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, solve_benches, update_benches);
criterion_main!(benches);
