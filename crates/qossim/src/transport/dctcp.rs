//! DCTCP (RFC 8257) for the TCP sender: the estimate α of the fraction of segments the
//! network marked CE, and the window reduction `cwnd (1 − α/2)` that replaces halving on
//! an ECN echo.
//!
//! # Sender
//! - Every ACK of new data counts the segments it acknowledges (`acked`), and, when it
//!   carries ECE, counts them as marked too (`marked`). Segments are the unit (the sender
//!   counts segments, not bytes; every segment has the same size).
//! - An observation window ends with the first ACK that takes `snd_una` past
//!   `window_end`: then `F = marked / acked`, `α ← (1 − g) α + g F`, the counts restart
//!   and `window_end` becomes `snd_nxt`. `window_end` starts at 0, so the first window
//!   is the first ACK. α starts at 1 (the largest reduction until the network has been
//!   observed; the RFC leaves the initial value to the implementation).
//! - The window update comes first, so the ACK that ends a window already counts in the
//!   α a reduction on that same ACK uses.
//! - An ECE-marked ACK reduces the window at most once per window of data, as RFC 3168's
//!   reaction does (see [`super::tcp`]): `ssthresh = cwnd = max(cwnd (1 − α/2), 2)`.
//!   Losses are handled as NewReno handles them (half the flight), window growth is
//!   NewReno's (one segment per window in congestion avoidance).
//!
//! # Receiver
//! The receiver echoes the CE state exactly (RFC 8257, section 3.2): every ACK carries
//! ECE if and only if the last data segment received carried CE. With an ACK per segment
//! this is one echo per segment. With delayed ACKs, a segment whose CE state differs from
//! the previous one first sends the ACK that was being delayed, with the old state, then
//! the new state applies. CWR is ignored.
//!
//! # Measurement
//! From the warm-up on the sender keeps, over the windows that end: their number `N`,
//! the sum of α after each update, of each window's `F` and of `1 / acked`, and α just
//! before the first of them (`α_0`). Summed over windows, `α_n − α_{n−1} = g (F_n −
//! α_{n−1})` gives the exact identity `mean α = mean F − (α_N − α_0)(1 − g) / (g N)`,
//! which the tests use.

use crate::decl::{Absent, Bounds, Param, Type};
use serde_json::{json, Value};

/// The declared gain of α's moving average (`dctcp_g` on a TCP traffic entry).
pub const G: Param = Param::new(
    "dctcp_g",
    Type::Number,
    Absent::Is("0.0625"),
    "DCTCP: gain g of the moving average α of the marked fraction (congestion = \"dctcp\").",
)
.bounds(Bounds::AboveUpTo(0.0, 1.0));

/// DCTCP's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpParams {
    /// g, the gain of α's moving average (RFC 8257: 1/16).
    pub g: f64,
}

impl Default for DctcpParams {
    /// g = 1/16.
    fn default() -> Self {
        DctcpParams { g: 1.0 / 16.0 }
    }
}

/// What a [`Dctcp`] measured over the windows that ended since the warm-up.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DctcpStats {
    /// Observation windows that ended.
    pub windows: u64,
    /// Sum of α after each window's update.
    pub alpha_sum: f64,
    /// Sum of each window's marked fraction F.
    pub fraction_sum: f64,
    /// Sum of 1 / (segments acknowledged in the window).
    pub inv_window_sum: f64,
    /// α before the first of these windows.
    pub alpha_start: f64,
    /// Segments acknowledged in these windows.
    pub acked: u64,
    /// Of those, segments acknowledged by ECE-marked ACKs.
    pub marked: u64,
}

/// DCTCP's state in one sender.
#[derive(Clone, Debug)]
pub struct Dctcp {
    p: DctcpParams,
    alpha: f64,
    window_end: u64,
    acked: u64,
    marked: u64,
    stats: DctcpStats,
}

impl Dctcp {
    /// Fresh state: α = 1, the first window ends at the first ACK.
    pub fn new(p: DctcpParams) -> Self {
        Dctcp {
            p,
            alpha: 1.0,
            window_end: 0,
            acked: 0,
            marked: 0,
            stats: DctcpStats {
                alpha_start: 1.0,
                ..DctcpStats::default()
            },
        }
    }

    /// The current estimate α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The constants.
    pub fn params(&self) -> DctcpParams {
        self.p
    }

    /// What was measured since the warm-up.
    pub fn stats(&self) -> DctcpStats {
        self.stats
    }

    /// An ACK acknowledging `newly` new segments, with ECE or not, after which the first
    /// unacknowledged segment is `una`; `nxt` is the next segment to send. Ends the
    /// observation window (and updates α) when `una` passes its end.
    pub fn on_ack(&mut self, newly: u64, ece: bool, una: u64, nxt: u64) {
        self.acked += newly;
        if ece {
            self.marked += newly;
        }
        if una <= self.window_end || self.acked == 0 {
            return;
        }
        let f = self.marked as f64 / self.acked as f64;
        let g = self.p.g;
        self.alpha = (1.0 - g) * self.alpha + g * f;
        let s = &mut self.stats;
        s.windows += 1;
        s.alpha_sum += self.alpha;
        s.fraction_sum += f;
        s.inv_window_sum += 1.0 / self.acked as f64;
        s.acked += self.acked;
        s.marked += self.marked;
        self.acked = 0;
        self.marked = 0;
        self.window_end = nxt;
    }

    /// The slow-start threshold (and window) after a reduction on an ECN echo:
    /// `max(cwnd (1 − α/2), 2)`.
    pub fn reduced(&self, cwnd: f64) -> f64 {
        (cwnd * (1.0 - self.alpha / 2.0)).max(2.0)
    }

    /// The warm-up ended: the measurement starts again from the current α.
    pub fn on_warmup(&mut self) {
        self.stats = DctcpStats {
            alpha_start: self.alpha,
            ..DctcpStats::default()
        };
    }

    /// The sender's DCTCP summary keys.
    pub fn report(&self, out: &mut Vec<(String, Value)>) {
        let s = &self.stats;
        let per = |x: f64| {
            if s.windows == 0 {
                0.0
            } else {
                x / s.windows as f64
            }
        };
        out.push(("dctcp_alpha".into(), json!(self.alpha)));
        out.push(("dctcp_alpha_start".into(), json!(s.alpha_start)));
        out.push(("dctcp_windows".into(), json!(s.windows)));
        out.push(("dctcp_alpha_mean".into(), json!(per(s.alpha_sum))));
        out.push(("dctcp_fraction_mean".into(), json!(per(s.fraction_sum))));
        out.push(("dctcp_inv_window_mean".into(), json!(per(s.inv_window_sum))));
        out.push(("dctcp_acked".into(), json!(s.acked)));
        out.push(("dctcp_marked".into(), json!(s.marked)));
    }
}

use crate::metrics::declared::{stat, Stat, Window::*};

/// DCTCP's statistics (senders with `congestion = "dctcp"`).
pub const STATS: &[Stat] = &[
    stat(
        "agent.{tcp}.dctcp_alpha",
        "fraction",
        End,
        "DCTCP sender: the estimate α of the marked fraction at the end",
    ),
    stat(
        "agent.{tcp}.dctcp_alpha_start",
        "fraction",
        AfterWarmup,
        "DCTCP sender: α when the measurement started (end of the warm-up)",
    ),
    stat(
        "agent.{tcp}.dctcp_windows",
        "windows",
        AfterWarmup,
        "DCTCP sender: observation windows ended (updates of α)",
    ),
    stat(
        "agent.{tcp}.{dctcp_alpha_mean|dctcp_fraction_mean}",
        "fraction",
        AfterWarmup,
        "DCTCP sender: α after each update, and each window's marked fraction F, averaged over the windows",
    ),
    stat(
        "agent.{tcp}.dctcp_inv_window_mean",
        "1/segments",
        AfterWarmup,
        "DCTCP sender: 1 / (segments acknowledged in a window), averaged over the windows",
    ),
    stat(
        "agent.{tcp}.{dctcp_acked|dctcp_marked}",
        "segments",
        AfterWarmup,
        "DCTCP sender: segments acknowledged in the windows; of them, by ECE-marked ACKs",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// α's recursion by hand, g = 1/16 from α = 1. Windows: the first ACK (1 segment,
    /// unmarked: α = 15/16); one ACK of 10 segments (unmarked); then segments 12..=22 in
    /// three ACKs, 5 of 11 marked (the window ends at the first ACK past 21); then 10
    /// segments, all marked, in two ACKs (the second passes 30).
    #[test]
    fn alpha_is_the_moving_average_of_the_marked_fraction() {
        let mut d = Dctcp::new(DctcpParams::default());
        let k = 15.0 / 16.0;
        d.on_ack(1, false, 1, 1);
        let a1 = k;
        assert_eq!(d.alpha(), a1);
        d.on_ack(10, false, 11, 21);
        let a2 = a1 * k;
        assert!((d.alpha() - a2).abs() < 1e-15, "{}", d.alpha());
        d.on_ack(5, true, 16, 30);
        d.on_ack(5, false, 21, 30);
        assert_eq!(d.stats().windows, 2, "21 is not past the window's end");
        d.on_ack(1, false, 22, 30);
        let a3 = a2 * k + (5.0 / 11.0) / 16.0;
        assert!((d.alpha() - a3).abs() < 1e-15, "{}", d.alpha());
        d.on_ack(8, true, 30, 40);
        d.on_ack(2, true, 32, 40);
        let a4 = a3 * k + 1.0 / 16.0;
        assert!((d.alpha() - a4).abs() < 1e-15, "{}", d.alpha());
        let s = d.stats();
        assert_eq!((s.windows, s.acked, s.marked), (4, 32, 15));
        // The identity of the module notes, exactly.
        let n = s.windows as f64;
        let lhs = s.alpha_sum / n;
        let rhs = s.fraction_sum / n - (d.alpha() - s.alpha_start) * (15.0 / 16.0) / (n / 16.0);
        assert!((lhs - rhs).abs() < 1e-14, "{lhs} vs {rhs}");
        assert_eq!(d.reduced(100.0), 100.0 * (1.0 - a4 / 2.0));
        assert_eq!(d.reduced(2.5), 2.0);
    }
}
