//! Criterion benchmark of the demo scene's render, one frame on one thread at 640×480
//! and 1920×1080 for each camera motion, so that a source is seen never to be the
//! bottleneck.
//!
//! `cargo bench --bench demo` prints criterion's estimates and then, per case, the
//! median time of one `DemoScene::render` call over every call criterion made: wall
//! clock, and the calling thread's CPU time, which other processes on a shared machine
//! do not inflate.

use criterion::{Criterion, criterion_group, criterion_main};
use livecut::capture::{DemoMotion, DemoScene};
use std::hint::black_box;
use std::time::{Duration, Instant};

const SIZES: [(u32, u32); 2] = [(640, 480), (1920, 1080)];

/// CPU time this thread has used.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn median_ms(mut times: Vec<Duration>) -> f64 {
    times.sort_unstable();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn render(c: &mut Criterion) {
    let mut group = c.benchmark_group("demo_render");
    let mut lines = Vec::new();
    for motion in DemoMotion::ALL {
        for (w, h) in SIZES {
            let scene = DemoScene::with_motion(w, h, 30, 1, motion);
            let name = format!("{}/{w}x{h}", motion.name());
            let (mut wall, mut cpu) = (Vec::new(), Vec::new());
            let mut index = 0;
            group.bench_function(&name, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        index += 1;
                        let (start, start_cpu) = (Instant::now(), thread_cpu_time());
                        black_box(scene.render(index));
                        let (took, took_cpu) = (start.elapsed(), thread_cpu_time() - start_cpu);
                        wall.push(took);
                        cpu.push(took_cpu);
                        total += took;
                    }
                    total
                })
            });
            let calls = wall.len();
            let (wall, cpu) = (median_ms(wall), median_ms(cpu));
            lines.push(format!(
                "demo render {name}: median {wall:.2} ms wall, {cpu:.2} ms CPU over {calls} calls"
            ));
        }
    }
    group.finish();
    for line in lines {
        println!("{line}");
    }
}

criterion_group!(benches, render);
criterion_main!(benches);
