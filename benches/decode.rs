//! A camera's MJPEG frame decoded to RGB, as the capture thread does it
//! (`capture::camera::decode_jpeg`, libjpeg-turbo in parts) on one thread and on two,
//! beside nokhwa's own decoder, in one run: the demo scene's frame at 1280×720 and
//! 1920×1080, JPEG quality 85, as webcams send it (4:2:2 chroma, the UVC MJPEG
//! format), without restart markers and with one after every row of MCUs (which many
//! webcams write), 4:2:0 (which many send too), and with full chroma (4:4:4, what the
//! `image` crate's encoder writes).
//!
//! `cargo bench --bench decode` prints the median and fastest of 60 decodes of each.

#[path = "../tests/common/webcam_jpeg.rs"]
mod webcam_jpeg;

use livecut::bands;
use livecut::capture::DemoScene;
use livecut::capture::camera::decode_jpeg;
use nokhwa::pixel_format::RgbFormat;
use nokhwa::utils::{FrameFormat, Resolution};
use std::hint::black_box;
use std::time::{Duration, Instant};
use webcam_jpeg::{webcam_jpeg, webcam_jpeg_sampled};

const SIZES: [(u32, u32); 2] = [(1280, 720), (1920, 1080)];
const RUNS: usize = 60;
const QUALITY: u8 = 85;
/// Before each decode: frames come every few milliseconds, and the helper thread
/// starts each one asleep, as in the program.
const PAUSE: Duration = Duration::from_millis(5);

/// Median and fastest of `RUNS` calls of `f`, in milliseconds.
fn time(mut f: impl FnMut()) -> (f64, f64) {
    let mut ms: Vec<f64> = (0..RUNS)
        .map(|_| {
            std::thread::sleep(PAUSE);
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (ms[RUNS / 2], ms[0])
}

/// A JPEG of `rgb` from the `image` crate's encoder (4:4:4, no markers).
fn full_chroma_jpeg(rgb: &[u8], w: u32, h: u32) -> Vec<u8> {
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, QUALITY)
        .encode(rgb, w, h, image::ExtendedColorType::Rgb8)
        .expect("the frame encodes");
    jpeg
}

fn main() {
    for (w, h) in SIZES {
        let (frame, _) = DemoScene::new(w, h, 30, 1).render(3);
        let quality = i32::from(QUALITY);
        let kinds = [
            ("4:2:2", webcam_jpeg(&frame.rgb, w, h, quality, 0)),
            ("4:2:2, markers", webcam_jpeg(&frame.rgb, w, h, quality, 1)),
            (
                "4:2:0",
                webcam_jpeg_sampled(&frame.rgb, w, h, quality, 0, 2),
            ),
            ("4:4:4", full_chroma_jpeg(&frame.rgb, w, h)),
        ];
        for (chroma, jpeg) in kinds {
            let [one, two] = [1, 2].map(|threads| {
                bands::with_threads(threads, || {
                    time(|| {
                        black_box(decode_jpeg(&jpeg, w, h).expect("decodes"));
                    })
                })
            });
            let buffer = nokhwa::Buffer::new(Resolution::new(w, h), &jpeg, FrameFormat::MJPEG);
            let nokhwa = time(|| {
                black_box(buffer.decode_image::<RgbFormat>().expect("decodes"));
            });
            println!(
                "{w}x{h} MJPEG {chroma:<14} ({:>3} kB): livecut {:.2} ms (fastest {:.2}), on 2 threads {:.2} ms (fastest {:.2}), nokhwa {:.2} ms (fastest {:.2})",
                jpeg.len() / 1024,
                one.0,
                one.1,
                two.0,
                two.1,
                nokhwa.0,
                nokhwa.1,
            );
        }
    }
}
