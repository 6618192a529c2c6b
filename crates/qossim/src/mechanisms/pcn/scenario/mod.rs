//! The PCN family's part of the scenario language ([`PcnFamily`]): the `[pcn]` section (a
//! Pre-Congestion Notification domain over the scenario's network) and the PCN study's
//! own topologies (`[topology] kind = "pcn_single" | "pcn_rtt" | "pcn_parking_lot"`).
//!
//! The domain is assembled with [`PcnDomain`] exactly as a program would assemble it by
//! hand, so a scenario and a hand-built world with the same seed run identically. After
//! the run, the family's analysis adds the study's figures to the summary under `pcn.*` (per
//! bottleneck: admitted rate, over-admission, SD/Ra, and the termination figures; per
//! aggregate: calls and termination) and derives the short/long bandwidth-ratio series
//! of parking lots. `docs/scenarios.md` documents every key; each key of `[pcn]` and of its
//! tables is declared once in [`super::params`] and read through that declaration.

use super::{
    admission_accuracy, call_rate_for_overload, expected_termination, optimal_fraction,
    over_termination_percent, parking_lot, rtt_star_egresses, schedule_termination_rates,
    single_link, spread_delays, CallArrivals, CleMode, IeaSpec, IngressConfig, MarkingCurve,
    PcnDomain, PcnHandles, PcnIngress, Rounding, VqThresholds, DEFAULT_QUEUE_PACKETS,
};
use crate::metrics::{Probe, Series};
use crate::net::{LinkId, NodeId};
use crate::scenario::units::{self, QueueLimit};
use crate::scenario::walk::{Cx, Tbl};
use crate::scenario::{
    apply_link_overrides, check_reachable, read_model, read_queue, BuiltCore, Core, Family,
    LinkSpec, Mechanism, MechanismRun, QueueSpec, Scenario, Topology, TrafficModel, TrafficSpec,
};
use crate::time::{to_secs, Time, PS_PER_MS};
use crate::traffic::{ActiveCall, FlowGenerator, Holding, SourceModel};
use crate::world::{Agent, World};
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

mod aggregates;
mod analysis;
mod builder;
mod reader;

use aggregates::*;
use analysis::*;
use builder::*;
pub use reader::*;

/// The PCN family of the scenario language: the `[pcn]` section and the topologies
/// `pcn_single`, `pcn_rtt` and `pcn_parking_lot`.
pub struct PcnFamily;

/// The registered instance.
pub static PCN: PcnFamily = PcnFamily;

impl Family for PcnFamily {
    fn name(&self) -> &'static str {
        "pcn"
    }
    fn sections(&self) -> &'static [&'static str] {
        &["pcn"]
    }
    fn declared(&self) -> &'static [&'static crate::decl::Section] {
        super::params::DECLARED
    }
    fn topology_kinds(&self) -> &'static [&'static str] {
        &["pcn_single", "pcn_rtt", "pcn_parking_lot"]
    }
    fn topology_declared(&self) -> &'static [&'static crate::decl::Section] {
        super::params::TOPOLOGIES
    }
    fn mark_bits(&self) -> u16 {
        super::marks::ALL
    }
    fn marks(&self) -> &'static [(&'static str, u16)] {
        &[
            ("pcn", super::marks::PCN),
            (
                "pcn_admission",
                super::marks::PCN | super::marks::PCN_ADMISSION,
            ),
            (
                "pcn_termination",
                super::marks::PCN | super::marks::PCN_TERMINATION,
            ),
        ]
    }
    fn read_topology(&self, cx: &Cx, t: &Tbl, root: &Tbl) -> Option<Topology> {
        read_topology(cx, t, root)
    }
    fn read(&self, cx: &Cx, root: &Tbl, core: &Core) -> Option<Option<Arc<dyn Mechanism>>> {
        let duration = core.run.map(|r| r.duration);
        let spec = read(
            cx,
            root,
            core.topology,
            core.traffic,
            core.base_dir,
            duration,
        )?;
        Some(spec.map(|s| Arc::new(s) as Arc<dyn Mechanism>))
    }
}

impl Mechanism for PcnSpec {
    fn family(&self) -> &'static str {
        "pcn"
    }
    fn build(
        &self,
        sc: &Scenario,
        w: &mut World,
        _core: &BuiltCore,
    ) -> Result<Box<dyn MechanismRun>, String> {
        Ok(Box::new(build(self, sc, w)?))
    }
}
