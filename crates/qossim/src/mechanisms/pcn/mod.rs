//! Pre-Congestion Notification (PCN): admission control and flow termination for
//! real-time traffic without per-flow state inside the domain.
//!
//! Where each step happens:
//! - **interior links mark** — [`VirtualQueueMarker`] (admission marking: a virtual queue
//!   drained at the configured-admissible-rate `Ra`, ramp or step marking) and
//!   [`TerminationMarker`] (termination marking: a token bucket at the
//!   configured-termination-rate `Rt`), both port hooks on bottleneck links;
//! - **the egress measures** — [`PcnEgress`] taps the egress node and keeps, per
//!   ingress–egress aggregate (IEA), the [`CongestionLevelEstimate`] (per packet or per
//!   interval) and, on termination marks, measures the sustainable aggregate rate (SAR)
//!   and signals it to the ingress;
//! - **the ingress decides** — [`PcnIngress`] is the admission policy of its aggregate's
//!   call generator (the core's [`crate::traffic::FlowGenerator`], Poisson or BATCH
//!   arrivals): it admits a call iff the egress's CLE is below the CLE-threshold, and on
//!   a SAR measures its own sending rate and terminates flows at random to bring it to
//!   the SAR.
//!
//! [`PcnDomain`] assembles these on a world built by [`single_link`], [`rtt_star`] or
//! [`parking_lot`]; [`expected_termination`] and [`optimal_termination`] compute the
//! beat-down reference values; [`admission_accuracy`] turns the 50-ms PCN throughput
//! samples into over-admission figures.
//!
//! [`scenario`] is the family's part of the scenario language: the `[pcn]` section, the
//! PCN topologies, the domain's builder and the post-run `pcn.*` summary.
//!
//! Signalling (admission requests and answers, SAR reports) uses a channel with the
//! path's propagation delay (plus the request's transmission time), without queueing, as
//! the study specifies.

/// The mark bits PCN uses (bits 0–2 of [`crate::packet::Packet::marks`]).
pub mod marks {
    /// The packet belongs to PCN-controlled traffic.
    pub const PCN: u16 = 1 << 0;
    /// PCN admission-marked (by a virtual-queue marker).
    pub const PCN_ADMISSION: u16 = 1 << 1;
    /// PCN termination-marked (by a token-bucket termination marker).
    pub const PCN_TERMINATION: u16 = 1 << 2;
    /// Every bit PCN uses.
    pub const ALL: u16 = PCN | PCN_ADMISSION | PCN_TERMINATION;
}

mod accuracy;
mod beatdown;
mod domain;
mod egress;
mod ingress;
mod marking;
pub mod scenario;
pub mod signals;
mod termination;

pub use accuracy::{
    admission_accuracy, optimal_fraction, over_admission_percent, over_termination_percent,
    AdmissionAccuracy,
};
pub use beatdown::{
    expected_termination, optimal_termination, parking_lot_paths, TerminationFractions,
};
pub use domain::{
    equal_delays, hook_mut, parking_lot, rtt_star, rtt_star_egresses, schedule_termination_rates,
    set_termination_rate, single_link, spread_delays, EgressHandle, HookRef, IeaSpec,
    IngressHandle, PcnDomain, PcnHandles, PcnTopology, TopologyIea, DEFAULT_QUEUE_PACKETS,
    FAST_LINK_FACTOR, THROUGHPUT_SAMPLE_INTERVAL,
};
pub use egress::{CleMode, CongestionLevelEstimate, PcnEgress, SarReport};
pub use ingress::{
    call_rate_for_overload, choose_flows_to_terminate, CallArrivals, CallDecision, IngressConfig,
    PcnIngress, Rounding, Signalling, TerminationEvent, BATCH_MEAN_CALLS,
};
pub use marking::{admission_marking_probability, MarkingCurve, VirtualQueueMarker, VqThresholds};
pub use scenario::{PcnFamily, PcnSpec, PCN};
pub use termination::{TerminationMarker, TERMINATION_DEPTH_PACKETS};
