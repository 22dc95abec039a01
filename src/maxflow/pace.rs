//! Whether an update continues from the kept graph or solves afresh, chosen by what each
//! has cost on this stream: both give the same flow and cut, so the cheaper one wins.
//! Both engines choose so: on the device a continued solve still starts and ends with a
//! whole global relabel, and on the CPU every changed arc leaves residual for the
//! resumed search, so where a frame's changes reach across the grid (a textured object
//! moving, a σ moved) continuing can cost more than a fresh solve, and where they stay
//! local it costs less, whatever their share of the arcs.

/// Frames between probes of the way not taken, so that its estimate follows the stream,
/// where both ways cost alike; a way that costs k times the other is probed k times
/// less often (up to [`PROBE_MOST_EVERY`]), so that probes add a bounded share to what
/// the frames cost.
const PROBE_EVERY: u32 = 16;
/// The longest wait between probes.
const PROBE_MOST_EVERY: u32 = 256;
/// Weight of the newest call in each running estimate.
const NEW_WEIGHT: f64 = 0.25;

/// Running estimates of what a fresh solve and a continued one cost, in milliseconds.
/// The first call each way is left out: it pays one-off costs (allocations, the first
/// launch of a kernel) that say nothing of the next frames.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pace {
    fresh_ms: Option<f64>,
    resumed_ms: Option<f64>,
    /// Calls made each way (fresh, continued), up to 2.
    calls: [u8; 2],
    /// Calls since the way not taken was last tried.
    since_probe: u32,
}

impl Pace {
    /// Whether the next update should continue from the kept graph: each way until it
    /// has an estimate (continuing first), then the cheaper one, and the other one every
    /// [`PROBE_EVERY`] calls or less often, by how much more it costs.
    pub fn resume(&mut self) -> bool {
        let (Some(fresh), Some(resumed)) = (self.fresh_ms, self.resumed_ms) else {
            return self.resumed_ms.is_none();
        };
        self.since_probe += 1;
        let cheaper = resumed <= fresh;
        let ratio = fresh.max(resumed) / fresh.min(resumed).max(f64::MIN_POSITIVE);
        let every = (f64::from(PROBE_EVERY) * ratio).min(f64::from(PROBE_MOST_EVERY)) as u32;
        if self.since_probe >= every {
            self.since_probe = 0;
            return !cheaper;
        }
        cheaper
    }

    /// Records what a call cost: `resumed` says which way it went.
    pub fn record(&mut self, resumed: bool, ms: f64) {
        let calls = &mut self.calls[usize::from(resumed)];
        *calls = (*calls + 1).min(2);
        if *calls < 2 {
            return;
        }
        let slot = if resumed {
            &mut self.resumed_ms
        } else {
            &mut self.fresh_ms
        };
        *slot = Some(slot.map_or(ms, |old| old + NEW_WEIGHT * (ms - old)));
    }

    /// Forgets the estimates (a new grid shape: what the old one cost says nothing).
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cheaper_way_is_taken_and_the_other_probed_now_and_then() {
        let mut pace = Pace::default();
        pace.record(false, 90.0); // the first solve: allocations, left out
        assert!(pace.resume(), "continuing is tried first");
        pace.record(true, 40.0); // its first call: left out
        assert!(pace.resume(), "until it has an estimate");
        pace.record(true, 3.0);
        assert!(!pace.resume(), "then a fresh solve, for its estimate");
        pace.record(false, 2.0);
        // continuing costs more than a fresh solve: it is probed as many times less
        // often as it costs more
        let every = (f64::from(PROBE_EVERY) * 3.0 / 2.0) as usize;
        let picks: Vec<bool> = (0..2 * every).map(|_| pace.resume()).collect();
        assert_eq!(picks.iter().filter(|&&r| r).count(), 2, "{picks:?}");
        assert!(picks[every - 1], "the probe");
        // continuing becomes cheaper: it is taken from then on
        for _ in 0..8 {
            pace.record(true, 0.5);
        }
        assert!((0..PROBE_EVERY - 1).all(|_| pace.resume()));
        pace.reset();
        assert!(pace.resume());
    }

    #[test]
    fn a_way_that_costs_much_more_is_probed_rarely() {
        let mut pace = Pace::default();
        for (resumed, ms) in [(false, 30.0), (false, 30.0), (true, 1.0), (true, 1.0)] {
            pace.record(resumed, ms);
        }
        // a fresh solve costs more than the longest wait allows for: probed at that wait
        let picks: Vec<bool> = (0..2 * PROBE_MOST_EVERY).map(|_| pace.resume()).collect();
        let fresh: Vec<usize> = (0..picks.len()).filter(|&i| !picks[i]).collect();
        assert_eq!(
            fresh,
            [
                PROBE_MOST_EVERY as usize - 1,
                2 * PROBE_MOST_EVERY as usize - 1
            ]
        );
    }
}
