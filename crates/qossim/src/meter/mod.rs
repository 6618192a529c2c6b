//! Edge conditioners: meters and markers that decide whether a packet is in profile.
//!
//! Each conditioner is usable in two ways:
//! - as a [`PortHook`](crate::net::PortHook) on a link's output port, where it sees every
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
//! The IN/OUT state lives in the [`marks::IN_PROFILE`](crate::net::marks::IN_PROFILE) bit:
//! a packet without it is OUT.

mod flow_profiler;
mod policer;
mod token_bucket;
mod tsw;

pub use flow_profiler::FlowProfiler;
pub use policer::{FlowPolicing, Policer};
pub use token_bucket::{TokenBucket, TokenBucketProfiler, TOKEN_UNITS_PER_BYTE};
pub use tsw::{OutRule, TswProfiler};

use crate::net::Packet;
use crate::time::Time;

/// A meter/marker usable without a port: it looks at a packet at time `now`, may rewrite
/// its marks, and says whether the packet is in profile afterwards.
///
/// Calls must come in non-decreasing order of `now`.
pub trait Meter {
    /// Meters one packet; returns true if it leaves in profile (IN).
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool;
}

impl Meter for TokenBucketProfiler {
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        TokenBucketProfiler::meter(self, pkt, now)
    }
}

impl Meter for TswProfiler {
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        TswProfiler::meter(self, pkt, now)
    }
}

impl Meter for Policer {
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        Policer::meter(self, pkt, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::marks;
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
