//! The passes that touch every pixel of a frame, each on one thread and on two
//! (`livecut::bands`) in the same run: the noise gate's comparison, a camera's YUYV and NV12
//! frames to RGB, the soft alpha, the composites the window and the virtual camera
//! show (cut-out, blurred background), and the composite packed to YUYV for the
//! virtual camera. Frames are the demo scene's at 1280×720 and 1920×1080, masks its
//! true foreground.
//!
//! `cargo bench --bench passes` prints the median milliseconds of each pass on one
//! thread and on two (runs alternate) and the ratio, one thread over two, and their
//! sum (the passes marked *; the soft alpha is part of both composites). Two rows
//! are for comparison: the conversion into a fresh buffer, as a camera's frame is
//! (its pages are new to the process each time), and a plain copy of the frame, what
//! memory alone allows.

use image::RgbaImage;
use livecut::bands;
use livecut::capture::{DemoScene, Frame, yuv};
use livecut::composite::{Backdrop, Buffers, Composite, alpha::AlphaBuffers};
use livecut::grid::Mask;
use livecut::output::yuyv_of;
use livecut::pipeline::NoiseGate;
use std::hint::black_box;
use std::time::Instant;

const SIZES: [(u32, u32); 2] = [(1280, 720), (1920, 1080)];
const RUNS: usize = 40;
const WARMUP: usize = 3;
/// The segmenter's default noise gate.
const GATE: u8 = 10;
/// Between runs.
const PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

/// What one pass needs: two consecutive frames, the mask of the second, and the
/// second frame in the camera formats and as an opaque composite.
struct Input {
    held: Frame,
    frame: Frame,
    mask: Mask,
    yuyv: Vec<u8>,
    nv12: Vec<u8>,
    rgba: RgbaImage,
}

impl Input {
    fn new(w: u32, h: u32) -> Self {
        let scene = DemoScene::new(w, h, 30, 1);
        let (held, _) = scene.render(3);
        let (frame, mask) = scene.render(4);
        let rgba = Composite::CutOut.compose(&frame, &mask);
        let mut yuyv = Vec::new();
        yuyv_of(
            &Composite::CutOut.compose(&frame, &Mask::from_fn(w, h, |_| true)),
            &mut yuyv,
        );
        let nv12 = nv12_of(&yuyv, w as usize, h as usize);
        Self {
            held,
            frame,
            mask,
            yuyv,
            nv12,
            rgba,
        }
    }
}

/// NV12 planes from a YUYV frame: its Y, and the chroma of its even rows.
fn nv12_of(yuyv: &[u8], w: usize, h: usize) -> Vec<u8> {
    let luma = yuyv.iter().step_by(2).copied();
    let chroma = yuyv
        .chunks_exact(2 * w)
        .step_by(2)
        .flat_map(|row| row.iter().skip(1).step_by(2).copied());
    let nv12: Vec<u8> = luma.chain(chroma).collect();
    assert_eq!(nv12.len(), w * h * 3 / 2);
    nv12
}

/// A pass, with the state it keeps between frames.
type Pass<'a> = Box<dyn FnMut() + 'a>;

/// The passes over `input`, by name.
fn passes(input: &Input) -> Vec<(&'static str, Pass<'_>)> {
    let (w, h) = (input.frame.width, input.frame.height);
    // a gate and its turn for each thread count, so that both gate the same frames
    let (mut gates, mut turns) = ([NoiseGate::default(), NoiseGate::default()], [0, 0]);
    let mut alpha = AlphaBuffers::default();
    let (mut cut, mut cut_out) = (Buffers::default(), RgbaImage::default());
    let (mut blur, mut blurred) = (Buffers::default(), RgbaImage::default());
    let mut packed = Vec::new();
    let (mut from_yuyv, mut from_nv12) = (Vec::new(), Vec::new());
    let mut copy = vec![0u8; input.frame.rgb.len()];
    let blur_composite = Composite::Background(Backdrop::Blur);
    vec![
        (
            "gate *",
            Box::new(move || {
                // the two frames in turn, each gated against what the other left
                let k = bands::threads().min(2) - 1;
                let frame = [&input.held, &input.frame][turns[k] % 2];
                turns[k] += 1;
                black_box(gates[k].pass(&frame.rgb, w, h, GATE));
            }),
        ),
        (
            "YUYV to RGB *",
            Box::new(move || {
                black_box(yuv::yuyv_to_rgb_into(&input.yuyv, w, h, &mut from_yuyv));
            }),
        ),
        (
            "YUYV to RGB, fresh buffer",
            Box::new(move || {
                black_box(yuv::yuyv_to_rgb(&input.yuyv, w, h));
            }),
        ),
        (
            "NV12 to RGB *",
            Box::new(move || {
                black_box(yuv::nv12_to_rgb_into(&input.nv12, w, h, &mut from_nv12));
            }),
        ),
        (
            "soft alpha (in both below)",
            Box::new(move || {
                black_box(alpha.compute(&input.frame, &input.mask));
            }),
        ),
        (
            "cut-out composite *",
            Box::new(move || {
                Composite::CutOut.compose_into(&input.frame, &input.mask, &mut cut, &mut cut_out);
                black_box(&cut_out);
            }),
        ),
        (
            "blurred-background comp. *",
            Box::new(move || {
                blur_composite.compose_into(&input.frame, &input.mask, &mut blur, &mut blurred);
                black_box(&blurred);
            }),
        ),
        (
            "frame copy (memory only)",
            Box::new(move || {
                bands::copy(&mut copy, &input.frame.rgb, 3 * w as usize);
                black_box(&copy);
            }),
        ),
        (
            "YUYV packing *",
            Box::new(move || {
                yuyv_of(&input.rgba, &mut packed);
                black_box(&packed);
            }),
        ),
    ]
}

/// Median milliseconds of `pass` on one thread and on two, runs alternating between
/// them, each after a pause (frames come every few milliseconds: helper threads start
/// each pass asleep, as in the program).
fn medians(pass: &mut Pass<'_>) -> [f64; 2] {
    let mut ms = [Vec::new(), Vec::new()];
    for run in 0..WARMUP + RUNS {
        for (threads, ms) in [1, 2].into_iter().zip(&mut ms) {
            std::thread::sleep(PAUSE);
            let start = Instant::now();
            bands::with_threads(threads, &mut *pass);
            if run >= WARMUP {
                ms.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    ms.map(|mut ms| {
        ms.sort_by(f64::total_cmp);
        ms[ms.len() / 2]
    })
}

fn main() {
    println!(
        "{:<30} {:>10} {:>9} {:>9} {:>6}",
        "pass", "size", "1 thread", "2 threads", "ratio"
    );
    for (w, h) in SIZES {
        let input = Input::new(w, h);
        let mut total = [0.0; 2];
        for (name, mut pass) in passes(&input) {
            let [one, two] = medians(&mut pass);
            if name.ends_with('*') {
                total = [total[0] + one, total[1] + two];
            }
            let size = format!("{w}x{h}");
            println!(
                "{name:<30} {size:>10} {one:>9.3} {two:>9.3} {:>5.2}x",
                one / two
            );
        }
        let [one, two] = total;
        let size = format!("{w}x{h}");
        println!(
            "{:<30} {size:>10} {one:>9.3} {two:>9.3} {:>5.2}x",
            "sum of the passes marked *",
            one / two
        );
    }
}
