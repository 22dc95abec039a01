//! A still camera's scene with a known answer: a textured wall with sensor noise, and
//! from frame `LEARN` on an object walking right through it.

use super::rng::Rng;
use livecut::capture::Frame;
use livecut::grid::Mask;
use std::time::Duration;

/// Frame width.
pub const W: u32 = 128;
/// Frame height.
pub const H: u32 = 96;
/// Frames of the empty scene before the object comes.
pub const LEARN: u32 = 5;

/// Where the object is in frame `index` (it walks right), if it is there.
pub fn object_at(index: u64, x: u32, y: u32) -> bool {
    let left = 8 + 2 * index as u32;
    (left..left + 14).contains(&x) && (12..36).contains(&y)
}

/// A still scene with sensor noise: a textured wall, from frame `LEARN` on an object
/// walking through, every channel times `gain` (in percent), and `shade` (percent of
/// brightness) over the region `shaded`.
pub fn scene(
    rng: &mut Rng,
    index: u64,
    gain: u32,
    shaded: impl Fn(u32, u32) -> bool,
    shade: u32,
) -> Frame {
    let mut rgb = Vec::with_capacity((3 * W * H) as usize);
    for y in 0..H {
        for x in 0..W {
            let object = index >= u64::from(LEARN) && object_at(index, x, y);
            let base = if object {
                [40, 170, 70]
            } else {
                [
                    120 + (x % 8) * 6,
                    110 + (y % 6) * 5,
                    100 + ((x + y) % 5) * 4,
                ]
            };
            let shade = if shaded(x, y) { shade } else { 100 };
            for c in base {
                let noise = rng.below(7) as i64 - 3;
                let v = i64::from(c * gain * shade / 10_000) + noise;
                rgb.push(v.clamp(0, 255) as u8);
            }
        }
    }
    Frame {
        width: W,
        height: H,
        rgb,
        timestamp: Duration::ZERO,
        index,
    }
}

/// [`scene`] without gain or shade.
pub fn plain(rng: &mut Rng, index: u64) -> Frame {
    scene(rng, index, 100, |_, _| false, 100)
}

/// The object's pixels in frame `index`.
pub fn truth(index: u64) -> Mask {
    Mask::from_fn(W, H, |i| object_at(index, i as u32 % W, i as u32 / W))
}
