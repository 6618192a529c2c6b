//! The router-based benchmark: Measured Sum admission control. Every S the AC arrival
//! rate over the last S is measured; the load estimate is the largest sample of a window
//! of T = 3 S (restarted on each admission); a flow of rate r is admitted iff
//! r + estimate ≤ υ·C, and r is then added to the estimate. A flow whose path crosses
//! several measured links is admitted iff every one of them admits it, and only then is
//! r added to each of their estimates.

use crate::packet::LinkId;
use crate::time::{to_secs, Time};
use crate::traffic::{Admission, CallAdmission};
use crate::world::{Agent, AgentHandle, Ctx};
use std::collections::VecDeque;

/// Measured Sum's estimator at one link (an agent: it samples every S).
pub struct MeasuredSum {
    link: LinkId,
    sample: Time,
    window: usize,
    target: f64,
    capacity: f64,
    last_bytes: u64,
    samples: VecDeque<f64>,
    /// The load estimate, bits/s.
    pub estimate: f64,
    /// Admitted and rejected requests.
    pub admitted: u64,
    /// Rejected requests.
    pub rejected: u64,
}

impl MeasuredSum {
    /// Measures the arrivals at `link` (capacity `capacity` bits/s) every `sample`, with a
    /// window of `window` samples and utilization target `target` (υ).
    pub fn new(link: LinkId, capacity: f64, sample: Time, window: usize, target: f64) -> Self {
        MeasuredSum {
            link,
            sample,
            window: window.max(1),
            target,
            capacity,
            last_bytes: 0,
            samples: VecDeque::new(),
            estimate: 0.0,
            admitted: 0,
            rejected: 0,
        }
    }

    /// A new sample of the arrival rate (bits/s): it raises the estimate at once; when the
    /// window (since the last admission) is full, the estimate is its largest sample.
    pub fn add_sample(&mut self, rate: f64) {
        self.samples.push_back(rate);
        if self.samples.len() > self.window {
            self.samples.pop_front();
        }
        if rate > self.estimate {
            self.estimate = rate;
        }
        if self.samples.len() == self.window {
            self.estimate = self.samples.iter().copied().fold(0.0, f64::max);
        }
    }

    /// Whether a request of `rate` bits/s fits: rate + estimate ≤ υ·C.
    pub fn fits(&self, rate: f64) -> bool {
        rate + self.estimate <= self.target * self.capacity
    }

    /// Books an admitted request of `rate` bits/s: adds it to the estimate and restarts
    /// the window.
    pub fn commit(&mut self, rate: f64) {
        self.estimate += rate;
        self.samples.clear();
        self.admitted += 1;
    }

    /// Decides a request of `rate` bits/s at this link alone: admit iff it
    /// [fits](Self::fits), and then [commit](Self::commit) it.
    pub fn request(&mut self, rate: f64) -> bool {
        if self.fits(rate) {
            self.commit(rate);
            true
        } else {
            self.rejected += 1;
            false
        }
    }
}

impl Agent for MeasuredSum {
    fn start(&mut self, ctx: &mut Ctx) {
        self.last_bytes = ctx.net.links[self.link as usize].stats.arrival_bytes;
        ctx.timer(self.sample, 0);
    }
    fn on_timer(&mut self, _kind: u32, ctx: &mut Ctx) {
        let b = ctx.net.links[self.link as usize].stats.arrival_bytes;
        let rate = (b - self.last_bytes) as f64 * 8.0 / to_secs(self.sample);
        self.last_bytes = b;
        self.add_sample(rate);
        ctx.timer(self.sample, 0);
    }
    fn on_warmup(&mut self, _now: Time) {
        self.admitted = 0;
        self.rejected = 0;
    }
}

/// The admission policy of a flow generator whose requests the Measured Sum estimators
/// of the links on its path decide at once (the request and answer take no time): a
/// request is admitted iff every estimator has room for it, and is then booked at all.
pub struct MbacAdmission {
    estimators: Vec<AgentHandle<MeasuredSum>>,
    rate: f64,
}

impl MbacAdmission {
    /// Requests of `rate` bits/s decided by the estimator agents `estimators` (one per
    /// measured link of the path).
    pub fn new(estimators: Vec<AgentHandle<MeasuredSum>>, rate: f64) -> Self {
        MbacAdmission { estimators, rate }
    }
}

impl CallAdmission for MbacAdmission {
    fn admit(&mut self, _call: u64, _active: usize, ctx: &mut Ctx) -> Admission {
        let agents = ctx.agents();
        let mut all = !self.estimators.is_empty();
        for &e in &self.estimators {
            match agents.get_mut(e) {
                Some(m) if m.fits(self.rate) => {}
                Some(m) => {
                    m.rejected += 1;
                    all = false;
                }
                None => all = false,
            }
        }
        if !all {
            return Admission::Reject;
        }
        for &e in &self.estimators {
            if let Some(m) = agents.get_mut(e) {
                m.commit(self.rate);
            }
        }
        Admission::Admit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_exactly_within_the_target_and_restarts_its_window() {
        // C = 10 Mb/s, υ = 0.9: room for 9 Mb/s.
        let mut m = MeasuredSum::new(0, 10e6, 0, 3, 0.9);
        m.add_sample(8.0e6);
        assert_eq!(m.estimate, 8.0e6);
        // 8 + 1 = 9 <= 9: admitted (at exactly the bound); the estimate is 9 now.
        assert!(m.request(1.0e6));
        assert_eq!(m.estimate, 9.0e6);
        assert!(!m.request(1.0)); // nothing more fits
                                  // The window restarted: lower samples do not lower the estimate until the window
                                  // holds three of them …
        m.add_sample(5e6);
        m.add_sample(6e6);
        assert_eq!(m.estimate, 9.0e6);
        m.add_sample(4e6);
        // … then it is the window's largest sample.
        assert_eq!(m.estimate, 6e6);
        // The window slides: 5 leaves, 6, 4, 3 remain.
        m.add_sample(3e6);
        assert_eq!(m.estimate, 6e6);
        m.add_sample(2e6);
        assert_eq!(m.estimate, 4e6);
        // A sample above the estimate raises it at once.
        m.add_sample(7e6);
        assert_eq!(m.estimate, 7e6);
        assert_eq!((m.admitted, m.rejected), (1, 1));
    }
}
