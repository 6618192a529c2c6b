//! The PCN egress: Congestion Level Estimate and sustainable-aggregate-rate measurement
//! per ingress–egress aggregate.

use super::marks;
pub use super::signals::SarReport;
use super::signals::{CleAnswer, CleRequest};
use crate::net::{AgentId, NodeId, Packet, NONE};
use crate::time::{to_secs, Time, PS_PER_MS};
use crate::world::{Agent, Ctx};
use serde_json::{json, Value};

/// How the egress computes the Congestion Level Estimate (CLE) of an aggregate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CleMode {
    /// Per packet: `CLE ← (1−w)·CLE + w·[packet admission-marked]`.
    PerPacket {
        /// EWMA weight.
        w: f64,
    },
    /// Per interval: every `period`, `f` = admission-marked bytes / all bytes of the
    /// aggregate in the interval (no update when nothing arrived);
    /// `CLE ← (1−w)·CLE + w·f`.
    Interval {
        /// EWMA weight.
        w: f64,
        /// Measurement interval.
        period: Time,
    },
}

impl CleMode {
    /// Per-packet mode with the study's weight, w = 0.01.
    pub fn per_packet() -> Self {
        CleMode::PerPacket { w: 0.01 }
    }

    /// Interval mode with weight `w` and the study's interval, 100 ms.
    pub fn interval(w: f64) -> Self {
        CleMode::Interval {
            w,
            period: 100 * PS_PER_MS,
        }
    }
}

impl Default for CleMode {
    fn default() -> Self {
        Self::per_packet()
    }
}

/// The Congestion Level Estimate of one ingress–egress aggregate (starts at 0).
#[derive(Clone, Debug, PartialEq)]
pub struct CongestionLevelEstimate {
    mode: CleMode,
    value: f64,
    bytes: u64,
    marked_bytes: u64,
    updates: u64,
}

impl CongestionLevelEstimate {
    /// A CLE of 0 computed in `mode`.
    pub fn new(mode: CleMode) -> Self {
        CongestionLevelEstimate {
            mode,
            value: 0.0,
            bytes: 0,
            marked_bytes: 0,
            updates: 0,
        }
    }

    /// The current estimate.
    pub fn value(&self) -> f64 {
        self.value
    }

    /// How many EWMA updates were made.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// A PCN packet of `bytes` arrived; `admission_marked` tells whether it carries the
    /// admission mark. Updates the estimate in per-packet mode, accumulates the interval's
    /// bytes in interval mode.
    #[inline]
    pub fn on_packet(&mut self, bytes: u32, admission_marked: bool) {
        match self.mode {
            CleMode::PerPacket { w } => {
                let x = if admission_marked { 1.0 } else { 0.0 };
                self.value = (1.0 - w) * self.value + w * x;
                self.updates += 1;
            }
            CleMode::Interval { .. } => {
                self.bytes += bytes as u64;
                if admission_marked {
                    self.marked_bytes += bytes as u64;
                }
            }
        }
    }

    /// Ends a measurement interval (interval mode; a no-op in per-packet mode): updates the
    /// estimate with the interval's marked fraction unless nothing arrived, and starts the
    /// next interval.
    pub fn end_interval(&mut self) {
        if let CleMode::Interval { w, .. } = self.mode {
            if self.bytes > 0 {
                let f = self.marked_bytes as f64 / self.bytes as f64;
                self.value = (1.0 - w) * self.value + w * f;
                self.updates += 1;
            }
            self.bytes = 0;
            self.marked_bytes = 0;
        }
    }
}

#[derive(Clone, Debug)]
struct EgressIea {
    ingress_node: NodeId,
    ingress_agent: AgentId,
    sar_delay: Time,
    cle: CongestionLevelEstimate,
    terminating: bool,
    sar_bytes: u64,
    pkts: u64,
    admission_marked_pkts: u64,
    termination_marked_pkts: u64,
}

const INTERVAL_TICK: u32 = u32::MAX - 1;

/// The PCN egress node's controller, an [`Agent`] tapping the egress node
/// ([`crate::World::tap`]).
///
/// It keeps, per ingress–egress aggregate (IEA), the Congestion Level Estimate (CLE) and
/// the termination state. An IEA is identified by the ingress node a packet entered at
/// (`pkt.src`); only PCN packets ([`marks::PCN`]) addressed to this node (`pkt.dst`) are
/// counted, so transit traffic crossing the node is ignored.
///
/// Termination: when a termination-marked packet of an IEA arrives and the IEA is not in
/// termination mode, the egress enters it and measures the sustainable aggregate rate
/// (SAR: the rate of the IEA's packets *not* termination-marked) over `sar_period`
/// (100 ms); at the end it leaves the mode and sends the SAR to the IEA's ingress
/// controller, which receives it after the signalling delay registered with
/// [`PcnEgress::add_iea`] (a signalling channel with the path's propagation delay, no
/// queueing). Termination-marked packets arriving while in the mode are ignored.
pub struct PcnEgress {
    node: NodeId,
    mode: CleMode,
    sar_period: Time,
    ieas: Vec<EgressIea>,
    slot_of: Vec<u32>,
    sars: Vec<SarReport>,
}

impl PcnEgress {
    /// The controller of egress node `node`, computing CLEs in `mode`.
    pub fn new(node: NodeId, mode: CleMode) -> Self {
        PcnEgress {
            node,
            mode,
            sar_period: 100 * PS_PER_MS,
            ieas: Vec::new(),
            slot_of: Vec::new(),
            sars: Vec::new(),
        }
    }

    /// Sets the SAR measurement period (default 100 ms).
    pub fn with_sar_period(mut self, period: Time) -> Self {
        assert!(period > 0, "SAR period must be positive");
        self.sar_period = period;
        self
    }

    /// The egress node.
    pub fn node(&self) -> NodeId {
        self.node
    }

    /// The CLE mode.
    pub fn mode(&self) -> CleMode {
        self.mode
    }

    fn slot(&mut self, ingress_node: NodeId) -> usize {
        let i = ingress_node as usize;
        if self.slot_of.len() <= i {
            self.slot_of.resize(i + 1, NONE);
        }
        if self.slot_of[i] == NONE {
            self.slot_of[i] = self.ieas.len() as u32;
            self.ieas.push(EgressIea {
                ingress_node,
                ingress_agent: NONE,
                sar_delay: 0,
                cle: CongestionLevelEstimate::new(self.mode),
                terminating: false,
                sar_bytes: 0,
                pkts: 0,
                admission_marked_pkts: 0,
                termination_marked_pkts: 0,
            });
        }
        self.slot_of[i] as usize
    }

    fn find(&self, ingress_node: NodeId) -> Option<&EgressIea> {
        let s = *self.slot_of.get(ingress_node as usize)?;
        (s != NONE).then(|| &self.ieas[s as usize])
    }

    /// Registers the IEA entering at `ingress_node`: its SAR reports go to the
    /// [`super::PcnIngress`] agent `ingress_agent` and arrive `sar_delay` after they leave.
    /// Packets of unregistered IEAs still get a CLE, but their SARs go nowhere.
    pub fn add_iea(&mut self, ingress_node: NodeId, ingress_agent: AgentId, sar_delay: Time) {
        let s = self.slot(ingress_node);
        self.ieas[s].ingress_agent = ingress_agent;
        self.ieas[s].sar_delay = sar_delay;
    }

    /// The current CLE of the IEA entering at `ingress_node` (0 if nothing of it arrived).
    pub fn cle(&self, ingress_node: NodeId) -> f64 {
        self.find(ingress_node).map_or(0.0, |a| a.cle.value())
    }

    /// The CLE state of the IEA entering at `ingress_node`.
    pub fn estimate(&self, ingress_node: NodeId) -> Option<&CongestionLevelEstimate> {
        self.find(ingress_node).map(|a| &a.cle)
    }

    /// True while the IEA entering at `ingress_node` is in termination mode.
    pub fn in_termination_mode(&self, ingress_node: NodeId) -> bool {
        self.find(ingress_node).is_some_and(|a| a.terminating)
    }

    /// Every SAR report sent so far, in order.
    pub fn sar_reports(&self) -> &[SarReport] {
        &self.sars
    }

    /// Ingress nodes of the IEAs known to this egress, in the order first seen.
    pub fn ingress_nodes(&self) -> Vec<NodeId> {
        self.ieas.iter().map(|a| a.ingress_node).collect()
    }

    /// Accounts one packet arriving at the egress node; returns the IEA slot
    /// that entered termination mode, if this packet made one enter it.
    #[inline]
    fn observe(&mut self, pkt: &Packet) -> Option<usize> {
        if pkt.dst != self.node || !pkt.has(marks::PCN) {
            return None;
        }
        let s = self.slot(pkt.src);
        let a = &mut self.ieas[s];
        a.pkts += 1;
        let adm = pkt.has(marks::PCN_ADMISSION);
        if adm {
            a.admission_marked_pkts += 1;
        }
        a.cle.on_packet(pkt.size, adm);
        if pkt.has(marks::PCN_TERMINATION) {
            a.termination_marked_pkts += 1;
            if !a.terminating {
                a.terminating = true;
                a.sar_bytes = 0;
                return Some(s);
            }
        } else if a.terminating {
            a.sar_bytes += pkt.size as u64;
        }
        None
    }

    fn end_sar_measurement(&mut self, s: usize, ctx: &mut Ctx) {
        let now = ctx.now();
        let a = &mut self.ieas[s];
        if !a.terminating {
            return;
        }
        a.terminating = false;
        let sar_bps = a.sar_bytes as f64 * 8.0 / to_secs(self.sar_period);
        let report = SarReport {
            measured_from: now.saturating_sub(self.sar_period),
            sent: now,
            arrives: now + a.sar_delay,
            ingress_node: a.ingress_node,
            sar_bps,
        };
        self.sars.push(report);
        let agent = a.ingress_agent;
        if agent != NONE {
            ctx.signal(agent, a.sar_delay, report);
        }
    }
}

impl Agent for PcnEgress {
    /// An admission request: answer with the aggregate's CLE now.
    fn on_signal(&mut self, from: AgentId, msg: &dyn std::any::Any, ctx: &mut Ctx) {
        if let Some(r) = crate::world::read_signal::<CleRequest>(msg) {
            let answer = CleAnswer {
                call: r.call,
                requested: r.requested,
                cle: self.cle(r.ingress_node),
            };
            ctx.signal(from, r.reply_after, answer);
        }
    }

    fn start(&mut self, ctx: &mut Ctx) {
        if let CleMode::Interval { period, .. } = self.mode {
            assert!(period > 0, "CLE interval must be positive");
            ctx.timer(period, INTERVAL_TICK);
        }
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        if kind == INTERVAL_TICK {
            for a in self.ieas.iter_mut() {
                a.cle.end_interval();
            }
            if let CleMode::Interval { period, .. } = self.mode {
                ctx.timer(period, INTERVAL_TICK);
            }
        } else if (kind as usize) < self.ieas.len() {
            self.end_sar_measurement(kind as usize, ctx);
        }
    }

    #[inline]
    fn on_tap(&mut self, _node: NodeId, pkt: &Packet, ctx: &mut Ctx) {
        if let Some(s) = self.observe(pkt) {
            ctx.timer(self.sar_period, s as u32);
        }
    }

    /// Totals over the aggregates, and their mean and largest CLE (per-aggregate values
    /// are available through [`PcnEgress::cle`] without bloating the summary when there
    /// are hundreds of aggregates).
    fn report(&self, _now: Time, out: &mut Vec<(String, Value)>) {
        let n = self.ieas.len();
        let sum = |f: fn(&EgressIea) -> u64| self.ieas.iter().map(f).sum::<u64>();
        out.push(("ieas".into(), json!(n)));
        out.push(("pcn_pkts".into(), json!(sum(|a| a.pkts))));
        out.push((
            "admission_marked_pkts".into(),
            json!(sum(|a| a.admission_marked_pkts)),
        ));
        out.push((
            "termination_marked_pkts".into(),
            json!(sum(|a| a.termination_marked_pkts)),
        ));
        out.push(("sar_reports".into(), json!(self.sars.len())));
        if n > 0 {
            let cles = self.ieas.iter().map(|a| a.cle.value());
            out.push((
                "cle_mean".into(),
                json!(cles.clone().sum::<f64>() / n as f64),
            ));
            out.push(("cle_max".into(), json!(cles.fold(0.0, f64::max))));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_packet_ewma_exact() {
        let mut c = CongestionLevelEstimate::new(CleMode::PerPacket { w: 0.25 });
        let seq = [true, true, false, true];
        for &m in &seq {
            c.on_packet(100, m);
        }
        // 0 -> .25 -> .4375 -> .328125 -> .49609375 (all exact in binary).
        assert_eq!(c.value(), 0.49609375);
        assert_eq!(c.updates(), 4);
        c.end_interval();
        assert_eq!(
            c.value(),
            0.49609375,
            "no interval updates in per-packet mode"
        );
    }

    #[test]
    fn interval_ewma_exact_and_skips_empty_intervals() {
        let mut c = CongestionLevelEstimate::new(CleMode::Interval { w: 0.5, period: 1 });
        c.on_packet(300, true);
        c.on_packet(100, false);
        assert_eq!(c.value(), 0.0, "no update before the interval ends");
        c.end_interval(); // f = 3/4 -> 0.375
        assert_eq!(c.value(), 0.375);
        c.end_interval(); // nothing arrived: skipped
        assert_eq!(c.value(), 0.375);
        assert_eq!(c.updates(), 1);
        c.on_packet(200, false);
        c.end_interval(); // f = 0 -> 0.1875
        assert_eq!(c.value(), 0.1875);
    }
}
