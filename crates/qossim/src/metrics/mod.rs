//! Measurement inside a run: time averages, histograms, sampled time series and the
//! run summary. Everything is written as columns, never printed.

pub mod declared;
pub mod stats;

pub use stats::{batch_means, t975, t_interval, Estimate, Welford};

use crate::time::{to_secs, Time};

/// The time-weighted average of a piecewise-constant quantity (a queue length, the number
/// of active flows). Values before `start` are ignored (warm-up).
#[derive(Clone, Debug, Default)]
pub struct TimeAverage {
    value: f64,
    since: Time,
    area: f64,
    start: Time,
    span: Time,
    max: f64,
}

impl TimeAverage {
    /// Sets a new value at `now`.
    #[inline]
    pub fn set(&mut self, now: Time, v: f64) {
        if now > self.since {
            let from = self.since.max(self.start);
            if now > from {
                self.area += self.value * (now - from) as f64;
                self.span += now - from;
            }
            self.since = now;
        }
        self.value = v;
        if v > self.max {
            self.max = v;
        }
    }
    /// Discards everything before `t` (end of warm-up).
    pub fn reset_at(&mut self, t: Time) {
        self.area = 0.0;
        self.span = 0;
        self.start = t;
        self.max = self.value;
    }
    /// Mean up to `now`.
    pub fn mean(&self, now: Time) -> f64 {
        let from = self.since.max(self.start);
        let (area, span) = if now > from {
            (
                self.area + self.value * (now - from) as f64,
                self.span + (now - from),
            )
        } else {
            (self.area, self.span)
        };
        if span == 0 {
            self.value
        } else {
            area / span as f64
        }
    }
    /// Current value.
    pub fn value(&self) -> f64 {
        self.value
    }
    /// Largest value seen since the last reset.
    pub fn max(&self) -> f64 {
        self.max
    }
}

/// A log-linear histogram of non-negative values (delays in picoseconds): 2^7 linear
/// sub-buckets per power of two, so a percentile is exact to within 1/128 (0.8%).
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// Counts per bucket, up to the highest bucket used so far (it grows on demand, so
    /// that a group that records little costs little: all buckets take 58 KiB).
    counts: Vec<u64>,
    total: u64,
    /// Exact (an integer), so that values may be recorded in any order with the same
    /// result.
    sum: u128,
    max: u64,
}

const SUB_BITS: u32 = 7;

impl Histogram {
    #[inline]
    fn index(v: u64) -> usize {
        if v < (1 << SUB_BITS) {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros();
        let shift = msb - SUB_BITS;
        let sub = (v >> shift) as usize & ((1 << SUB_BITS) - 1);
        (((shift + 1) as usize) << SUB_BITS) + sub
    }
    #[inline]
    fn lower(i: usize) -> u64 {
        let b = i >> SUB_BITS;
        let sub = (i & ((1 << SUB_BITS) - 1)) as u64;
        if b == 0 {
            sub
        } else {
            ((1u64 << SUB_BITS) + sub) << (b - 1)
        }
    }
    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = Self::index(v);
        match self.counts.get_mut(i) {
            Some(c) => *c += 1,
            None => self.grow_to(i),
        }
        self.total += 1;
        self.sum += u128::from(v);
        if v > self.max {
            self.max = v;
        }
    }
    /// Extends the buckets to hold bucket `i` and counts one value there.
    #[cold]
    #[inline(never)]
    fn grow_to(&mut self, i: usize) {
        // Doubling (at least 64 buckets), so that growing costs little over a run.
        let len = (i + 1).max(self.counts.len() * 2).max(64);
        self.counts.resize(len.min(Self::BUCKETS), 0);
        self.counts[i] += 1;
    }
    /// Number of buckets when all are in use.
    const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) << SUB_BITS;
    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.total
    }
    /// Exact mean of the recorded values.
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.total as f64
        }
    }
    /// Largest value recorded.
    pub fn max(&self) -> u64 {
        self.max
    }
    /// The distribution as (value, fraction of values at most it) at the upper edge of
    /// every non-empty bucket, the last point at the largest value (fraction 1).
    pub fn cdf(&self) -> Vec<(u64, f64)> {
        let mut out = Vec::new();
        let mut acc = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            acc += c;
            let upper = if acc == self.total {
                self.max
            } else {
                Self::lower(i + 1) - 1
            };
            out.push((upper, acc as f64 / self.total as f64));
        }
        out
    }

    /// The `q`-quantile (0..=1), as the lower edge of its bucket.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut acc = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                return Self::lower(i);
            }
        }
        self.max
    }
}

/// A sampled time series: a time column (seconds) and one value column.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Series {
    /// Series name, e.g. `link.bottleneck.throughput_bps`.
    pub name: String,
    /// Sample times, seconds.
    pub t: Vec<f64>,
    /// Sample values.
    pub v: Vec<f64>,
    /// Unit of the values.
    pub unit: &'static str,
}

impl Series {
    /// Appends a sample, or returns false (and records why, see [`take_growth_failure`])
    /// when the memory for it cannot be had: the caller stops sampling and the run ends
    /// with an error instead of the allocator aborting the process.
    pub fn try_push(&mut self, t: f64, v: f64) -> bool {
        if self.t.try_reserve(1).is_err() || self.v.try_reserve(1).is_err() {
            note_growth_failure(format!(
                "out of memory: series {:?} could not grow beyond {} samples",
                crate::scenario::walk::shown(&self.name),
                self.t.len()
            ));
            return false;
        }
        self.t.push(t);
        self.v.push(v);
        true
    }
}

thread_local! {
    static GROWTH_FAILURE: std::cell::RefCell<Option<String>> =
        const { std::cell::RefCell::new(None) };
}

/// Records that a run's storage could not grow (the first reason is kept).
pub fn note_growth_failure(why: String) {
    GROWTH_FAILURE.with(|g| {
        g.borrow_mut().get_or_insert(why);
    });
}

/// True if a run on this thread failed to grow its storage.
pub fn growth_failed() -> bool {
    GROWTH_FAILURE.with(|g| g.borrow().is_some())
}

/// The reason a run on this thread failed to grow its storage, clearing it.
pub fn take_growth_failure() -> Option<String> {
    GROWTH_FAILURE.with(|g| g.borrow_mut().take())
}

/// What a sampler measures.
#[derive(Clone, Debug)]
pub enum Probe {
    /// Bits per second sent on a link over each interval; `class` restricts to one class,
    /// `marked` to the packets of one of the link's mark counters (the slot that
    /// `Network::count_marked` returned).
    LinkThroughput {
        /// Link id.
        link: u32,
        /// Only this class, if set.
        class: Option<u8>,
        /// Only the packets of this mark counter slot, if set.
        marked: Option<usize>,
    },
    /// Packets queued on a link's port at the sampling instant.
    QueueLength {
        /// Link id.
        link: u32,
    },
    /// Bits per second delivered to a flow group over each interval.
    GroupThroughput {
        /// Group id.
        group: u32,
    },
}

/// A periodic sampler writing one series.
#[derive(Clone, Debug)]
pub struct Sampler {
    /// What it measures.
    pub probe: Probe,
    /// Sampling interval.
    pub interval: Time,
    /// Counter value at the previous sample (for rates).
    pub last: u64,
    /// Bits on the wire at the previous sample (a link's whole throughput).
    pub last_bits: f64,
    /// The series written.
    pub series: Series,
}

/// Seconds, for summaries.
pub fn secs(t: Time) -> f64 {
    to_secs(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_average_weights_by_duration() {
        let mut a = TimeAverage::default();
        a.set(0, 1.0);
        a.set(10, 3.0);
        assert_eq!(a.mean(20), 2.0);
        a.reset_at(20);
        assert_eq!(a.mean(30), 3.0);
    }

    #[test]
    fn histogram_quantiles_within_resolution() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for q in [0.5, 0.9, 0.99] {
            let exact = q * 100_000.0 * 1000.0;
            let got = h.quantile(q) as f64;
            assert!(
                (got - exact).abs() / exact < 1.0 / 64.0,
                "q{q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.mean(), 50_000.5 * 1000.0);
    }
}
