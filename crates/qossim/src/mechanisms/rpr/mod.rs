//! Resilient Packet Ring (IEEE 802.17) fairness: a ring of stations, each adding its
//! clients' traffic and forwarding transit traffic, sharing a congested span through a
//! distributed fairness protocol.
//!
//! Where each step happens:
//! - **the station's MAC queues and selects** — [`RprStation`], a port element on both
//!   of a station's output ports: the client buffer (add path), the primary and secondary
//!   transit queues (PTQ, STQ) of the dual-queue design or the single transit queue, and
//!   the transmit selector (PTQ first; STQ above its high threshold before add traffic;
//!   add traffic crossing the congested span no faster than the allowed rate);
//! - **the station measures** — [`RateCounters`]: addRate and fwRate aged every aging
//!   interval and low-pass filtered (ageCoef, lpCoef);
//! - **the station advertises** — every aging interval a [`FairnessMessage`] (a real
//!   16-byte packet on the other ringlet) tells the upstream neighbour the fair rate of
//!   the head of the congestion domain, or "full rate"; the aggressive mode follows
//!   lpAddRate, the conservative mode changes its rate at most once per measured fairness
//!   round trip;
//! - **the ring is observed** — [`RprMonitor`]: per-flow throughput series, one
//!   connection's cwnd and RTT, the RTT of every TCP acknowledgement.
//!
//! [`scenario`] is the family's part of the scenario language: the `rpr_ring` topology,
//! the `[rpr]` section, the builder and the post-run `rpr.*` summary.

mod monitor;
mod rates;
pub mod scenario;
mod station;

pub use monitor::{RprMonitor, WatchedEntry};
pub use rates::RateCounters;
pub use scenario::{jain_index, RprFamily, RprSpec, RPR};
pub use station::{
    advertisement, congested, BufferDesign, FairnessMessage, FairnessMode, RprConfig, RprStation,
    StationStats,
};
