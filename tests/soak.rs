//! A short soak of the live pipeline with the checks of the hour-long run
//! (`cargo bench --bench soak`): memory steady after warm-up in each phase, the frame
//! channel within its bound, a steady dropped share and no drift of the frame time,
//! with recording turned on half-way.

#[path = "../benches/soak/session.rs"]
mod session;

use session::{Config, Limits, Report};

/// Looser than the hour-long run's: a short run on a shared machine is noisier, and
/// the limits are there to catch leaks and slowdowns that grow with the frames.
const LIMITS: Limits = Limits {
    memory_growth: 0.05,
    dropped_rise: 0.20,
    time_ratio: 2.0,
    time_slack_ms: 3.0,
};

#[test]
fn three_thousand_live_frames_hold_steady_with_recording_turned_on() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        width: 320,
        height: 240,
        fps: 60,
        frames: 3_000,
        window: 250,
        out: dir.path().join("rec"),
    };
    println!("{}", Report::window_heading());
    let report =
        session::run(&config, |w| println!("{}", Report::window_row(w))).expect("the session runs");
    println!("{}", report.summary());
    assert!(report.frames() > 2_900, "{}", report.summary());
    assert!(report.written > 0, "the second half was recorded");
    let recorded = std::fs::read_dir(&config.out).unwrap().count() as u64;
    assert_eq!(recorded, report.written + 1, "masks and the JSON lines");
    let failures = report.failures(&LIMITS);
    assert!(failures.is_empty(), "{failures:#?}\n{}", report.summary());
}

/// The memory check allows a one-off step as recording starts (buffers filled once)
/// but not memory that keeps growing within a phase.
#[test]
fn the_memory_check_tells_a_leak_from_buffers_filled_once() {
    let report = |rss: &[u64]| Report {
        windows: rss
            .iter()
            .enumerate()
            .map(|(i, &mib)| session::Window {
                frames: (i as u64 + 1) * 250,
                rss: mib << 20,
                processed: 250,
                dropped: 0,
                max_queued: 0,
                times: vec![7.0; 250],
                recording: i >= rss.len() / 2,
            })
            .collect(),
        bound: 2,
        written: 0,
    };
    let step = report(&[16, 16, 16, 16, 16, 16, 19, 21, 21, 21, 21, 21]);
    assert!(
        step.failures(&LIMITS).is_empty(),
        "{:?}",
        step.failures(&LIMITS)
    );
    let leak = report(&[16, 16, 16, 16, 16, 16, 19, 21, 22, 23, 24, 25]);
    assert_eq!(
        leak.failures(&LIMITS).len(),
        1,
        "{:?}",
        leak.failures(&LIMITS)
    );
    let leak_off = report(&[16, 17, 18, 19, 20, 21, 21, 21, 21, 21, 21, 21]);
    assert_eq!(leak_off.failures(&LIMITS).len(), 1);
}
