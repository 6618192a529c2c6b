//! Edge conditioners: meters and markers that decide whether a packet is in profile.
//!
//! Each conditioner is usable in two ways:
//! - as a [`PortHook`] on a link's output port, where it sees every
//!   packet offered to the port and never discards one (it only rewrites marks);
//! - standalone, through its `meter(&mut self, pkt, now)` method (also available through
//!   the [`Meter`] trait), so that a host-side profiler can mark a flow's packets before
//!   they enter the network.
//!
//! The conditioners are:
//! - [`TokenBucketProfiler`]: a packet finding enough tokens is IN, otherwise OUT; the
//!   bucket is kept in exact integer arithmetic ([`TokenBucket`]), so the IN traffic
//!   conforms to the (rate, depth) envelope exactly, not to within rounding;
//! - [`TswProfiler`]: the Time-Sliding-Window rate estimator and two-colour probabilistic
//!   marker of Clark and Fang (the estimator RFC 2859 reuses for its three-colour marker);
//! - [`Policer`]: a token bucket on an aggregate that demotes IN packets exceeding the
//!   contract to OUT and counts them (optionally per flow).
//!
//! [`FlowProfiler`] wraps any [`Meter`] into a port hook that meters only some flows'
//! data packets (a host profiler for a source that does not mark its own packets).
//!
//! The IN/OUT state lives in the [`marks::IN_PROFILE`] bit:
//! a packet without it is OUT.

mod flow_profiler;
mod kind;
mod policer;
mod token_bucket;
mod tsw;

pub use flow_profiler::FlowProfiler;
pub use kind::{MeterKind, METERS, POLICER, TOKEN_BUCKET, TSW};
pub use policer::{FlowPolicing, Policer};
pub use token_bucket::{TokenBucket, TokenBucketProfiler, TOKEN_UNITS_PER_BYTE};
pub use tsw::{OutRule, TswProfiler};

use crate::net::{marks, Packet, PortHook, PortInfo};
use crate::time::Time;
use std::any::Any;

/// A meter/marker: it looks at a packet at time `now`, may rewrite its marks, and says
/// whether the packet is in profile (or marked) afterwards. Every `Meter` is also a port
/// hook, through the one adapter below: it sees every packet offered to the port, never
/// discards one, keeps the FIFO fast path and reports its counters in the summary.
///
/// Calls must come in non-decreasing order of `now`.
pub trait Meter: Any {
    /// Meters one packet; returns true if it leaves in profile (or marked).
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool;
    /// Appends this meter's counters (name, value) for the run summary.
    fn report(&self, _out: &mut Vec<(String, f64)>) {}
    /// The warm-up ended at `now`.
    fn on_warmup(&mut self, _now: Time) {}
}

impl<M: Meter> PortHook for M {
    #[inline]
    fn on_arrival(&mut self, pkt: &mut Packet, now: Time, _port: &PortInfo) -> bool {
        self.meter(pkt, now);
        true
    }
    fn wants_departures(&self) -> bool {
        false
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        Meter::report(self, out);
    }
    fn on_warmup(&mut self, now: Time) {
        Meter::on_warmup(self, now);
    }
}

impl Meter for TokenBucketProfiler {
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        TokenBucketProfiler::meter(self, pkt, now)
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        self.counts.report("tb_", out);
    }
}

impl Meter for TswProfiler {
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        TswProfiler::meter(self, pkt, now)
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        self.counts.report("tsw_", out);
        out.push(("tsw_avg_rate_bps".into(), self.avg_bps()));
    }
}

impl Meter for Policer {
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        Policer::meter(self, pkt, now)
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        self.report_counters(out);
    }
    fn on_warmup(&mut self, _now: Time) {
        self.reset_flows();
    }
}

/// The IN/OUT counters of a two-colour profiler, and its marking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InOutCounts {
    /// Packets left IN.
    pub in_pkts: u64,
    /// Packets left OUT.
    pub out_pkts: u64,
    /// Bytes left IN.
    pub in_bytes: u64,
    /// Bytes left OUT.
    pub out_bytes: u64,
}

impl InOutCounts {
    /// Marks `pkt` IN (`is_in`) or OUT and counts it; returns `is_in`.
    #[inline]
    pub fn apply(&mut self, pkt: &mut Packet, is_in: bool) -> bool {
        if is_in {
            pkt.set(marks::IN_PROFILE);
            self.in_pkts += 1;
            self.in_bytes += pkt.size as u64;
        } else {
            pkt.clear(marks::IN_PROFILE);
            self.out_pkts += 1;
            self.out_bytes += pkt.size as u64;
        }
        is_in
    }
    /// Appends the counters as `PREFIXin_pkts`, `PREFIXout_pkts`, `PREFIXin_bytes`,
    /// `PREFIXout_bytes`.
    pub fn report(&self, prefix: &str, out: &mut Vec<(String, f64)>) {
        out.push((format!("{prefix}in_pkts"), self.in_pkts as f64));
        out.push((format!("{prefix}out_pkts"), self.out_pkts as f64));
        out.push((format!("{prefix}in_bytes"), self.in_bytes as f64));
        out.push((format!("{prefix}out_bytes"), self.out_bytes as f64));
    }
}

use crate::metrics::declared::{stat, Stat, Window::*};

/// The meters' and markers' statistics (`link.{link}.` keys of the hooks on a port).
pub const STATS: &[Stat] = &[
    stat(
        "link.{link}.{tb|tsw}_{in|out}_pkts",
        "packets",
        Run,
        "token-bucket or TSW marker: packets left IN or marked OUT",
    ),
    stat(
        "link.{link}.{tb|tsw}_{in|out}_bytes",
        "B",
        Run,
        "token-bucket or TSW marker: bytes left IN or marked OUT",
    ),
    stat(
        "link.{link}.tsw_avg_rate_bps",
        "b/s",
        End,
        "TSW marker: its rate estimate at the end",
    ),
    stat(
        "link.{link}.policer_in_pkts",
        "packets",
        Run,
        "policer: IN packets seen",
    ),
    stat(
        "link.{link}.policer_demoted_pkts",
        "packets",
        Run,
        "policer: IN packets demoted to OUT",
    ),
    stat(
        "link.{link}.policer_demoted_fraction",
        "fraction",
        Run,
        "policer: demoted over IN packets seen",
    ),
    stat(
        "link.{link}.profile.{traffic}.{in_pkts|out_pkts}",
        "packets",
        AfterWarmup,
        "a host profile: packets of the entry left IN or marked OUT",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::time::PS_PER_MS;

    #[test]
    fn usable_through_the_trait() {
        let mut ms: Vec<Box<dyn Meter>> = vec![
            Box::new(TokenBucketProfiler::new(8_000_000, 1500)),
            Box::new(TswProfiler::new(
                8_000_000,
                PS_PER_MS * 1000,
                Rng::from_seed(1),
            )),
            Box::new(Policer::new(8_000_000, 1500)),
        ];
        for m in ms.iter_mut() {
            let mut p = Packet {
                size: 1000,
                marks: marks::IN_PROFILE,
                ..Default::default()
            };
            assert!(m.meter(&mut p, PS_PER_MS));
            assert!(p.has(marks::IN_PROFILE));
        }
    }
}
