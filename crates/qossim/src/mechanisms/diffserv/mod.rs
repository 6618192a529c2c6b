//! DiffServ Assured Service: the per-group and per-connection figures the study reads
//! off a run — drops split into IN early / IN overflow / OUT at RED and RIO ports, IN
//! packets seen and demoted by each policer, IN packets sent by host profiles.
//!
//! The family reads no section of its own: its models are the language's core pieces
//! (RED and RIO queues in `queue`, token-bucket and TSW profilers and policers in
//! `meter`, host profiles on `[[traffic]]` entries). A scenario that uses any of them
//! (a RED or RIO queue, a meter on a link or a host profile) gets the family's summary
//! keys; every other summary stays exactly that of the world.

use crate::net::{marks, LinkId, Packet};
use crate::queue::{DropCause, DropObserver};
use crate::scenario::walk::{Cx, Tbl};
use crate::scenario::{
    BuiltCore, Core, Family, Mechanism, MechanismRun, QueueSpec, Scenario, Topology,
};
use crate::transport::TcpRenoSender;
use crate::world::World;
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// Per-flow drop counters, split the way the Assured Service study reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowDrops {
    /// IN packets dropped early.
    pub in_early: u64,
    /// IN packets dropped by overflow (or pushed out).
    pub in_overflow: u64,
    /// OUT (and unprofiled) packets dropped, any cause.
    pub out: u64,
}

/// A port's drops split per flow into IN early / IN overflow / OUT, counted after the
/// warm-up: the family's observer on every RED and RIO port.
#[derive(Clone, Debug, Default)]
pub struct InOutDrops {
    /// Counters indexed by flow id.
    pub by_flow: Vec<FlowDrops>,
}

/// The observer a port holds; the family keeps the other handle to read it after the run.
struct InOutObserver(Rc<RefCell<InOutDrops>>);

impl DropObserver for InOutObserver {
    fn on_drop(&mut self, pkt: &Packet, cause: DropCause) {
        let mut d = self.0.borrow_mut();
        let f = pkt.flow as usize;
        if d.by_flow.len() <= f {
            d.by_flow.resize(f + 1, FlowDrops::default());
        }
        let c = &mut d.by_flow[f];
        match (pkt.has(marks::IN_PROFILE), cause) {
            (true, DropCause::Early) => c.in_early += 1,
            (true, DropCause::Overflow) | (true, DropCause::PushedOut) => c.in_overflow += 1,
            _ => c.out += 1,
        }
    }
    fn on_warmup(&mut self) {
        self.0.borrow_mut().by_flow.clear();
    }
}

/// The DiffServ family of the scenario language.
pub struct DiffServFamily;

/// The registered instance.
pub static DIFFSERV: DiffServFamily = DiffServFamily;

/// What a scenario uses of DiffServ: the links whose drops are split per flow.
#[derive(Clone, Debug)]
pub struct DiffServSpec {
    /// RED and RIO links (indices into the topology): their drops are kept per flow.
    pub tracked: Vec<usize>,
}

fn red_family_links(topo: &Topology) -> Vec<usize> {
    topo.links
        .iter()
        .enumerate()
        .filter(|(_, l)| matches!(l.queue, QueueSpec::Red(_) | QueueSpec::Rio(_)))
        .map(|(i, _)| i)
        .collect()
}

impl Family for DiffServFamily {
    fn name(&self) -> &'static str {
        "diffserv"
    }
    fn read(&self, _cx: &Cx, _root: &Tbl, core: &Core) -> Option<Option<Arc<dyn Mechanism>>> {
        let tracked = red_family_links(core.topology);
        let used = !tracked.is_empty()
            || core.traffic.iter().any(|t| t.profile.is_some())
            || core.topology.links.iter().any(|l| !l.meters.is_empty());
        Some(used.then(|| Arc::new(DiffServSpec { tracked }) as Arc<dyn Mechanism>))
    }
}

impl Mechanism for DiffServSpec {
    fn family(&self) -> &'static str {
        "diffserv"
    }
    fn build(
        &self,
        _sc: &Scenario,
        w: &mut World,
        core: &BuiltCore,
    ) -> Result<Box<dyn MechanismRun>, String> {
        let mut tracked = Vec::with_capacity(self.tracked.len());
        for &l in &self.tracked {
            let counts = Rc::new(RefCell::new(InOutDrops::default()));
            w.net.links[l]
                .stats
                .drops
                .observe(Box::new(InOutObserver(counts.clone())));
            tracked.push((l as LinkId, counts));
        }
        Ok(Box::new(DiffServRun {
            tracked,
            core: core.clone(),
        }))
    }
}

/// A DiffServ scenario built into a world.
struct DiffServRun {
    /// RED and RIO links with their IN/OUT drop counts.
    tracked: Vec<(LinkId, Rc<RefCell<InOutDrops>>)>,
    core: BuiltCore,
}

impl MechanismRun for DiffServRun {
    fn finish(&mut self, sc: &Scenario, w: &mut World, m: &mut Map<String, Value>) {
        diffserv_summary(sc, w, &self.tracked, &self.core, m);
    }
}

fn pct(part: u64, whole: u64) -> Value {
    if whole == 0 {
        Value::Null
    } else {
        json!(100.0 * part as f64 / whole as f64)
    }
}

/// Adds the per-group (and per-connection) DiffServ figures, all counted after the
/// warm-up.
fn diffserv_summary(
    sc: &Scenario,
    w: &mut World,
    tracked: &[(LinkId, Rc<RefCell<InOutDrops>>)],
    core: &BuiltCore,
    m: &mut Map<String, Value>,
) {
    let nflows = w.flows.recs.len();
    let ngroups = w.flows.groups.len();
    let group_of =
        |f: usize| -> Option<usize> { (f < nflows).then(|| w.flows.recs[f].group as usize) };
    let names: Vec<String> = w.flows.groups.iter().map(|g| g.name.clone()).collect();
    let mut flow_drops = vec![FlowDrops::default(); nflows];
    let mut flow_demoted = vec![0u64; nflows];
    let mut group_drops = vec![FlowDrops::default(); ngroups];
    let mut group_demoted = vec![0u64; ngroups];
    let mut group_in_sent: Vec<Option<u64>> = vec![None; ngroups];
    for (ti, t) in sc.traffic.iter().enumerate() {
        if t.profile.is_some() {
            group_in_sent[ti] = Some(0);
        }
    }
    for g in &w.flows.groups {
        m.insert(
            format!("group.{}.sent_pkts_measured", g.name),
            json!(g.sent_pkts_measured),
        );
    }
    for (l, counts) in tracked {
        let link = &w.net.links[*l as usize];
        let mut per_group = vec![FlowDrops::default(); ngroups];
        for (f, d) in counts.borrow().by_flow.iter().enumerate() {
            let Some(g) = group_of(f) else { continue };
            flow_drops[f].in_early += d.in_early;
            flow_drops[f].in_overflow += d.in_overflow;
            flow_drops[f].out += d.out;
            per_group[g].in_early += d.in_early;
            per_group[g].in_overflow += d.in_overflow;
            per_group[g].out += d.out;
        }
        for (g, d) in per_group.iter().enumerate() {
            let p = format!("link.{}.group.{}.", link.name, names[g]);
            m.insert(p.clone() + "in_early", json!(d.in_early));
            m.insert(p.clone() + "in_overflow", json!(d.in_overflow));
            m.insert(p + "out", json!(d.out));
            group_drops[g].in_early += d.in_early;
            group_drops[g].in_overflow += d.in_overflow;
            group_drops[g].out += d.out;
        }
    }
    for &h in &core.policers {
        let lname = w.net.links[h.link() as usize].name.clone();
        let p = w.net.hook_mut(h);
        let mut seen = vec![0u64; ngroups];
        let mut demoted = vec![0u64; ngroups];
        for (f, c) in p.by_flow().iter().enumerate() {
            let Some(g) = group_of(f) else { continue };
            seen[g] += c.in_seen;
            demoted[g] += c.demoted;
            flow_demoted[f] += c.demoted;
        }
        for g in 0..ngroups {
            let k = format!("link.{lname}.group.{}.", names[g]);
            m.insert(k.clone() + "policed_in", json!(seen[g]));
            m.insert(k + "demoted", json!(demoted[g]));
            group_demoted[g] += demoted[g];
        }
    }
    for &h in &core.profilers {
        let p = w.net.hook_mut(h);
        if let Some(g) = w.flows.group_id(p.label()) {
            let slot = group_in_sent[g as usize].get_or_insert(0);
            *slot += p.in_pkts;
        }
    }
    for c in &core.connections {
        let name = format!("tcp.{}.{}", sc.traffic[c.traffic].name, c.index);
        let Some(s) = w.agents.get_mut::<TcpRenoSender>(c.sender) else {
            continue;
        };
        let st = s.stats();
        let g = c.traffic;
        if let Some(slot) = group_in_sent[g].as_mut() {
            *slot += st.in_measured;
        }
        let f = c.flow as usize;
        let p = format!("agent.{name}.");
        let d = flow_drops[f];
        m.insert(p.clone() + "drops_in_early", json!(d.in_early));
        m.insert(p.clone() + "drops_in_overflow", json!(d.in_overflow));
        m.insert(p.clone() + "drops_out", json!(d.out));
        m.insert(p.clone() + "demoted_pkts", json!(flow_demoted[f]));
        if sc.traffic[g].profile.is_some() {
            m.insert(
                p.clone() + "in_demoted_pct",
                pct(flow_demoted[f], st.in_measured),
            );
        }
    }
    for g in 0..ngroups {
        let p = format!("group.{}.", names[g]);
        let d = group_drops[g];
        m.insert(p.clone() + "drops_in_early", json!(d.in_early));
        m.insert(p.clone() + "drops_in_overflow", json!(d.in_overflow));
        m.insert(p.clone() + "drops_out", json!(d.out));
        m.insert(p.clone() + "demoted_pkts", json!(group_demoted[g]));
        if let Some(sent) = group_in_sent[g] {
            m.insert(p.clone() + "in_sent_pkts", json!(sent));
            m.insert(p + "in_demoted_pct", pct(group_demoted[g], sent));
        }
    }
}

use crate::metrics::declared::{stat, Stat, Window::*};

/// The DiffServ family's statistics (on scenarios with a RED or RIO queue or a profile).
/// Drops of RED and RIO ports split by the packet's colour: `in_early` (random or forced
/// early drops of IN packets), `in_overflow`, and `out` (every drop of an OUT packet).
pub const STATS: &[Stat] = &[
    stat(
        "group.{traffic}.sent_pkts_measured",
        "packets",
        AfterWarmup,
        "packets sent (the same as sent_pkts_after_warmup)",
    ),
    stat(
        "group.{traffic}.{drops_in_early|drops_in_overflow|drops_out}",
        "packets",
        AfterWarmup,
        "drops of the entry's packets at RED/RIO ports, by colour and cause",
    ),
    stat(
        "group.{traffic}.demoted_pkts",
        "packets",
        AfterWarmup,
        "IN packets a policer demoted to OUT",
    ),
    stat(
        "group.{traffic}.in_sent_pkts",
        "packets",
        AfterWarmup,
        "packets sent IN (marked by the entry's profile)",
    ),
    stat(
        "group.{traffic}.in_demoted_pct",
        "%",
        AfterWarmup,
        "demoted over IN packets sent",
    ),
    stat(
        "link.{link}.group.{traffic}.{in_early|in_overflow|out}",
        "packets",
        AfterWarmup,
        "the entry's drops at this RED/RIO port, by colour and cause",
    ),
    stat(
        "link.{link}.group.{traffic}.{policed_in|demoted}",
        "packets",
        AfterWarmup,
        "the entry's IN packets a policer saw and demoted",
    ),
    stat(
        "agent.tcp.{traffic}.{k}.{drops_in_early|drops_in_overflow|drops_out|demoted_pkts}",
        "packets",
        AfterWarmup,
        "one connection's drops by colour and cause; its demoted packets",
    ),
    stat(
        "agent.tcp.{traffic}.{k}.in_demoted_pct",
        "%",
        AfterWarmup,
        "one connection's demoted over IN packets sent",
    ),
];
