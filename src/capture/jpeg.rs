//! MJPEG frames to RGB with zune-jpeg, on every core when the frame allows it.
//!
//! Huffman decoding is one serial chain through the scan, except where the encoder
//! put restart markers: each restart interval starts afresh (the DC predictors
//! reset), so whole MCU rows between two markers decode on their own. Some webcams
//! write markers (a DRI segment, often one interval per MCU row). Such a frame is cut
//! into strips of MCU rows at markers, each strip made a JPEG of its own (the
//! frame's headers with the strip's height, its intervals with the markers counted
//! from 0) and decoded into its rows of the picture in a band. Without vertical
//! chroma subsampling (4:4:4, and 4:2:2, the UVC MJPEG format) a pixel depends only
//! on its MCU row, so the strips give the bytes of the whole frame's decode; other
//! frames are decoded whole, on the calling thread.

use crate::bands;
use std::cell::RefCell;

/// Strips per thread: enough that a helper that starts late leaves little to wait
/// for, few enough that setting up a decoder per strip costs little.
const STRIPS_PER_THREAD: usize = 4;

/// A JPEG frame as the RGB bytes of a `width`×`height` picture; `None` if it does not
/// decode whole (strict: a cut-off frame is refused, not filled in) or has another size.
pub(super) fn decode(bytes: &[u8], width: u32, height: u32) -> Option<Vec<u8>> {
    let (w, h) = (width as usize, height as usize);
    if bands::threads() > 1
        && let Some(scan) = Scan::of(bytes, w, h)
        && scan.strips_pay(h)
    {
        return scan.decode_in_strips(bytes, w, h);
    }
    decode_whole(bytes, w, h, None)
}

/// Decodes `bytes`, a JPEG of `w`×`h`, into `out` if given (its length that of the
/// picture; an empty buffer is returned), else into a new buffer; `None` if it does
/// not decode whole or has another size.
fn decode_whole(bytes: &[u8], w: usize, h: usize, out: Option<&mut [u8]>) -> Option<Vec<u8>> {
    let options = zune_core::options::DecoderOptions::default()
        .set_strict_mode(true)
        .jpeg_set_out_colorspace(zune_core::colorspace::ColorSpace::RGB);
    let mut decoder =
        zune_jpeg::JpegDecoder::new_with_options(std::io::Cursor::new(bytes), options);
    decoder.decode_headers().ok()?;
    if decoder.dimensions()? != (w, h) {
        return None;
    }
    match out {
        Some(out) => {
            decoder.decode_into(out).ok()?;
            Some(Vec::new())
        }
        None => {
            let rgb = decoder.decode().ok()?;
            (rgb.len() == 3 * w * h).then_some(rgb)
        }
    }
}

/// Where a baseline frame's scan and restart markers lie.
struct Scan {
    /// Offset of the frame header's height (two bytes, big-endian).
    height_at: usize,
    /// First byte of the entropy-coded data (the headers are the bytes before).
    data: usize,
    /// Offset of the end-of-image marker.
    end: usize,
    /// Pixel rows of an MCU.
    mcu_rows: usize,
    /// MCUs in a row of MCUs.
    mcus_per_row: usize,
    /// MCUs per restart interval.
    interval: usize,
}

thread_local! {
    /// The offsets of the frame's restart markers, kept from frame to frame.
    static MARKERS: RefCell<Vec<usize>> = RefCell::default();
    /// A strip's JPEG, kept from frame to frame.
    static STRIP: RefCell<Vec<u8>> = RefCell::default();
}

impl Scan {
    /// The scan of a baseline, interleaved frame of `w`×`h` with restart intervals
    /// and no vertical chroma subsampling, its markers in [`MARKERS`]; `None` for
    /// any other frame.
    fn of(bytes: &[u8], w: usize, h: usize) -> Option<Self> {
        let (mut at, mut height_at, mut interval) = (2, None, 0);
        let (mut hmax, mut vmax, mut components) = (1, 1, 0);
        if bytes.get(..2)? != [0xFF, 0xD8] {
            return None;
        }
        let data = loop {
            let (&[0xFF, marker], Some(len)) = (bytes.get(at..at + 2)?, be16(bytes, at + 2)) else {
                return None;
            };
            let segment = bytes.get(at + 4..at + 2 + len.max(2))?;
            match marker {
                // baseline and extended sequential frames, Huffman coded
                0xC0 | 0xC1 => {
                    height_at = Some(at + 5);
                    let size = (be16(segment, 3)?, be16(segment, 1)?);
                    components = usize::from(*segment.get(5)?);
                    if size != (w, h) || segment.len() < 6 + 3 * components {
                        return None;
                    }
                    for c in segment[6..6 + 3 * components].chunks_exact(3) {
                        hmax = hmax.max(usize::from(c[1] >> 4));
                        vmax = vmax.max(usize::from(c[1] & 15));
                    }
                }
                0xC2..=0xCF if marker != 0xC4 && marker != 0xC8 && marker != 0xCC => return None,
                0xDD => interval = be16(segment, 0)?,
                0xDA => {
                    // one scan of every component
                    if usize::from(*segment.first()?) != components {
                        return None;
                    }
                    break at + 2 + len;
                }
                _ => {}
            }
            at += 2 + len;
        };
        if interval == 0 || vmax != 1 || components == 0 {
            return None;
        }
        let end = MARKERS.with_borrow_mut(|markers| find_markers(bytes, data, markers))?;
        let mcus_per_row = w.div_ceil(8 * hmax);
        let scan = Scan {
            height_at: height_at?,
            data,
            end,
            mcu_rows: 8,
            mcus_per_row,
            interval,
        };
        let intervals = (mcus_per_row * h.div_ceil(8)).div_ceil(interval);
        let count = MARKERS.with_borrow(Vec::len);
        (count + 1 == intervals).then_some(scan)
    }

    /// Pixel rows between the places a strip may start (each at a restart marker
    /// that begins a row of MCUs).
    fn unit(&self) -> usize {
        let rows = self.interval / gcd(self.interval, self.mcus_per_row);
        rows * self.mcu_rows
    }

    /// Pixel rows of a strip of a frame `h` rows tall (the last may be shorter): a
    /// few strips per thread, since each costs a decoder's setup.
    fn strip_rows(&self, h: usize) -> usize {
        let unit = self.unit();
        unit * (h / unit / (STRIPS_PER_THREAD * bands::threads())).max(1)
    }

    /// Whether a frame `h` rows tall cuts into two strips or more.
    fn strips_pay(&self, h: usize) -> bool {
        2 * self.unit() <= h
    }

    /// Decodes the frame strip by strip, in bands on every core.
    fn decode_in_strips(&self, bytes: &[u8], w: usize, h: usize) -> Option<Vec<u8>> {
        let mut rgb = vec![0; 3 * w * h];
        let failed = MARKERS.with_borrow(|markers| {
            bands::sum_over_bands(&mut rgb, 3 * w, self.strip_rows(h), |first, band| {
                let rows = first..first + band.len() / (3 * w);
                let ok = STRIP.with_borrow_mut(|strip| {
                    self.strip(bytes, markers, rows.clone(), h, strip);
                    decode_whole(strip, w, rows.len(), Some(band))
                });
                u64::from(ok.is_none())
            })
        });
        (failed == 0).then_some(rgb)
    }

    /// Writes the JPEG of pixel rows `rows` (a strip starting at a marker) of a frame
    /// `h` rows tall into `strip`.
    fn strip(
        &self,
        bytes: &[u8],
        markers: &[usize],
        rows: std::ops::Range<usize>,
        h: usize,
        strip: &mut Vec<u8>,
    ) {
        let interval_at = |row: usize| row / self.mcu_rows * self.mcus_per_row / self.interval;
        let (first, last) = (interval_at(rows.start), interval_at(rows.end.min(h)));
        let last = if rows.end >= h {
            markers.len() + 1
        } else {
            last
        };
        strip.clear();
        strip.extend_from_slice(&bytes[..self.data]);
        let height = u16::try_from(rows.len()).unwrap_or(u16::MAX).to_be_bytes();
        strip[self.height_at..self.height_at + 2].copy_from_slice(&height);
        // intervals first..last, each but the last followed by its marker, renumbered
        let mut from = if first == 0 {
            self.data
        } else {
            markers[first - 1] + 2
        };
        for (n, &marker) in markers[first..last - 1].iter().enumerate() {
            strip.extend_from_slice(&bytes[from..marker]);
            strip.extend_from_slice(&[0xFF, 0xD0 + (n % 8) as u8]);
            from = marker + 2;
        }
        let to = if last > markers.len() {
            self.end
        } else {
            markers[last - 1]
        };
        strip.extend_from_slice(&bytes[from..to]);
        strip.extend_from_slice(&[0xFF, 0xD9]);
    }
}

/// Collects the offsets of the restart markers of the entropy-coded data from `at`
/// into `markers`; returns the end-of-image marker's offset, `None` if the data ends
/// without one or holds another marker.
fn find_markers(bytes: &[u8], mut at: usize, markers: &mut Vec<usize>) -> Option<usize> {
    markers.clear();
    loop {
        at += memchr::memchr(0xFF, bytes.get(at..)?)?;
        match *bytes.get(at + 1)? {
            0x00 => at += 2, // a stuffed byte
            0xFF => at += 1, // fill before a marker
            0xD0..=0xD7 => {
                markers.push(at);
                at += 2;
            }
            0xD9 => return Some(at),
            _ => return None,
        }
    }
}

/// The big-endian `u16` at `at`.
fn be16(bytes: &[u8], at: usize) -> Option<usize> {
    let b = bytes.get(at..at + 2)?;
    Some(usize::from(u16::from_be_bytes([b[0], b[1]])))
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a.max(1) } else { gcd(b, a % b) }
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

    #[test]
    fn strips_at_restart_markers_give_the_whole_frames_bytes() {
        for (w, h, restart_rows) in [(320, 240, 1), (322, 200, 1), (200, 173, 2), (64, 48, 3)] {
            let (frame, _) = DemoScene::new(w, h, 30, 4).render(2);
            let jpeg = webcam_jpeg(&frame.rgb, w, h, 85, restart_rows);
            let (ww, hh) = (w as usize, h as usize);
            assert!(Scan::of(&jpeg, ww, hh).is_some(), "{w}x{h} has markers");
            let whole = decode_whole(&jpeg, ww, hh, None).expect("decodes");
            for threads in [1, 2, 3] {
                let got = with_threads(threads, || decode(&jpeg, w, h));
                assert!(got.as_ref() == Some(&whole), "{w}x{h} on {threads} threads");
            }
        }
    }

    #[test]
    fn frames_without_markers_or_cut_off_decode_whole_or_not_at_all() {
        let (w, h) = (320, 240);
        let (frame, _) = DemoScene::new(w, h, 30, 4).render(2);
        let plain = webcam_jpeg(&frame.rgb, w, h, 85, 0);
        assert!(Scan::of(&plain, w as usize, h as usize).is_none());
        assert!(with_threads(2, || decode(&plain, w, h)).is_some());
        let marked = webcam_jpeg(&frame.rgb, w, h, 85, 1);
        for cut in [marked.len() / 3, marked.len() * 2 / 3] {
            assert!(
                with_threads(2, || decode(&marked[..cut], w, h)).is_none(),
                "cut at {cut}"
            );
        }
        assert!(
            with_threads(2, || decode(&marked, w, h + 8)).is_none(),
            "another size"
        );
    }
}
