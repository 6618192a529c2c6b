//! Endpoint admission control: hosts probe the path before sending and admit a flow only
//! if the probes' loss (or mark) fraction is at most ε; routers only give
//! admission-controlled traffic a rate-limited strict-priority class. Measured Sum, a
//! router-based measurement admission control, is the benchmark.
//!
//! Where each step happens:
//! - **the router** — queue disciplines of the core: one drop-tail FIFO (in-band
//!   probing), or strict priority with probes one class below data and push-out of a
//!   queued probe by arriving data (out-of-band); for the marking designs a
//!   [`VirtualQueue`] beside the real queue marks (ECN CE) what it would have dropped;
//! - **the sending host** — [`ProbeAdmission`], the call admission policy of the traffic
//!   entry's flow generator: every call spawns a [`Prober`] that sends its probes at the
//!   flow's token rate ([`Algorithm`]: simple, early reject, slow start) and hands the
//!   verdict to the generator, which starts the flow at once or blocks it for good;
//! - **the receiving host** — [`ProbeReceiver`] counts each call's probes per interval
//!   (losses as sequence gaps and missing probes, marks as CE bits) and returns the
//!   decision after one propagation delay;
//! - **the benchmark** — [`MeasuredSum`] samples a link's arrivals and decides requests
//!   through [`MbacAdmission`].

mod mbac;
pub mod params;
mod probe;
pub mod scenario;
mod vq;

pub use mbac::{MbacAdmission, MeasuredSum};
pub use probe::{
    loss_floor, Algorithm, Interval, ProbeAdmission, ProbeCounts, ProbeReceiver, ProbeSetup,
    ProbeSpec, ProbeVerdict, Prober, Step,
};
pub use scenario::{EndpointFamily, EndpointSpec, MbacEntry, ProbeEntry, VqEntry, ENDPOINT};
pub use vq::VirtualQueue;

use crate::metrics::declared::{stat, Stat, Window::*};

/// The endpoint admission family's statistics (`endpoint.*`, after the warm-up).
pub const STATS: &[Stat] = &[
    stat(
        "endpoint.{traffic}.{offered_calls|blocked_calls}",
        "calls",
        AfterWarmup,
        "calls offered and blocked",
    ),
    stat(
        "endpoint.{traffic}.blocking",
        "fraction",
        AfterWarmup,
        "blocked over offered calls",
    ),
    stat(
        "endpoint.{traffic}.{probe_admitted|probe_rejected}",
        "calls",
        AfterWarmup,
        "calls admitted or rejected by their probe",
    ),
    stat(
        "endpoint.{traffic}.{probes_sent|probes_received|probes_marked}",
        "packets",
        AfterWarmup,
        "probe packets sent, received, marked",
    ),
    stat(
        "endpoint.{traffic}.{data_sent|data_lost}",
        "packets",
        AfterWarmup,
        "data packets of admitted calls sent and lost",
    ),
    stat(
        "endpoint.{traffic}.data_loss",
        "fraction",
        AfterWarmup,
        "data packets lost over sent",
    ),
    stat(
        "endpoint.{traffic}.data_bps",
        "b/s",
        AfterWarmup,
        "data rate delivered",
    ),
    stat(
        "endpoint.{data_sent|data_lost}",
        "packets",
        AfterWarmup,
        "data packets of all entries sent and lost",
    ),
    stat(
        "endpoint.data_loss",
        "fraction",
        AfterWarmup,
        "data packets lost over sent, all entries",
    ),
    stat(
        "endpoint.data_bps",
        "b/s",
        AfterWarmup,
        "data rate delivered, all entries",
    ),
    stat(
        "endpoint.mbac.{name}.{x}",
        "as the estimator's key",
        AfterWarmup,
        "a measurement-based admission estimator's own figures",
    ),
    stat(
        "link.{link}.{vq_seen|vq_marked}",
        "packets",
        Run,
        "in-band marking's virtual queue: packets seen and marked",
    ),
];
