//! A camera's MJPEG frame decoded to RGB, as the capture thread does it
//! (`capture::camera::decode_jpeg`, zune-jpeg) beside nokhwa's own decoder, in one run:
//! the demo scene's frame at 1280×720 and 1920×1080, JPEG quality 85 as webcams send.
//!
//! `cargo bench --bench decode` prints the median and fastest of 60 decodes of each,
//! wall clock on one thread.

use livecut::capture::DemoScene;
use livecut::capture::camera::decode_jpeg;
use nokhwa::pixel_format::RgbFormat;
use nokhwa::utils::{FrameFormat, Resolution};
use std::hint::black_box;
use std::time::Instant;

const SIZES: [(u32, u32); 2] = [(1280, 720), (1920, 1080)];
const RUNS: usize = 60;

/// Median and fastest of `RUNS` calls of `f`, in milliseconds.
fn time(mut f: impl FnMut()) -> (f64, f64) {
    let mut ms: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (ms[RUNS / 2], ms[0])
}

fn main() {
    for (w, h) in SIZES {
        let (frame, _) = DemoScene::new(w, h, 30, 1).render(3);
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 85)
            .encode(&frame.rgb, w, h, image::ExtendedColorType::Rgb8)
            .expect("the frame encodes");
        let ours = time(|| {
            black_box(decode_jpeg(&jpeg, w, h).expect("decodes"));
        });
        let buffer = nokhwa::Buffer::new(Resolution::new(w, h), &jpeg, FrameFormat::MJPEG);
        let nokhwa = time(|| {
            black_box(buffer.decode_image::<RgbFormat>().expect("decodes"));
        });
        println!(
            "{w}x{h} MJPEG ({} kB): livecut {:.2} ms (fastest {:.2}), nokhwa {:.2} ms (fastest {:.2}), {:.2}x",
            jpeg.len() / 1024,
            ours.0,
            ours.1,
            nokhwa.0,
            nokhwa.1,
            nokhwa.0 / ours.0
        );
    }
}
