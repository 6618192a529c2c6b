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
pub mod params;
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
    equal_delays, parking_lot, rtt_star, rtt_star_egresses, schedule_termination_rates,
    set_termination_rate, single_link, spread_delays, EgressHandle, IeaSpec, IngressHandle,
    PcnDomain, PcnHandles, PcnTopology, TopologyIea, DEFAULT_QUEUE_PACKETS, FAST_LINK_FACTOR,
    THROUGHPUT_SAMPLE_INTERVAL,
};
pub use egress::{CleMode, CongestionLevelEstimate, PcnEgress, SarReport};
pub use ingress::{
    call_rate_for_overload, choose_flows_to_terminate, CallArrivals, CallDecision, IngressConfig,
    PcnIngress, Rounding, Signalling, TerminationEvent, BATCH_MEAN_CALLS,
};
pub use marking::{admission_marking_probability, MarkingCurve, VirtualQueueMarker, VqThresholds};
pub use scenario::{PcnFamily, PcnSpec, PCN};
pub use termination::{TerminationMarker, TERMINATION_DEPTH_PACKETS};

use crate::metrics::declared::{stat, Stat, Window::*};

/// The PCN family's statistics (the `pcn.*` summary, its series, and the keys of its
/// markers and agents). Call figures count after the warm-up; termination figures cover
/// the failure experiment.
pub const STATS: &[Stat] = &[
    stat("pcn.ieas", "aggregates", Run, "ingress-egress aggregates in the domain"),
    stat("pcn.{offered|admitted|blocked}", "calls", AfterWarmup, "calls offered, admitted and blocked over all aggregates"),
    stat("pcn.blocking", "fraction", AfterWarmup, "blocked calls over offered calls"),
    stat("pcn.active_mean", "flows", AfterWarmup, "time-average of the admitted flows, summed over aggregates"),
    stat("pcn.short_long_ratio", "fraction", AfterWarmup, "short over long aggregates' rate: the series of that name, and in the summary its mean after the warm-up"),
    stat("pcn.t_fail_s", "s", Run, "when the failure happened"),
    stat("pcn.{load_flows|terminated_flows}", "flows", Run, "flows carried at the failure, and terminated after it"),
    stat("pcn.load_bps", "b/s", Run, "rate carried at the failure"),
    stat("pcn.actual", "fraction", Run, "terminated rate over the rate at the failure"),
    stat("pcn.{first|last}_termination_s", "s", Run, "first and last termination after the failure"),
    stat("pcn.termination_rounds", "rounds", Run, "termination rounds over all aggregates"),
    stat("pcn.bottleneck.{link}.{link_bps|ra_bps|rt_bps}", "b/s", Run, "the bottleneck's rate, admissible rate and termination rate"),
    stat("pcn.bottleneck.{link}.mean_bps", "b/s", AfterWarmup, "mean PCN-traffic rate on the bottleneck"),
    stat("pcn.bottleneck.{link}.samples", "samples", AfterWarmup, "rate samples of the admission accuracy"),
    stat("pcn.bottleneck.{link}.over_admission_pct", "%", AfterWarmup, "mean rate above the admissible rate, percent of it"),
    stat("pcn.bottleneck.{link}.sd_over_ra", "fraction", AfterWarmup, "standard deviation of the rate over the admissible rate"),
    stat("pcn.bottleneck.{link}.threshold_flows", "flows", Run, "flows the termination rate carries at the failure's mean flow rate"),
    stat("pcn.{bottleneck|iea}.{name}.{load_flows|terminated_flows}", "flows", Run, "flows at the failure, and terminated"),
    stat("pcn.{bottleneck|iea}.{name}.{load_bps|terminated_bps}", "b/s", Run, "rate at the failure, and terminated"),
    stat("pcn.{bottleneck|iea}.{name}.{actual|actual_flows|optimal|expected}", "fraction", Run, "terminated fraction (of the rate; of the flows), the optimal and the expected one"),
    stat("pcn.{bottleneck|iea}.{name}.over_termination_pct", "%", Run, "terminated above the optimal, percent of the optimal"),
    stat("pcn.{bottleneck|iea}.{name}.{a_minus_o_pts|a_minus_e_pts}", "percentage points", Run, "actual minus optimal (expected) termination"),
    stat("pcn.iea.{iea}.{first|last}_termination_s", "s", Run, "first and last termination of the aggregate"),
    stat("pcn.iea.{iea}.termination_rounds", "rounds", Run, "termination rounds of the aggregate"),
    stat("pcn.iea.{iea}.rtt_s", "s", Run, "the aggregate's round-trip time"),
    stat("pcn.iea.{iea}.{offered_calls|blocked_calls|admitted|offered|blocked}", "calls", AfterWarmup, "the aggregate's calls"),
    stat("pcn.iea.{iea}.{blocking|cle}", "fraction", AfterWarmup, "the aggregate's blocking; its congestion level estimate"),
    stat("pcn.iea.{iea}.{active_mean|terminated_flows}", "flows", AfterWarmup, "the aggregate's mean admitted flows; flows it terminated"),
    stat("pcn.iea.{iea}.{x}", "as the agent key", Run, "an aggregate's agent keys, moved under its name"),
    stat("pcn.{iea}.throughput", "b/s", Run, "series: PCN rate of an aggregate on its bottleneck"),
    stat("pcn.{iea}.{active|terminated}", "flows", Run, "series: admitted flows; flows terminated"),
    stat("pcn.{iea}.{round_sar|round_sending}", "b/s", Run, "series per termination round: the sustainable rate reported; the rate sent"),
    stat("link.{link}.{pcn_vq|pcn_tb}.pcn_pkts", "packets", Run, "admission or termination marker: PCN packets seen"),
    stat("link.{link}.pcn_vq.admission_marked_pkts", "packets", Run, "admission marker: packets marked"),
    stat("link.{link}.pcn_vq.admission_marked_fraction", "fraction", Run, "admission marker: marked over seen"),
    stat("link.{link}.pcn_tb.{termination_marked_pkts|bypassed_pkts}", "packets", Run, "termination marker: packets marked; packets passing unmarked as already marked"),
    stat("agent.pcn.egress.{egress}.{pcn_pkts|admission_marked_pkts|termination_marked_pkts}", "packets", Run, "egress: PCN packets received, admission- and termination-marked"),
    stat("agent.pcn.egress.{egress}.{cle_mean|cle_max}", "fraction", Run, "egress: mean and largest congestion level estimate"),
    stat("agent.pcn.egress.{egress}.{ieas|sar_reports}", "count", Run, "egress: aggregates; sustainable-rate reports sent"),
    stat("agent.{iea}.{sar_received|sar_stale|termination_rounds}", "count", Run, "ingress: reports received, stale reports, termination rounds"),
    stat("agent.{iea}.terminated_flows", "flows", Run, "ingress: flows terminated"),
];
