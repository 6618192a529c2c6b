//! CUBIC's window growth (RFC 9438) for the TCP sender: the cubic curve around the
//! window of the last congestion event, the Reno-friendly estimate, fast convergence and
//! the multiplicative decrease β = 0.7.
//!
//! The sender counts one ACK of new data as one segment acknowledged (ACK counting, as
//! its Reno does); with an ACK per segment this is the RFC's `segments_acked`.

use crate::time::{to_secs, Time};

/// CUBIC's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    /// C, the curve's scaling constant (segments per second cubed): 0.4.
    pub c: f64,
    /// β_cubic, the multiplicative decrease: 0.7.
    pub beta: f64,
    /// Fast convergence (release bandwidth faster to a new flow): on.
    pub fast_convergence: bool,
}

impl Default for CubicParams {
    /// The RFC's values: C = 0.4, β = 0.7, fast convergence on.
    fn default() -> Self {
        CubicParams {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
        }
    }
}

/// CUBIC's state between congestion events.
#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicParams,
    /// W_max: the window just before the last reduction (segments).
    w_max: f64,
    /// The window at the last reduction (cwnd right after it), for α's switch to 1.
    w_reduced: f64,
    /// Start of the current congestion-avoidance epoch (None: starts at the next ACK).
    epoch: Option<Time>,
    /// K (seconds): when the curve returns to its origin.
    k: f64,
    /// The curve's plateau: W_max, or the window at the epoch's start if above it.
    origin: f64,
    /// W_est, the Reno-friendly window.
    w_est: f64,
    /// A timeout came since the last epoch: the next epoch starts at K = 0 from its own
    /// window (RFC 9438, section 4.8).
    after_timeout: bool,
}

impl Cubic {
    /// Fresh state (no congestion event yet).
    pub fn new(p: CubicParams) -> Self {
        Cubic {
            p,
            w_max: 0.0,
            w_reduced: 0.0,
            epoch: None,
            k: 0.0,
            origin: 0.0,
            w_est: 0.0,
            after_timeout: false,
        }
    }

    /// The constants.
    pub fn params(&self) -> CubicParams {
        self.p
    }

    /// A congestion event (fast retransmit or timeout) with window `cwnd` and `flight`
    /// segments outstanding: remembers W_max (lowered further under fast convergence if
    /// the window had not regained the previous W_max) and returns the new ssthresh,
    /// max(β·flight, 2). The next congestion-avoidance ACK starts a new epoch.
    pub fn congestion(&mut self, cwnd: f64, flight: f64) -> f64 {
        let b = self.p.beta;
        self.w_max = if self.p.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + b) / 2.0
        } else {
            cwnd
        };
        self.epoch = None;
        let ssthresh = (flight * b).max(2.0);
        self.w_reduced = ssthresh;
        ssthresh
    }

    /// A retransmission timeout with window `cwnd` and `flight` segments outstanding:
    /// ssthresh as for any congestion event ([`Self::congestion`]), and the first
    /// congestion-avoidance epoch after it starts with K = 0 and W_max set to the window
    /// at its start (RFC 9438, section 4.8), not at the W_max the timeout recorded.
    pub fn timeout(&mut self, cwnd: f64, flight: f64) -> f64 {
        let ssthresh = self.congestion(cwnd, flight);
        self.after_timeout = true;
        ssthresh
    }

    /// W_cubic(t) for `t` seconds into the epoch.
    pub fn w_cubic(&self, t: f64) -> f64 {
        self.p.c * (t - self.k).powi(3) + self.origin
    }

    /// The window after one ACK of new data in congestion avoidance at `now`, from
    /// `cwnd`, with smoothed RTT `rtt` seconds.
    pub fn on_ack(&mut self, now: Time, cwnd: f64, rtt: f64) -> f64 {
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                self.start_epoch(cwnd);
                self.epoch = Some(now);
                now
            }
        };
        let t = to_secs(now - epoch);
        // Reno-friendly estimate: α = 3(1 − β)/(1 + β) until W_est reaches W_max, then 1.
        let b = self.p.beta;
        let alpha = if self.w_est >= self.w_max {
            1.0
        } else {
            3.0 * (1.0 - b) / (1.0 + b)
        };
        self.w_est += alpha / cwnd;
        if self.w_cubic(t) < self.w_est {
            return self.w_est.max(cwnd);
        }
        let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
        cwnd + (target - cwnd) / cwnd
    }

    fn start_epoch(&mut self, cwnd: f64) {
        if self.after_timeout {
            self.after_timeout = false;
            self.w_max = cwnd;
        }
        if cwnd < self.w_max {
            self.k = ((self.w_max - cwnd) / self.p.c).cbrt();
            self.origin = self.w_max;
        } else {
            self.k = 0.0;
            self.origin = cwnd;
        }
        self.w_est = cwnd;
    }

    /// W_max (segments).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// The window at the last reduction.
    pub fn w_reduced(&self) -> f64 {
        self.w_reduced
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_MS;

    #[test]
    fn reduction_and_fast_convergence() {
        let mut c = Cubic::new(CubicParams::default());
        assert_eq!(c.congestion(100.0, 100.0), 70.0);
        assert_eq!(c.w_max(), 100.0);
        // Lost again before regaining 100: W_max is lowered to 80 x 1.7 / 2.
        assert_eq!(c.congestion(80.0, 80.0), 56.0);
        assert!((c.w_max() - 68.0).abs() < 1e-12);
        // Without fast convergence W_max is the window.
        let mut c = Cubic::new(CubicParams {
            fast_convergence: false,
            ..CubicParams::default()
        });
        c.congestion(100.0, 100.0);
        c.congestion(80.0, 80.0);
        assert_eq!(c.w_max(), 80.0);
        // ssthresh is at least 2.
        assert_eq!(c.congestion(2.0, 2.0), 2.0);
    }

    #[test]
    fn the_curve_returns_to_w_max_after_k() {
        let mut c = Cubic::new(CubicParams {
            fast_convergence: false,
            ..CubicParams::default()
        });
        c.congestion(100.0, 100.0);
        // First ACK of the epoch at 70 segments: K = cbrt(30 / 0.4) = 4.217 s.
        c.on_ack(0, 70.0, 0.1);
        let k = (30.0f64 / 0.4).cbrt();
        assert!((c.k - k).abs() < 1e-12);
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(k) - 100.0).abs() < 1e-12);
        // Concave below W_max: the target one RTT ahead, at most 1.5 cwnd; the window
        // grows by (target − cwnd)/cwnd.
        let t = 1000 * PS_PER_MS;
        let w = c.on_ack(t, 80.0, 0.1);
        let target = c.w_cubic(1.1).clamp(80.0, 120.0);
        assert!((w - (80.0 + (target - 80.0) / 80.0)).abs() < 1e-12, "{w}");
    }

    #[test]
    fn after_a_timeout_the_epoch_starts_at_k_zero_from_its_own_window() {
        let mut c = Cubic::new(CubicParams {
            fast_convergence: false,
            ..CubicParams::default()
        });
        // A timeout at 100 segments: ssthresh 70 as for any congestion event.
        assert_eq!(c.timeout(100.0, 100.0), 70.0);
        // Slow start from 1 reaches 60 before the first congestion-avoidance ACK: the
        // epoch starts there with K = 0 and W_max = 60 (RFC 9438, section 4.8), so the
        // curve is convex from 60, W_cubic(t) = 60 + 0.4 t^3, not a concave approach to
        // the 100 segments the timeout remembered (K = cbrt(40 / 0.4) = 4.64 s).
        c.on_ack(0, 60.0, 0.1);
        assert_eq!(c.k, 0.0);
        assert_eq!(c.w_max(), 60.0);
        assert!((c.w_cubic(2.0) - (60.0 + 0.4 * 8.0)).abs() < 1e-12);
        // A later congestion event starts its epoch from W_max again, as before.
        assert_eq!(c.congestion(80.0, 80.0), 56.0);
        c.on_ack(10_000 * PS_PER_MS, 56.0, 0.1);
        assert!((c.k - (24.0f64 / 0.4).cbrt()).abs() < 1e-12);
        assert_eq!(c.w_max(), 80.0);
    }

    #[test]
    fn reno_friendly_region_takes_over_for_small_windows() {
        let mut c = Cubic::new(CubicParams::default());
        c.congestion(10.0, 10.0);
        // 7 segments, RTT 10 ms: the cubic curve needs K = cbrt(3/0.4) = 1.96 s to regain
        // 10, while W_est grows by α = 0.53 per window of ACKs, every 10 ms.
        let mut w = 7.0;
        let mut t = 0;
        for _ in 0..200 {
            w = c.on_ack(t, w, 0.01);
            t += PS_PER_MS / 10;
        }
        // 200 ACKs in 20 ms: W_est ≈ 7 + 0.53 x 200 / w̄ ≈ 19 at least above the curve's
        // value at 20 ms (≈ 7.02).
        assert!(w > 15.0, "{w}");
        assert!(c.w_cubic(0.02) < 8.0);
    }
}
