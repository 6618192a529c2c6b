//! The Time-Sliding-Window profiler of Clark and Fang (two colours: IN and OUT).

use super::InOutCounts;
use crate::net::Packet;
use crate::rng::Rng;
use crate::time::{to_secs, Time};

/// How a TSW profiler turns an estimate above the target into an OUT probability.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutRule {
    /// `min(1, (avg - target) / target)`, as the Assured Service study specifies.
    #[default]
    OverTarget,
    /// `(avg - target) / avg`, as in Clark and Fang's tagger.
    OverAverage,
}

impl OutRule {
    /// The probability that a packet is OUT given the estimate `avg` and `target`.
    #[inline]
    pub fn out_probability(self, avg: f64, target: f64) -> f64 {
        if avg <= target {
            0.0
        } else {
            match self {
                OutRule::OverTarget => ((avg - target) / target).min(1.0),
                OutRule::OverAverage => (avg - target) / avg,
            }
        }
    }
}

/// Time-Sliding-Window rate estimator with a probabilistic IN/OUT marker.
///
/// On each packet of `size` bytes at time `now` the estimate is updated as
/// ```text
/// bits    = avg * win + 8 * size
/// avg     = bits / ((now - t_front) + win)
/// t_front = now
/// ```
/// with `avg` in bit/s, starting at the target rate. If `avg <= target` the packet is IN;
/// otherwise it is OUT with a probability given by the [`OutRule`]: by default the Assured
/// Service study's `min(1, (avg - target) / target)`; with [`OutRule::OverAverage`],
/// Clark and Fang's `(avg - target) / avg`, under which a flow sending steadily above its
/// target keeps about `target` bit/s of IN traffic.
///
/// `t_front` starts at time 0 (as in the original algorithm); a profiler created for a flow
/// that starts later should be given its start time with [`TswProfiler::starting_at`].
#[derive(Clone, Debug)]
pub struct TswProfiler {
    rule: OutRule,
    target_bps: f64,
    win_s: f64,
    avg_bps: f64,
    t_front: Time,
    rng: Rng,
    /// IN/OUT counts.
    pub counts: InOutCounts,
}

impl TswProfiler {
    /// A profiler with target rate `target_bps`, averaging window `win` (picoseconds;
    /// one second is the customary value) and its own random stream `rng`.
    ///
    /// # Panics
    /// Panics if `win` is zero.
    pub fn new(target_bps: u64, win: Time, rng: Rng) -> Self {
        assert!(win > 0, "TSW window must be positive");
        TswProfiler {
            rule: OutRule::default(),
            target_bps: target_bps as f64,
            win_s: to_secs(win),
            avg_bps: target_bps as f64,
            t_front: 0,
            rng,
            counts: InOutCounts::default(),
        }
    }

    /// Uses `rule` to mark packets OUT.
    pub fn with_rule(mut self, rule: OutRule) -> Self {
        self.rule = rule;
        self
    }

    /// Starts the window at `t` instead of time 0 (for a flow that starts at `t`).
    pub fn starting_at(mut self, t: Time) -> Self {
        self.t_front = t;
        self
    }

    /// The current rate estimate, bit/s.
    pub fn avg_bps(&self) -> f64 {
        self.avg_bps
    }

    /// The target rate, bit/s.
    pub fn target_bps(&self) -> f64 {
        self.target_bps
    }

    /// Updates the rate estimate with a packet of `size` bytes at `now` and returns it.
    #[inline]
    pub fn estimate(&mut self, size: u32, now: Time) -> f64 {
        let bits = self.avg_bps * self.win_s + size as f64 * 8.0;
        let gap = to_secs(now.saturating_sub(self.t_front));
        self.avg_bps = bits / (gap + self.win_s);
        self.t_front = self.t_front.max(now);
        self.avg_bps
    }

    /// Meters one packet at `now`: updates the estimate, then marks the packet IN or OUT;
    /// returns true if it is IN.
    #[inline]
    pub fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        let avg = self.estimate(pkt.size, now);
        let p_out = self.rule.out_probability(avg, self.target_bps);
        let is_in = p_out <= 0.0 || !self.rng.bernoulli(p_out);
        self.counts.apply(pkt, is_in)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::marks;
    use crate::time::{PS_PER_MS, PS_PER_S};

    #[test]
    fn one_update_follows_the_formula() {
        // target 1 Mb/s, window 1 s; a 1000-byte packet 0.5 s after t_front = 0:
        // bits = 1e6 * 1 + 8000, avg = 1_008_000 / 1.5 = 672_000 bit/s <= target: IN.
        let mut m = TswProfiler::new(1_000_000, PS_PER_S, Rng::from_seed(1));
        let mut p = Packet::of_size(1000);
        assert!(m.meter(&mut p, PS_PER_S / 2));
        assert!((m.avg_bps() - 672_000.0).abs() < 1e-6);
        assert!(p.has(marks::IN_PROFILE));
    }

    #[test]
    fn cbr_estimate_has_the_offered_rate_as_fixed_point() {
        // 1000-byte packets every 4 ms = 2 Mb/s against a 1 Mb/s target, 100 ms window.
        let mut m = TswProfiler::new(1_000_000, 100 * PS_PER_MS, Rng::from_seed(2));
        let mut t = 0;
        for _ in 0..2000 {
            t += 4 * PS_PER_MS;
            let mut p = Packet::of_size(1000);
            m.meter(&mut p, t);
        }
        assert!(
            (m.avg_bps() - 2e6).abs() < 1e-6 * 2e6,
            "avg {}",
            m.avg_bps()
        );
        // A rate at or below target is all IN.
        let mut m = TswProfiler::new(2_000_000, 100 * PS_PER_MS, Rng::from_seed(2));
        let mut t = 0;
        for _ in 0..2000 {
            t += 4 * PS_PER_MS;
            let mut p = Packet::of_size(1000);
            assert!(m.meter(&mut p, t));
        }
    }

    #[test]
    fn above_target_marks_out_with_probability_excess_over_avg() {
        // Estimate pinned at 4x target: P(OUT) = 3/4. Count over many packets.
        let mut m = TswProfiler::new(1_000_000, PS_PER_S, Rng::from_seed(3))
            .with_rule(OutRule::OverAverage);
        let n = 40_000u64;
        let gap = 2 * PS_PER_MS; // 1000 B every 2 ms = 4 Mb/s
        m.avg_bps = 4e6;
        let mut t = 0;
        for _ in 0..n {
            t += gap;
            let mut p = Packet::of_size(1000);
            m.meter(&mut p, t);
        }
        let f = m.counts.out_pkts as f64 / n as f64;
        // Binomial sd = sqrt(0.75 * 0.25 / n) = 0.00217; allow 4.5 sd.
        assert!(
            (f - 0.75).abs() < 4.5 * (0.75f64 * 0.25 / n as f64).sqrt(),
            "{f}"
        );
    }

    #[test]
    fn start_time_avoids_initial_decay() {
        let mut a = TswProfiler::new(1_000_000, PS_PER_S, Rng::from_seed(4));
        let mut b =
            TswProfiler::new(1_000_000, PS_PER_S, Rng::from_seed(4)).starting_at(10 * PS_PER_S);
        a.estimate(125, 10 * PS_PER_S);
        b.estimate(125, 10 * PS_PER_S);
        assert!(a.avg_bps() < 0.1e6);
        assert!((b.avg_bps() - 1_001_000.0).abs() < 1e-6);
    }
}
