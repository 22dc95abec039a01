//! Whether the machine keeps up with a live source: frames that take longer to process
//! than the source takes to send the next one, for a few seconds in a row, mean frames
//! silently dropped. The window then says so and offers a lower working resolution.

use super::timing::median;
use std::collections::VecDeque;
use std::time::Duration;

/// How long frames must mostly be late before the window says so.
const SPAN: Duration = Duration::from_secs(3);

/// Fewest frames in [`SPAN`] to judge by.
const FEWEST: usize = 10;

/// What the window tells the user when the machine falls behind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Behind {
    /// Median milliseconds a frame took.
    pub(super) work_ms: f64,
    /// Milliseconds between the source's frames.
    pub(super) interval_ms: f64,
}

/// Follows the recent frames of one live source.
#[derive(Debug, Default)]
pub(super) struct Lag {
    /// Per recent frame: its timestamp in the stream, the milliseconds it took, and
    /// the source's interval seen before it.
    recent: VecDeque<(Duration, f64, f64)>,
    last: Option<Duration>,
    /// The user has been told, and not yet seen the machine catch up.
    told: bool,
}

impl Lag {
    /// Takes one processed frame: its `timestamp` in the stream, the milliseconds it
    /// took (`work_ms`, decoding to cleanup) and how many frames were dropped before it.
    /// Returns the figures to tell the user the first time the machine falls behind
    /// (again only after it has caught up in between).
    pub(super) fn on_frame(
        &mut self,
        timestamp: Duration,
        work_ms: f64,
        dropped: u64,
    ) -> Option<Behind> {
        let last = self.last.replace(timestamp);
        let gap = timestamp.checked_sub(last?)?;
        // the frames the worker never saw lie in the gap too
        let interval_ms = gap.as_secs_f64() * 1e3 / (dropped + 1) as f64;
        if interval_ms <= 0.0 {
            return None;
        }
        self.recent.push_back((timestamp, work_ms, interval_ms));
        while self
            .recent
            .front()
            .is_some_and(|&(t, ..)| timestamp.saturating_sub(t) > SPAN)
        {
            self.recent.pop_front();
        }
        let late = self.recent.iter().filter(|&&(_, w, i)| w > i).count();
        let judged = self.recent.len() >= FEWEST
            && timestamp.saturating_sub(self.recent[0].0) >= SPAN.mul_f64(0.9);
        if !judged {
            return None;
        }
        if late * 4 < self.recent.len() {
            self.told = false;
        }
        if self.told || late * 4 < self.recent.len() * 3 {
            return None;
        }
        self.told = true;
        Some(Behind {
            work_ms: median(self.recent.iter().map(|&(_, w, _)| w))?,
            interval_ms: median(self.recent.iter().map(|&(.., i)| i))?,
        })
    }

    /// Starts over (a new source, or another working resolution).
    pub(super) fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `seconds` of a 30 fps source whose frames take `work_ms`, with `dropped`
    /// frames lost before each; returns the frames at which the user was told.
    fn run(lag: &mut Lag, from: f64, seconds: f64, work_ms: f64, dropped: u64) -> Vec<Behind> {
        let step = (dropped + 1) as f64 / 30.0;
        let mut told = Vec::new();
        let mut t = from;
        while t < from + seconds {
            let at = Duration::from_secs_f64(t);
            told.extend(lag.on_frame(at, work_ms, dropped));
            t += step;
        }
        told
    }

    #[test]
    fn a_machine_that_keeps_up_is_never_told() {
        let mut lag = Lag::default();
        assert!(run(&mut lag, 0.0, 20.0, 25.0, 0).is_empty());
    }

    #[test]
    fn late_frames_for_a_few_seconds_tell_once_until_it_catches_up() {
        let mut lag = Lag::default();
        // every other frame dropped: the worker sees 15 fps but the source sends 30
        let told = run(&mut lag, 0.0, 10.0, 50.0, 1);
        assert_eq!(told.len(), 1, "{told:?}");
        assert!((told[0].interval_ms - 33.3).abs() < 0.5, "{told:?}");
        assert_eq!(told[0].work_ms, 50.0);
        // a short burst does not tell; a recovery and a new slow spell do
        assert!(run(&mut lag, 10.0, 1.0, 50.0, 1).is_empty());
        assert!(run(&mut lag, 11.0, 5.0, 20.0, 0).is_empty());
        assert_eq!(run(&mut lag, 16.0, 5.0, 45.0, 0).len(), 1);
    }

    #[test]
    fn a_burst_shorter_than_the_span_is_not_told() {
        let mut lag = Lag::default();
        assert!(run(&mut lag, 0.0, 5.0, 20.0, 0).is_empty());
        assert!(run(&mut lag, 5.0, 2.0, 60.0, 0).is_empty());
        lag.reset();
        assert!(run(&mut lag, 0.0, 2.5, 60.0, 0).is_empty());
    }
}
