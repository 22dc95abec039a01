//! MJPEG frames to RGB with libjpeg-turbo, split over every core.
//!
//! Huffman decoding is one serial chain through the scan, but libjpeg-turbo can pass
//! over rows by their Huffman codes alone (no inverse DCT, upsampling or colour
//! conversion), a fraction of what decoding them costs. So a frame is cut into one
//! part of whole MCU rows per thread: each part passes over the rows above it, then
//! decodes its own, and parts lower down are shorter by what their pass costs, so
//! that all end together. One thread takes parts from the top, going on from one to
//! the next with the same decoder (no rows to pass over), the others from the bottom:
//! where no helper is free, the frame costs one decode, not more. The pass's share of
//! a decode depends on the frame's content and on the build (libjpeg-turbo's SIMD
//! needs `nasm`), so it is measured on every frame and the next one is cut by it.
//! libjpeg-turbo's pass keeps the context that upsampling blends across MCU rows
//! (4:2:0), so the parts give the bytes of a whole decode at any chroma subsampling.

use super::libjpeg::Decoder;
use crate::bands;
use std::cell::Cell;
use std::mem::MaybeUninit;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The share of a decode that passing over a row costs, before any is measured.
const FIRST_PASS_SHARE: f64 = 0.4;

thread_local! {
    /// The pass's share of a decode, measured on the last frames this thread decoded.
    static PASS_SHARE: Cell<f64> = const { Cell::new(FIRST_PASS_SHARE) };
}

/// A JPEG frame as the RGB bytes of a `width`×`height` picture; `None` if it does not
/// decode whole (strict: a cut-off frame is refused, not filled in) or has another size.
pub(super) fn decode(bytes: &[u8], width: u32, height: u32) -> Option<Vec<u8>> {
    let ended;
    let bytes = if ends_with_its_marker(bytes) {
        bytes
    } else {
        ended = [bytes, &EOI].concat();
        &ended
    };
    let (w, h) = (width as usize, height as usize);
    let header = Decoder::open(bytes)?;
    if header.size() != (w, h) || w == 0 || h == 0 {
        return None;
    }
    let unit = header.mcu_rows();
    drop(header);
    let share = PASS_SHARE.get();
    let cuts = cuts(h, unit, bands::threads(), share);
    let (rgb, shares) = decode_cut(bytes, w, &cuts, |parts| {
        bands::for_each_part((0..cuts.len() - 1).collect(), |seat| {
            if seat == 0 {
                parts.decode_from_top();
            } else {
                parts.decode_from_bottom();
            }
        });
    });
    if !shares.is_empty() {
        let measured = shares.iter().sum::<f64>() / shares.len() as f64;
        PASS_SHARE.set(((share + measured) / 2.0).clamp(0.05, 0.95));
    }
    rgb
}

/// The end-of-image marker.
const EOI: [u8; 2] = [0xFF, 0xD9];

/// Whether a frame ends with its end-of-image marker (padding after it allowed). Some
/// webcams leave it out; libjpeg would then read past the scan's last byte and warn,
/// so the caller adds it: a frame that is whole decodes, and one cut short still meets
/// the marker before its scan ends and is refused.
fn ends_with_its_marker(bytes: &[u8]) -> bool {
    let data = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    bytes[..data].ends_with(&EOI)
}

/// Decodes a frame `w` pixels wide cut at `cuts` (where its parts start, then its
/// height), its parts decoded by `run`; returns the picture, `None` if a part failed,
/// and the pass's shares the parts measured.
fn decode_cut(
    bytes: &[u8],
    w: usize,
    cuts: &[usize],
    run: impl FnOnce(&Parts),
) -> (Option<Vec<u8>>, Vec<f64>) {
    let len = 3 * w * cuts.last().copied().unwrap_or(0);
    // every byte is written before the frame is returned (or it is dropped)
    let mut rgb: Vec<u8> = Vec::with_capacity(len);
    let mut outs = Vec::with_capacity(cuts.len().saturating_sub(1));
    let mut rest = &mut rgb.spare_capacity_mut()[..len];
    for rows in cuts.windows(2) {
        let (part, tail) = rest.split_at_mut(3 * w * (rows[1] - rows[0]));
        outs.push(Mutex::new(Some(part)));
        rest = tail;
    }
    let parts = Parts {
        bytes,
        cuts,
        unclaimed: Mutex::new(0..outs.len()),
        outs,
        shares: Mutex::new(Vec::new()),
        failed: AtomicBool::new(false),
    };
    run(&parts);
    let shares = parts.shares.into_inner().unwrap_or_else(|e| e.into_inner());
    let done = !parts.failed.into_inner() && parts.outs.iter().all(|o| lock(o).is_none());
    if !done {
        return (None, shares);
    }
    // SAFETY: the parts tile the frame's rows, and each was decoded whole.
    unsafe { rgb.set_len(len) };
    (Some(rgb), shares)
}

/// A frame's parts as they are claimed: one thread takes them from the top, each
/// where its decoder stopped (no rows to pass over), the others from the bottom, each
/// passing over the rows above its part. Where no helper comes (a busy pool), the
/// top's thread decodes the frame as one decode would.
struct Parts<'a, 'o> {
    bytes: &'a [u8],
    /// Where each part starts, then the frame's height.
    cuts: &'a [usize],
    /// Each part's rows of the picture, taken by the thread that claims it.
    outs: Vec<Mutex<Option<&'o mut [MaybeUninit<u8>]>>>,
    /// The parts no thread has claimed yet (always a run).
    unclaimed: Mutex<std::ops::Range<usize>>,
    /// The pass's share of a decode, as each part that passed over rows measured it.
    shares: Mutex<Vec<f64>>,
    failed: AtomicBool,
}

impl Parts<'_, '_> {
    /// Claims the top (or bottom) unclaimed part, if any.
    fn claim(&self, top: bool) -> Option<usize> {
        let mut unclaimed = lock(&self.unclaimed);
        if top {
            unclaimed.next()
        } else {
            unclaimed.next_back()
        }
    }

    /// The rows of part `i`, for the thread that claimed it.
    fn out(&self, i: usize) -> &mut [MaybeUninit<u8>] {
        lock(&self.outs[i]).take().expect("a part is claimed once")
    }

    /// Decodes parts from the top, one decoder going on from each to the next.
    fn decode_from_top(&self) {
        let Some(first) = self.claim(true) else {
            return;
        };
        let Some(mut decoder) = self.start(first) else {
            return self.failed.store(true, Ordering::Relaxed);
        };
        let mut part = Some(first);
        while let Some(i) = part {
            if decoder.read(self.out(i)).is_none() {
                return self.failed.store(true, Ordering::Relaxed);
            }
            part = self.claim(true);
        }
    }

    /// Decodes parts from the bottom, each passing over the rows above it.
    fn decode_from_bottom(&self) {
        while let Some(i) = self.claim(false) {
            let rows = self.cuts[i + 1] - self.cuts[i];
            let start = Instant::now();
            let Some(mut decoder) = self.start(i) else {
                return self.failed.store(true, Ordering::Relaxed);
            };
            let passed = start.elapsed().as_secs_f64();
            if decoder.read(self.out(i)).is_none() {
                return self.failed.store(true, Ordering::Relaxed);
            }
            let decoded = start.elapsed().as_secs_f64() - passed;
            let first = self.cuts[i];
            if first > 0 && decoded > 0.0 {
                let share = (passed / first as f64) / (decoded / rows as f64);
                lock(&self.shares).push(share);
            }
        }
    }

    /// A decoder started at part `i`'s first row, the rows above passed over.
    fn start(&self, i: usize) -> Option<Decoder<'_>> {
        let mut decoder = Decoder::open(self.bytes)?;
        decoder.start()?;
        decoder.skip(self.cuts[i])?;
        Some(decoder)
    }
}

/// The lock of `m`, taken even where another thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A part more must shorten the decode by at least this share to be worth the rows it
/// passes over (CPU time, which many cores would otherwise spend on passes).
const WORTH: f64 = 0.1;

/// Where parts of a frame `h` rows tall start, on up to `threads` threads, in rows of
/// `unit`, with `h` last: part k passes over the rows above it at `share` of a
/// decode's cost, so equal times ask part k+1 to start at
/// `a(k+1) = a(k)·(1 − share) + a(1)`, a geometric series from `a(1)`, the decode's
/// time. Parts are added while one more shortens it by [`WORTH`].
fn cuts(h: usize, unit: usize, threads: usize, share: f64) -> Vec<usize> {
    let keep = 1.0 - share;
    let time = |parts: usize| share / (1.0 - keep.powi(parts as i32));
    let parts = (1..threads.max(1))
        .take_while(|&n| time(n + 1) <= time(n) * (1.0 - WORTH))
        .count()
        + 1;
    let first = time(parts);
    let mut cuts = vec![0];
    let mut at = 0.0;
    for _ in 1..parts {
        at = at * keep + first;
        let row = ((at * h as f64 / unit as f64).round() as usize * unit).min(h);
        if row > *cuts.last().expect("starts at 0") && row < h {
            cuts.push(row);
        }
    }
    cuts.push(h);
    cuts
}

#[cfg(test)]
#[path = "../../tests/common/webcam_jpeg.rs"]
mod webcam_jpeg;

#[cfg(test)]
mod tests {
    use super::webcam_jpeg::{webcam_jpeg, webcam_jpeg_sampled};
    use super::*;
    use crate::bands::with_threads;
    use crate::capture::DemoScene;

    /// A JPEG of `rgb` from the `image` crate's encoder (4:4:4).
    fn full_chroma(rgb: &[u8], w: u32, h: u32) -> Vec<u8> {
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 85)
            .encode(rgb, w, h, image::ExtendedColorType::Rgb8)
            .expect("encodes");
        jpeg
    }

    /// `jpeg` without its Huffman tables, as many webcams send MJPEG.
    fn without_huffman_tables(jpeg: &[u8]) -> Vec<u8> {
        let (mut out, mut at) = (jpeg[..2].to_vec(), 2);
        while jpeg[at + 1] != 0xDA {
            let len = 2 + usize::from(u16::from_be_bytes([jpeg[at + 2], jpeg[at + 3]]));
            if jpeg[at + 1] != 0xC4 {
                out.extend_from_slice(&jpeg[at..at + len]);
            }
            at += len;
        }
        out.extend_from_slice(&jpeg[at..]);
        out
    }

    #[test]
    fn parts_give_the_bytes_of_a_whole_decode() {
        for (w, h) in [(320, 240), (322, 200), (200, 173), (64, 48), (48, 8)] {
            let (frame, _) = DemoScene::new(w, h, 30, 4).render(2);
            let plain = webcam_jpeg(&frame.rgb, w, h, 85, 0);
            let kinds = [
                webcam_jpeg(&frame.rgb, w, h, 85, 1),
                webcam_jpeg_sampled(&frame.rgb, w, h, 85, 0, 2),
                without_huffman_tables(&plain),
                full_chroma(&frame.rgb, w, h),
                plain,
            ];
            for jpeg in kinds {
                let whole = with_threads(1, || decode(&jpeg, w, h)).expect("decodes");
                let error = whole.iter().zip(&frame.rgb);
                let error = error.map(|(&a, &b)| u64::from(a.abs_diff(b))).sum::<u64>();
                assert!(
                    error < 12 * whole.len() as u64,
                    "{w}x{h}: close to the frame"
                );
                for (threads, share) in [(2, 0.1), (2, 0.8), (3, 0.6), (3, 0.3)] {
                    PASS_SHARE.set(share);
                    let got = with_threads(threads, || decode(&jpeg, w, h));
                    assert!(got.as_ref() == Some(&whole), "{w}x{h} on {threads} threads");
                }
            }
        }
    }

    /// However the parts are claimed (all by the top's thread, as where no helper
    /// comes; all from the bottom; alternately), the frame is the same.
    #[test]
    fn any_order_of_claims_gives_the_same_frame() {
        let (w, h) = (322, 200);
        let (frame, _) = DemoScene::new(w, h, 30, 4).render(2);
        let jpeg = webcam_jpeg(&frame.rgb, w, h, 85, 0);
        let whole = with_threads(1, || decode(&jpeg, w, h)).expect("decodes");
        let cuts = [0, 48, 96, 160, 200];
        let w = w as usize;
        let (top, _) = decode_cut(&jpeg, w, &cuts, |p| p.decode_from_top());
        let (bottom, shares) = decode_cut(&jpeg, w, &cuts, |p| p.decode_from_bottom());
        let (mixed, _) = decode_cut(&jpeg, w, &cuts, |p| {
            std::thread::scope(|s| {
                s.spawn(|| p.decode_from_bottom());
                p.decode_from_top();
            })
        });
        for got in [top, bottom, mixed] {
            assert!(got.as_ref() == Some(&whole));
        }
        assert_eq!(
            shares.len(),
            4 - 1,
            "every part but the top passed over rows"
        );
        let (none, _) = decode_cut(&jpeg, w, &cuts, |_| {});
        assert!(none.is_none(), "parts left undecoded");
    }

    #[test]
    fn cut_off_corrupt_or_other_sized_frames_decode_not_at_all() {
        let (w, h) = (320, 240);
        let (frame, _) = DemoScene::new(w, h, 30, 4).render(2);
        let jpeg = webcam_jpeg(&frame.rgb, w, h, 85, 0);
        for threads in [1, 2] {
            for cut in [
                0,
                1,
                300,
                jpeg.len() / 3,
                jpeg.len() * 2 / 3,
                jpeg.len() - 40,
            ] {
                let got = with_threads(threads, || decode(&jpeg[..cut], w, h));
                assert!(got.is_none(), "cut at {cut} on {threads} threads");
            }
            let mut corrupt = jpeg.clone();
            corrupt[jpeg.len() / 2..jpeg.len() / 2 + 64].fill(0xFF);
            assert!(with_threads(threads, || decode(&corrupt, w, h)).is_none());
            assert!(with_threads(threads, || decode(&jpeg, w, h + 8)).is_none());
            assert!(with_threads(threads, || decode(&jpeg, w, h)).is_some());
        }
    }

    #[test]
    fn a_frame_without_its_end_marker_or_padded_after_it_decodes() {
        let (w, h) = (320, 240);
        let (frame, _) = DemoScene::new(w, h, 30, 4).render(2);
        let jpeg = webcam_jpeg(&frame.rgb, w, h, 85, 0);
        let whole = decode(&jpeg, w, h).expect("decodes");
        let unended = &jpeg[..jpeg.len() - 2];
        let padded = [&jpeg[..], &[0; 100]].concat();
        for threads in [1, 2] {
            for bytes in [unended, &padded] {
                let got = with_threads(threads, || decode(bytes, w, h));
                assert!(got.as_ref() == Some(&whole), "{threads} threads");
            }
        }
    }

    #[test]
    fn parts_end_together_and_tile_the_frame() {
        for (h, unit, threads, share) in [(1080, 8, 2, 0.4), (1080, 16, 3, 0.2), (720, 8, 3, 0.5)] {
            let cuts = cuts(h, unit, threads, share);
            assert_eq!(
                (cuts[0], *cuts.last().unwrap(), cuts.len()),
                (0, h, threads + 1)
            );
            assert!(cuts[1..threads].iter().all(|c| c % unit == 0));
            // each part's pass and decode, in rows of decode
            let times: Vec<f64> = cuts
                .windows(2)
                .map(|r| share * r[0] as f64 + (r[1] - r[0]) as f64)
                .collect();
            let spread = times.iter().cloned().fold(0.0, f64::max)
                - times.iter().cloned().fold(f64::MAX, f64::min);
            assert!(
                spread <= 2.0 * unit as f64,
                "{h}, {threads}, {share}: {times:?}"
            );
        }
        assert_eq!(cuts(1080, 8, 1, 0.4), [0, 1080]);
        assert_eq!(
            cuts(8, 8, 4, 0.4),
            [0, 8],
            "fewer rows of MCUs than threads"
        );
        // where passing over rows costs nearly what decoding them does, more threads
        // would only pass over the same rows: they get no part
        assert_eq!(cuts(720, 8, 5, 0.95).len(), 2);
        // many cores: parts only while one more takes a tenth off
        assert_eq!(cuts(1080, 8, 16, 0.5).len(), 3 + 1);
        assert_eq!(cuts(1080, 8, 16, 0.3).len(), 4 + 1);
        assert_eq!(cuts(1080, 8, 2, 0.5).len(), 2 + 1);
        let few = cuts(24, 8, 8, 0.5);
        assert!(few.windows(2).all(|r| r[0] < r[1]), "{few:?}");
    }
}
