//! Row bands: a pass over every pixel of a frame split into horizontal bands of whole
//! rows, which the calling thread and helper threads (one per further core) take one
//! at a time. Each band writes its own rows only, so the result does not depend on
//! how many threads ran it.
//!
//! The caller works from the first band on and never waits for a helper to wake up:
//! a helper that comes late finds fewer bands or none, so a pass is never slower than
//! on the caller alone. Idle helpers sleep instead of spinning (an idle thread that
//! spins takes a core from the solver on a small machine), and while one caller's
//! pass runs, another caller's runs on its own thread. Helpers are started by the
//! first pass and keep its thread's priority; a caller of higher priority (the
//! window) still runs its own bands at its own.

use std::cell::Cell;
use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// Bands per thread: many, so that a helper that starts late (waking up) or is held
/// up by other work leaves the others little to wait for at the end of the pass.
const BANDS_PER_THREAD: usize = 16;

thread_local! {
    /// The most threads a pass started on this thread may use, if limited.
    static LIMIT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// How many threads a pass started on this thread uses: one per core, or the limit
/// of [`with_threads`].
pub fn threads() -> usize {
    LIMIT.get().unwrap_or_else(cores).max(1)
}

/// Runs `f` with the passes it starts on this thread using at most `threads`
/// threads (1: the calling thread alone). Tests and benches compare thread counts.
pub fn with_threads<R>(threads: usize, f: impl FnOnce() -> R) -> R {
    let before = LIMIT.replace(Some(threads.max(1)));
    let result = catch_unwind(AssertUnwindSafe(f));
    LIMIT.set(before);
    result.unwrap_or_else(|panic| resume_unwind(panic))
}

/// The cores this process may use.
fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Rows in each band of a frame `height` rows tall (a multiple of `align` rows, at
/// least one).
fn rows_per_band(height: usize, align: usize) -> usize {
    let align = align.max(1);
    let bands = threads() * BANDS_PER_THREAD;
    height.div_ceil(bands).div_ceil(align).max(1) * align
}

/// Runs `pass(first_row, band)` on bands of `out`, whose rows are `row_len` items
/// long (bands of a multiple of `align` rows), and sums what the bands return.
pub(crate) fn sum_over_bands<T: Send>(
    out: &mut [T],
    row_len: usize,
    align: usize,
    pass: impl Fn(usize, &mut [T]) -> u64 + Sync,
) -> u64 {
    if row_len == 0 || out.is_empty() {
        return 0;
    }
    let rows = rows_per_band(out.len().div_ceil(row_len), align);
    let size = rows * row_len;
    let bands = out.len().div_ceil(size);
    let (base, len) = (Shared(out.as_mut_ptr()), out.len());
    let total = std::sync::atomic::AtomicU64::new(0);
    let band = |i: usize| {
        let start = i * size;
        // SAFETY: each band index is run once (the pool hands every index out once),
        // so the bands' slices of `out` are disjoint, and all end before this
        // function returns, while `out` is still borrowed.
        let chunk =
            unsafe { std::slice::from_raw_parts_mut(base.at(start), size.min(len - start)) };
        let sum = pass(i * rows, chunk);
        total.fetch_add(sum, std::sync::atomic::Ordering::Relaxed);
    };
    run_bands(bands, &band);
    total.into_inner()
}

/// Runs `pass(first_row, band)` on bands of `out`, whose rows are `row_len` items
/// long (bands of a multiple of `align` rows).
pub(crate) fn for_each_band<T: Send>(
    out: &mut [T],
    row_len: usize,
    align: usize,
    pass: impl Fn(usize, &mut [T]) + Sync,
) {
    sum_over_bands(out, row_len, align, |row, band| {
        pass(row, band);
        0
    });
}

/// Rows per band of a frame `height` rows tall, for a caller that splits its own
/// arrays into bands ([`for_each_part`]).
pub(crate) fn band_rows(height: usize) -> usize {
    rows_per_band(height, 1)
}

/// [`band_rows`] rounded up to a multiple of `align` rows: for arrays laid out in
/// blocks of `align` rows.
pub(crate) fn aligned_band_rows(height: usize, align: usize) -> usize {
    rows_per_band(height, align)
}

/// The rows of `rows` within `band` (empty where they do not meet): what a pass over
/// a band does of a rectangle's rows.
pub(crate) fn rows_within(rows: &Range<u32>, band: &Range<u32>) -> Range<u32> {
    rows.start.max(band.start)..rows.end.min(band.end)
}

/// Runs `pass` on each of `parts` (a frame's bands, split by the caller into what
/// each one reads and writes), on the calling thread and the helpers: for passes that
/// write several arrays at once.
pub(crate) fn for_each_part<P: Send>(parts: Vec<P>, pass: impl Fn(P) + Sync) {
    let slots: Vec<std::sync::Mutex<Option<P>>> = parts
        .into_iter()
        .map(|p| std::sync::Mutex::new(Some(p)))
        .collect();
    let band = |i: usize| {
        let part = slots[i].lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(part) = part {
            pass(part);
        }
    };
    run_bands(slots.len(), &band);
}

/// Copies `src` into `dst` (of the same length) band by band.
pub fn copy(dst: &mut [u8], src: &[u8], row_len: usize) {
    as_copy(|| {
        for_each_band(dst, row_len, 1, |row, band| {
            band.copy_from_slice(&src[row * row_len..][..band.len()]);
        })
    });
}

/// Threads a copy uses at most: a few take all the memory bandwidth there is, and
/// more only spend CPU time waiting for it.
const COPY_THREADS: usize = 4;

/// Runs `f`, a copy (passes that move bytes and barely compute), on at most
/// [`COPY_THREADS`] threads, fewer where this thread is limited already.
pub(crate) fn as_copy<R>(f: impl FnOnce() -> R) -> R {
    with_threads(threads().min(COPY_THREADS), f)
}

/// A pointer to the items of a slice that the bands share.
struct Shared<T>(*mut T);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Shared<T> {}

// SAFETY: the bands reach disjoint items through it (see `sum_over_bands`).
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The pointer to item `i`.
    fn at(self, i: usize) -> *mut T {
        // SAFETY: callers pass indices within the slice.
        unsafe { self.0.add(i) }
    }
}

/// Runs `band(i)` for every `i` below `bands`, each once, on the calling thread and
/// the helpers that join in time.
fn run_bands(bands: usize, band: &(dyn Fn(usize) + Sync)) {
    let helpers = threads().min(bands).saturating_sub(1);
    match pool().post(bands, helpers, band) {
        Some(posted) => posted.finish(),
        None => (0..bands).for_each(band),
    }
}

/// The helper threads and the one pass they work on.
struct Pool {
    state: Mutex<State>,
    /// The helpers' thread ids, for placing them on cores.
    helpers: Mutex<Vec<place::Tid>>,
    /// The core the helpers were last placed away from.
    placed_beside: Mutex<Option<usize>>,
    /// Helpers wait here for a pass.
    work: Condvar,
    /// The caller waits here for the bands helpers run.
    done: Condvar,
}

/// The pass being run, if any, and how many more helpers may join it.
#[derive(Default)]
struct State {
    pass: Option<Arc<Pass>>,
    seats: usize,
}

/// One pass: its bands are claimed and counted with atomics, so that a band costs no
/// lock however many threads share the pass.
struct Pass {
    /// The band function, its lifetime erased: called only for a band claimed below
    /// `bands`, and the caller returns only once every band has been counted finished.
    job: Job,
    bands: usize,
    /// The next band to hand out (past `bands` once none is left).
    next: AtomicUsize,
    /// Bands run, or skipped after a panic.
    finished: AtomicUsize,
    /// A band panicked: the bands not yet started are skipped.
    stopped: AtomicBool,
}

/// A pass's band function, lifetime erased.
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn(usize) + Sync + 'static));

// SAFETY: the function is `Sync`, and it is called only while its pass runs.
unsafe impl Send for Job {}
// SAFETY: as above.
unsafe impl Sync for Job {}

impl Pass {
    /// The next band to run, if any is left.
    fn claim(&self) -> Option<usize> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        (i < self.bands).then_some(i)
    }

    /// Counts a band finished; the last one wakes the caller.
    fn finished_one(&self, pool: &Pool) {
        if self.finished.fetch_add(1, Ordering::AcqRel) + 1 == self.bands {
            // under the lock: the caller checks the count under it before waiting
            let _state = pool.lock();
            pool.done.notify_all();
        }
    }

    /// A helper's share: runs bands until none is left.
    fn help(&self, pool: &Pool) {
        while let Some(i) = self.claim() {
            if !self.stopped.load(Ordering::Relaxed) {
                // SAFETY: the band was claimed below `bands`, and the caller keeps the
                // function alive until this band is counted finished.
                let ran = catch_unwind(AssertUnwindSafe(|| unsafe { (*self.job.0)(i) }));
                if ran.is_err() {
                    self.stopped.store(true, Ordering::Relaxed);
                }
            }
            self.finished_one(pool);
        }
    }
}

/// The pool, its helpers started on first use (one per core beyond the first).
fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            state: Mutex::default(),
            helpers: Mutex::default(),
            placed_beside: Mutex::default(),
            work: Condvar::new(),
            done: Condvar::new(),
        }));
        for i in 1..cores() {
            // without a helper the caller runs every band itself
            let _ = std::thread::Builder::new()
                .name(format!("livecut-bands-{i}"))
                .spawn(move || {
                    if let Some(tid) = place::current_tid() {
                        pool.helpers
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(tid);
                    }
                    pool.help();
                });
        }
        pool
    })
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Posts a pass of `bands` bands that up to `helpers` helpers may join, and wakes
    /// that many; `None` if another pass runs (or there is nothing to share), which
    /// leaves the caller to run its bands alone.
    fn post<'a>(
        &'a self,
        bands: usize,
        helpers: usize,
        band: &'a (dyn Fn(usize) + Sync),
    ) -> Option<Posted<'a>> {
        if helpers == 0 {
            return None;
        }
        let mut state = self.lock();
        if state.pass.is_some() {
            return None;
        }
        // SAFETY: only the lifetime is erased; `Posted::finish` returns only once
        // every band has finished, and no band starts after that.
        let job = unsafe {
            std::mem::transmute::<&'a (dyn Fn(usize) + Sync), &'static (dyn Fn(usize) + Sync)>(band)
        };
        let pass = Arc::new(Pass {
            job: Job(job),
            bands,
            next: AtomicUsize::new(0),
            finished: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
        });
        *state = State {
            pass: Some(pass.clone()),
            seats: helpers,
        };
        drop(state);
        self.place_helpers();
        // as many as may join, of the helpers there are
        for _ in 0..helpers.min(cores() - 1) {
            self.work.notify_one();
        }
        Some(Posted {
            pool: self,
            pass,
            band,
        })
    }

    /// Keeps the helpers off the calling thread's core. A woken thread may be put on
    /// its waker's core (in virtual machines, where idle cores look busy, it mostly
    /// is), where it waits for the caller, or the caller for it, while the other
    /// cores idle. Placed again only when the caller runs on another core.
    fn place_helpers(&self) {
        let Some(core) = place::current_core() else {
            return;
        };
        let mut beside = self.placed_beside.lock().unwrap_or_else(|e| e.into_inner());
        if *beside == Some(core) {
            return;
        }
        *beside = Some(core);
        let helpers = self.helpers.lock().unwrap_or_else(|e| e.into_inner());
        place::keep_off(&helpers, core);
    }

    /// A helper's life: waits for a pass with a free seat and bands left, runs bands
    /// of it until none is left, and waits again.
    fn help(&self) {
        let mut state = self.lock();
        loop {
            let open = state
                .pass
                .as_ref()
                .filter(|p| state.seats > 0 && p.next.load(Ordering::Relaxed) < p.bands);
            let Some(pass) = open.cloned() else {
                state = self.work.wait(state).unwrap_or_else(|e| e.into_inner());
                continue;
            };
            state.seats -= 1;
            drop(state);
            pass.help(self);
            state = self.lock();
        }
    }
}

/// A pass posted by the calling thread.
struct Posted<'a> {
    pool: &'a Pool,
    pass: Arc<Pass>,
    band: &'a (dyn Fn(usize) + Sync),
}

impl Posted<'_> {
    /// Runs bands on the calling thread until none is left, waits for those the
    /// helpers run, and clears the pass; a band's panic reaches the caller.
    fn finish(self) {
        let (pool, pass) = (self.pool, &self.pass);
        let mut panic = None;
        while let Some(i) = pass.claim() {
            if !pass.stopped.load(Ordering::Relaxed)
                && let Err(p) = catch_unwind(AssertUnwindSafe(|| (self.band)(i)))
            {
                pass.stopped.store(true, Ordering::Relaxed);
                panic = Some(p);
            }
            pass.finished_one(pool);
        }
        let mut state = pool.lock();
        while pass.finished.load(Ordering::Acquire) < pass.bands {
            state = pool.done.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.pass = None;
        drop(state);
        if let Some(panic) = panic {
            resume_unwind(panic);
        }
        assert!(
            !pass.stopped.load(Ordering::Relaxed),
            "a band of a pass panicked on a helper thread"
        );
    }
}

/// Which core threads run on (Linux; elsewhere the scheduler decides alone).
#[cfg(target_os = "linux")]
mod place {
    /// A thread's id.
    pub(super) type Tid = libc::pid_t;

    /// The calling thread's id.
    pub(super) fn current_tid() -> Option<Tid> {
        // SAFETY: gettid has no preconditions.
        Some(unsafe { libc::gettid() })
    }

    /// The core the calling thread runs on.
    pub(super) fn current_core() -> Option<usize> {
        // SAFETY: sched_getcpu has no preconditions.
        usize::try_from(unsafe { libc::sched_getcpu() }).ok()
    }

    /// Lets threads `tids` run on any core the calling thread may run on but `core`
    /// (unless that leaves none); failing is harmless (they run where the scheduler
    /// puts them).
    pub(super) fn keep_off(tids: &[Tid], core: usize) {
        // SAFETY: a zeroed cpu_set_t is an empty set; the calls read and write sets of
        // the size given.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return;
            }
            libc::CPU_CLR(core, &mut set);
            if libc::CPU_COUNT(&set) == 0 {
                return;
            }
            for &tid in tids {
                libc::sched_setaffinity(tid, size_of::<libc::cpu_set_t>(), &set);
            }
        }
    }
}

/// Which core threads run on: left to the scheduler.
#[cfg(not(target_os = "linux"))]
mod place {
    pub(super) type Tid = ();

    pub(super) fn current_tid() -> Option<Tid> {
        None
    }

    pub(super) fn current_core() -> Option<usize> {
        None
    }

    pub(super) fn keep_off(_tids: &[Tid], _core: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_every_row_once_whatever_the_threads() {
        for threads in [1, 2, 3] {
            for (h, align) in [(0, 1), (1, 1), (7, 1), (100, 12), (1080, 12)] {
                let mut rows = vec![0u32; h * 5];
                let total = with_threads(threads, || {
                    sum_over_bands(&mut rows, 5, align, |first, band| {
                        assert_eq!(first % align, 0);
                        for (r, row) in band.chunks_mut(5).enumerate() {
                            row.fill((first + r) as u32 + 1);
                        }
                        band.len() as u64
                    })
                });
                assert_eq!(total, rows.len() as u64);
                let want: Vec<u32> = (0..h * 5).map(|i| (i / 5) as u32 + 1).collect();
                assert_eq!(rows, want, "{threads} threads, {h} rows");
            }
        }
    }

    #[test]
    fn passes_from_several_threads_at_once_each_finish_whole() {
        std::thread::scope(|s| {
            for t in 0..4u32 {
                s.spawn(move || {
                    for _ in 0..50 {
                        let mut out = vec![0u32; 64 * 40];
                        let sum = sum_over_bands(&mut out, 64, 1, |first, band| {
                            band.fill(t + first as u32);
                            1
                        });
                        assert!(sum >= 1);
                        for (y, row) in out.chunks(64).enumerate() {
                            let first = row[0] - t;
                            assert!(first as usize <= y && row.iter().all(|&v| v == row[0]));
                        }
                    }
                });
            }
        });
    }

    #[test]
    fn a_pass_of_no_parts_returns_at_once() {
        let ran = std::sync::atomic::AtomicUsize::new(0);
        for threads in [1, 2, 3] {
            with_threads(threads, || {
                for_each_part(Vec::<u8>::new(), |_| {
                    ran.fetch_add(1, Ordering::Relaxed);
                })
            });
        }
        assert_eq!(ran.into_inner(), 0);
    }

    #[test]
    fn a_panicking_band_reaches_the_caller_and_the_pool_goes_on() {
        let mut out = vec![0u8; 100];
        let caught = catch_unwind(AssertUnwindSafe(|| {
            with_threads(2, || {
                for_each_band(&mut out, 1, 1, |first, band| {
                    assert!(!(first..first + band.len()).contains(&50), "row 50")
                })
            })
        }));
        assert!(caught.is_err());
        let mut out = vec![0u8; 100];
        with_threads(2, || for_each_band(&mut out, 1, 1, |_, band| band.fill(1)));
        assert!(out.iter().all(|&v| v == 1));
    }
}
