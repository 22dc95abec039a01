//! Inputs the fuzz targets in `fuzz/` found (or that stand for what they found), kept
//! so the fixes stay: each must end in a clean error or a right answer, without a
//! panic, a hang, or memory far beyond what its size justifies. The largest single
//! allocation each reader makes on the test's thread is measured by a counting
//! allocator.

use livecut::capture::files::decode_image;
use livecut::capture::video::{Probe, VideoStream};
use livecut::maxflow::dimacs::{self, DimacsError};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Cursor;

/// The system allocator, noting the largest allocation of each thread.
struct Counting;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the largest allocation it made on this thread.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    let result = f();
    (result, LARGEST.with(Cell::get))
}

const MIB: usize = 1 << 20;

fn read_text(text: &str) -> Result<livecut::grid::GridProblem, DimacsError> {
    dimacs::read_any(Cursor::new(text.as_bytes().to_vec()))
}

#[test]
fn a_few_bytes_claiming_a_huge_grid_are_refused_at_once() {
    // 12000x12000 4-connected: 3.2 GiB of arrays, within the size limit, for one arc.
    let text =
        "c grid 12000 12000 4\np max 144000002 1\nn 144000001 s\nn 144000002 t\na 144000001 1 5\n";
    let (result, largest) = largest_allocation(|| read_text(text));
    let err = result.unwrap_err().to_string();
    assert!(err.starts_with("2: 1 arcs are too few"), "{err}");
    assert!(largest < MIB, "{largest} bytes allocated");
}

#[test]
fn a_truncated_file_with_a_far_arc_costs_what_it_holds() {
    // Enough arcs declared for the grid, but the file ends after one that reaches its
    // last pixel: the arrays must not be grown for it.
    let text = "c grid 12000 12000 4\np max 144000002 3000000\nn 144000001 s\nn 144000002 t\na 144000001 144000000 5\n";
    let (result, largest) = largest_allocation(|| read_text(text));
    let err = result.unwrap_err().to_string();
    assert!(
        err.contains("declares 3000000 arcs but the file has 1"),
        "{err}"
    );
    assert!(largest < 2 * MIB, "{largest} bytes allocated");
}

/// A 1800×1800 4C instance (over the small-grid size): the arcs `first`, then a unit arc
/// from s to each of the first `fill` pixels (enough that arcs reaching the last pixel
/// wait for the end), then `last`; arcs name their ends by [`S`], [`T`] and [`N`].
/// Returns the text and `fill`.
fn far_arcs_grid(first: &[(u64, u64, i64)], last: (u64, u64, i64)) -> (String, u64) {
    let (w, h) = (1800u64, 1800u64);
    let n = w * h;
    let (s, t) = (n + 1, n + 2);
    let node = |v: u64| match v {
        0 => s,
        1 => t,
        _ => n,
    };
    let fill = n / dimacs::PIXELS_PER_ARC + 1;
    let arcs = fill + first.len() as u64 + 1;
    let mut text = format!("c grid {w} {h} 4\np max {} {arcs}\n", n + 2);
    text += &format!("n {s} s\nn {t} t\n");
    for &(a, b, c) in first {
        text += &format!("a {} {} {c}\n", node(a), node(b));
    }
    for p in 1..=fill {
        text += &format!("a {s} {p} 1\n");
    }
    text += &format!("a {} {} {}\n", node(last.0), node(last.1), last.2);
    (text, fill)
}

/// The source, the sink and the last pixel in [`far_arcs_grid`]'s arcs.
const S: u64 = 0;
const T: u64 = 1;
const N: u64 = 2;

#[test]
fn arcs_beyond_the_reach_of_those_read_so_far_still_count() {
    // A grid over the small-grid size whose first arcs reach its last pixel: they wait
    // until the end, then add up with their duplicates as any other arcs do.
    let (text, fill) = far_arcs_grid(&[(S, N, 7), (N, T, 9)], (S, N, 3));
    let problem = read_text(&text).unwrap();
    let last = 1800 * 1800 - 1;
    assert_eq!(problem.source()[last], 10);
    assert_eq!(problem.sink()[last], 9);
    assert_eq!(problem.source()[0], 1);
    assert_eq!(problem.source()[fill as usize], 0);
}

#[test]
fn deferred_duplicates_that_overflow_are_refused_with_their_line() {
    let (text, _) = far_arcs_grid(&[(S, N, i64::from(i32::MAX) - 1)], (S, N, 5));
    let err = read_text(&text).unwrap_err().to_string();
    assert!(err.starts_with("5: capacity of arc"), "{err}");
    assert!(err.contains("adds up to"), "{err}");
}

#[test]
fn a_small_image_claiming_a_huge_picture_is_refused_before_its_buffer() {
    let mut png = Vec::new();
    image::GrayImage::new(1, 1)
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    // Width and height in the IHDR chunk: 16000 each, and the chunk's CRC to match.
    png[16..24].copy_from_slice(&[0, 0, 0x3e, 0x80, 0, 0, 0x3e, 0x80]);
    let mut crc = flate2::Crc::new();
    crc.update(&png[12..29]);
    png[29..33].copy_from_slice(&crc.sum().to_be_bytes());
    let (result, largest) = largest_allocation(|| decode_image(&png));
    assert!(
        matches!(result, Err(image::ImageError::Limits(_))),
        "{:?}",
        result.as_ref().err()
    );
    assert!(largest < 4 * MIB, "{largest} bytes allocated");
}

#[test]
fn a_probe_claiming_huge_frames_is_refused_and_short_streams_cost_what_they_hold() {
    assert_eq!(Probe::parse("width=65535\nheight=65535\n"), None);
    // The largest frames accepted: a stream that ends early costs what it held.
    let probe = Probe::parse("width=8192\nheight=8192\navg_frame_rate=1/1e-300\n").unwrap();
    let (frames, largest) = largest_allocation(|| {
        let log = Cursor::new(Vec::<u8>::new());
        let mut stream = VideoStream::new(probe, Cursor::new(vec![7u8; 1000]), log).unwrap();
        stream.next_frame().map(|f| f.map(|f| f.index))
    });
    assert!(frames.is_err(), "a truncated frame");
    assert!(largest < 2 * MIB, "{largest} bytes allocated");
}

/// A reader that notes when it is dropped, which happens when the DIMACS reader's
/// thread, which owns it, ends.
struct NotedReader {
    bytes: Cursor<Vec<u8>>,
    dropped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl std::io::Read for NotedReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.bytes.read(buf)
    }
}

impl Drop for NotedReader {
    fn drop(&mut self) {
        self.dropped
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The `dimacs` target's leak report (an empty input): the reader thread was left
/// running after the reader returned its error. It is now waited for on every return.
#[test]
fn no_reader_thread_outlives_the_read() {
    for input in [&b""[..], b"p max 3 3\nc no grid line\n", b"c\np max 1"] {
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = NotedReader {
            bytes: Cursor::new(input.to_vec()),
            dropped: dropped.clone(),
        };
        assert!(dimacs::read(reader).is_err(), "{input:?} is refused");
        assert!(
            dropped.load(std::sync::atomic::Ordering::SeqCst),
            "{input:?}: the reader thread still ran after the error"
        );
    }
    assert!(dimacs::read_any(Cursor::new(Vec::new())).is_err());
}
