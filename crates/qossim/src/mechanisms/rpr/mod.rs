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
pub mod params;
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

use crate::metrics::declared::{stat, Stat, Window::*};

/// The RPR family's statistics (`rpr.*`, the stations' agent keys and series).
pub const STATS: &[Stat] = &[
    stat("rpr.jain_index", "fraction", AfterWarmup, "Jain's fairness index of the flows' throughputs"),
    stat("rpr.flow.{traffic}.{k}.throughput_bps", "b/s", AfterWarmup, "throughput of one flow"),
    stat("rpr.station.{i}.throughput_bps", "b/s", AfterWarmup, "rate a station's flows delivered"),
    stat("rpr.station.{i}.add_bps", "b/s", AfterWarmup, "rate a station added to the ring"),
    stat("rpr.station.{i}.{client_drops|stq_drops}", "packets", Run, "drops in a station's client and transit queues"),
    stat("rpr.station.{i}.client_max_pkts", "packets", Run, "most packets in the client queue"),
    stat("rpr.station.{i}.stq_max_bytes", "B", Run, "most bytes in the secondary transit queue"),
    stat("rpr.station.{i}.frtt_s", "s", Run, "the fairness round-trip time measured"),
    stat("rpr.tcp.{rtt_mean_s|rtt_p99_s}", "s", AfterWarmup, "mean and 99th percentile of the traced TCP connection's RTT"),
    stat("rpr.tcp.rtt_samples", "samples", AfterWarmup, "RTT samples of the traced connection"),
    stat("agent.rpr.S{i}.{client_drops|stq_drops|fairness_messages}", "count", Run, "station: drops of the client and transit queues; fairness messages sent"),
    stat("agent.rpr.S{i}.{client_max_pkts}", "packets", Run, "station: most packets in the client queue"),
    stat("agent.rpr.S{i}.stq_max_bytes", "B", Run, "station: most bytes in the secondary transit queue"),
    stat("agent.rpr.S{i}.congested_fraction", "fraction", Run, "station: share of time congested"),
    stat("agent.rpr.S{i}.frtt_s", "s", Run, "station: fairness round-trip time"),
    stat("rpr.S{i}.{add_bps|allowed_bps|allowed_max_bps|fair_rate_bps|lp_add_bps|lp_fw_bps|advertised_bps|received_bps}", "b/s", Run, "series: a station's rates"),
    stat("rpr.S{i}.{stq_bytes}", "B", Run, "series: bytes in the secondary transit queue"),
    stat("rpr.S{i}.{client_pkts}", "packets", Run, "series: packets in the client queue"),
    stat("rpr.S{i}.{x}", "the series' unit", Run, "series: a station's monitored quantity"),
    stat("rpr.flow.{traffic}.{k}.bps", "b/s", Run, "series: a flow's throughput"),
    stat("rpr.tcp.cwnd", "segments", Run, "series: the traced connection's window"),
    stat("rpr.tcp.rtt_s", "s", Run, "series: the traced connection's RTT samples"),
];
