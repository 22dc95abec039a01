//! MJPEG frames to RGB with libjpeg-turbo, split over every core.
//!
//! Huffman decoding is one serial chain through the scan, but libjpeg-turbo can pass
//! over rows by their Huffman codes alone (no inverse DCT, upsampling or colour
//! conversion), a fraction of what decoding them costs. So a frame is cut into one
//! part of whole MCU rows per thread: each part passes over the rows above it, then
//! decodes its own, and parts lower down are shorter by what their pass costs, so
//! that all end together. The pass's share of a decode depends on the frame's
//! content and on the build (libjpeg-turbo's SIMD needs `nasm`), so it is measured on
//! every frame and the next one is cut by it. Without vertical chroma subsampling
//! (4:4:4, and 4:2:2, the UVC MJPEG format) a pixel depends only on its MCU row, so
//! the parts give the bytes of a whole decode; other frames are decoded whole.

use super::libjpeg::Decoder;
use crate::bands;
use std::cell::Cell;
use std::mem::MaybeUninit;
use std::sync::Mutex;
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
    let (w, h) = (width as usize, height as usize);
    let header = Decoder::open(bytes)?;
    if header.size() != (w, h) || w == 0 || h == 0 {
        return None;
    }
    let (unit, rows_alone) = header.mcu_rows();
    drop(header);
    let threads = if rows_alone { bands::threads() } else { 1 };
    let share = PASS_SHARE.get();
    let cuts = cuts(h, unit, threads, share);
    // every byte is written before the frame is returned (or it is dropped)
    let mut rgb: Vec<u8> = Vec::with_capacity(3 * w * h);
    let mut parts = Vec::with_capacity(cuts.len() - 1);
    let mut rest = &mut rgb.spare_capacity_mut()[..3 * w * h];
    for rows in cuts.windows(2) {
        let (part, tail) = rest.split_at_mut(3 * w * (rows[1] - rows[0]));
        parts.push((rows[0], part));
        rest = tail;
    }
    let shares = Mutex::new(Vec::new());
    let failed = Mutex::new(false);
    bands::for_each_part(parts, |(first, out)| match decode_part(bytes, first, out) {
        Some(Some(measured)) => shares
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(measured),
        Some(None) => {}
        None => *failed.lock().unwrap_or_else(|e| e.into_inner()) = true,
    });
    let shares = shares.into_inner().unwrap_or_else(|e| e.into_inner());
    if !shares.is_empty() {
        let measured = shares.iter().sum::<f64>() / shares.len() as f64;
        PASS_SHARE.set(((share + measured) / 2.0).clamp(0.05, 0.95));
    }
    if failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return None;
    }
    // SAFETY: the parts tile the frame's rows and each decoded all of its own.
    unsafe { rgb.set_len(3 * w * h) };
    Some(rgb)
}

/// Decodes the rows of one part, from row `first` on, into `out`; returns the share
/// of a row's decode its pass cost where the part passed over rows, `None` where it
/// failed.
fn decode_part(bytes: &[u8], first: usize, out: &mut [MaybeUninit<u8>]) -> Option<Option<f64>> {
    let mut decoder = Decoder::open(bytes)?;
    decoder.start()?;
    let start = Instant::now();
    decoder.skip(first)?;
    let passed = start.elapsed().as_secs_f64();
    decoder.read(out)?;
    let decoded = start.elapsed().as_secs_f64() - passed;
    let rows = out.len() / (3 * decoder.size().0);
    Some(
        (first > 0 && rows > 0 && decoded > 0.0)
            .then(|| (passed / first as f64) / (decoded / rows as f64)),
    )
}

/// Where parts of a frame `h` rows tall start, on `threads` threads, in rows of
/// `unit`, with `h` last: part k passes over the rows above it at `share` of a
/// decode's cost, so equal times ask part k+1 to start at
/// `a(k+1) = a(k)·(1 − share) + a(1)`, a geometric series from `a(1)`.
fn cuts(h: usize, unit: usize, threads: usize, share: f64) -> Vec<usize> {
    let keep = 1.0 - share;
    let first = share / (1.0 - keep.powi(threads as i32));
    let mut cuts = vec![0];
    let mut at = 0.0;
    for _ in 1..threads {
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
    use super::webcam_jpeg::webcam_jpeg;
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
                for (threads, share) in [(2, 0.1), (2, 0.5), (3, 0.9), (3, 0.3)] {
                    PASS_SHARE.set(share);
                    let got = with_threads(threads, || decode(&jpeg, w, h));
                    assert!(got.as_ref() == Some(&whole), "{w}x{h} on {threads} threads");
                }
            }
        }
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
                jpeg.len() - 2,
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
    fn parts_end_together_and_tile_the_frame() {
        for (h, unit, threads, share) in [(1080, 8, 2, 0.4), (1080, 16, 3, 0.2), (720, 8, 3, 0.9)] {
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
        assert_eq!(cuts(720, 8, 5, 0.95).len(), 3);
        let few = cuts(24, 8, 8, 0.5);
        assert!(few.windows(2).all(|r| r[0] < r[1]), "{few:?}");
    }
}
