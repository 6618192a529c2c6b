//! The ABR family's part of the scenario language ([`AbrFamily`]): the `[abr]` section
//! (ERICA, consolidation and source parameters) with its `[[abr.vc]]` connections, the
//! builder that puts a switch on every node that is not an end system and the
//! connections' trees through them, and the post-run `abr.*` summary.

use super::erica::{EricaParams, EricaPlus};
use super::params::{vc_keys, SECTION, VC};
use super::source::{AbrDestination, AbrSource, Client, Hop, SourceKind, SourceParams};
use super::switch::{AbrSwitch, Consolidation, QueueMax, VcAtSwitch};
use crate::decl::{Param, Value as DeclValue, Values};
use crate::packet::{AgentId, LinkId, NONE};
use crate::queue::Priority;
use crate::scenario::walk::{Cx, Tbl};
use crate::scenario::{self, BuiltCore, Core, Family, Mechanism, MechanismRun, Scenario};
use crate::time::{millis, to_secs, Time};
use crate::world::{AgentHandle, World};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The ABR family of the scenario language.
pub struct AbrFamily;

/// The registered instance.
pub static ABR: AbrFamily = AbrFamily;

/// One virtual connection of a scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct VcSpec {
    /// Name (series `abr.acr.NAME`, summary `abr.vc.NAME.*`).
    pub name: String,
    /// Source node index.
    pub source: usize,
    /// Destination node indices (one: unicast; more: point-to-multipoint).
    pub destinations: Vec<usize>,
    /// What the source sends.
    pub kind: SourceKind,
    /// When it starts sending.
    pub start: Time,
    /// When it stops (`Time::MAX`: never).
    pub stop: Time,
    /// Its TM 4.0 parameters.
    pub params: SourceParams,
}

/// What a scenario asks of the ABR network.
#[derive(Clone, Debug, PartialEq)]
pub struct AbrSpec {
    /// ERICA's parameters at every switch port.
    pub erica: EricaParams,
    /// How branch points consolidate feedback.
    pub consolidation: Consolidation,
    /// The connections.
    pub vcs: Vec<VcSpec>,
    /// Interval of the ACR, queue, utilization and cells-received series.
    pub sample: Time,
}

/// Reads the declared key `key` of `[abr]` into `slot`.
fn key_into<T>(
    cx: &Cx,
    t: &Tbl,
    key: &str,
    slot: &mut T,
    conv: impl FnOnce(&crate::decl::Value) -> T,
) -> bool {
    scenario::key_into(cx, t, &SECTION, key, slot, conv)
}

/// Reads the source parameters of `[abr]` over `p` (the defaults).
fn read_params(cx: &Cx, t: &Tbl, p: &mut SourceParams) -> bool {
    use crate::decl::Value;
    let mut ok = key_into(cx, t, "icr", &mut p.icr, Value::as_f64);
    ok &= key_into(cx, t, "rif", &mut p.rif, Value::as_f64);
    ok &= key_into(cx, t, "rdf", &mut p.rdf, Value::as_f64);
    ok &= key_into(cx, t, "pcr", &mut p.pcr, Value::as_f64);
    ok &= key_into(cx, t, "mcr", &mut p.mcr, Value::as_f64);
    ok &= key_into(cx, t, "trm", &mut p.trm, Value::as_time);
    ok &= key_into(cx, t, "adtf", &mut p.adtf, Value::as_time);
    ok &= key_into(cx, t, "nrm", &mut p.nrm, |v| v.as_u64() as u32);
    ok
}

/// The source parameters a connection gives (its read values `v`) over `p` (the
/// section's).
fn vc_params(v: &Values, p: &mut SourceParams) {
    let set = |key: &str, slot: &mut f64| {
        if let Some(x) = v.get(key) {
            *slot = x.as_f64();
        }
    };
    set("icr", &mut p.icr);
    set("rif", &mut p.rif);
    set("rdf", &mut p.rdf);
    set("pcr", &mut p.pcr);
    set("mcr", &mut p.mcr);
    if let Some(x) = v.get("trm") {
        p.trm = x.as_time();
    }
    if let Some(x) = v.get("adtf") {
        p.adtf = x.as_time();
    }
    if let Some(x) = v.get("nrm") {
        p.nrm = x.as_u64() as u32;
    }
}

fn node_of(
    cx: &Cx,
    t: &Tbl,
    key: &str,
    name: &str,
    core: &Core,
    line: Option<usize>,
) -> Option<usize> {
    let i = core.topology.node(name);
    if i.is_none() {
        let msg = format!(
            "unknown node {name:?}; nodes are: {}",
            core.topology.nodes.join(", ")
        );
        match line {
            Some(l) => cx.error(l, &t.key_path(key), msg),
            None => t.error(cx, key, msg),
        }
    }
    i
}

fn read_vc(cx: &Cx, t: &Tbl, core: &Core, base: &SourceParams) -> Option<VcSpec> {
    // The type first: it decides which keys the entry may have.
    let ty = match scenario::read_key(cx, t, &VC, "type") {
        Some(v) => v.map_or_else(|| "infinite".to_string(), |v| v.as_str().to_string()),
        None => {
            t.skip_rest();
            return None;
        }
    };
    let keys = vc_keys(&ty);
    let params: Vec<Param> = VC
        .params
        .iter()
        .filter(|p| keys.contains(&p.key))
        .copied()
        .collect();
    let v = scenario::read_params(cx, t, VC.title, &params);
    t.finish(cx, &keys);
    let v = v?;
    let mut ok = true;
    let source = node_of(cx, t, "source", v.text("source"), core, None);
    let items = scenario::read_names(cx, t, &VC, "destinations")?.expect("a required key");
    if items.is_empty() {
        t.error(cx, "destinations", "give at least one destination node");
        ok = false;
    }
    let mut destinations = Vec::new();
    for (n, line) in &items {
        match node_of(cx, t, "destinations", n, core, Some(*line)) {
            Some(i) if destinations.contains(&i) => {
                cx.error(
                    *line,
                    &t.key_path("destinations"),
                    format!("{n:?} is listed twice"),
                );
                ok = false;
            }
            Some(i) => destinations.push(i),
            None => ok = false,
        }
    }
    let mut params = *base;
    vc_params(&v, &mut params);
    let start = v.time("start");
    let stop = v.get("stop").map_or(Time::MAX, DeclValue::as_time);
    if ok && stop <= start {
        t.error(cx, "stop", "must come after start");
        ok = false;
    }
    let kind = match ty.as_str() {
        "bursty" => SourceKind::Bursty {
            response_cells: v.count("response_cells") as u32,
            request_cells: v.count("request_cells") as u32,
        },
        "vbr" => SourceKind::Vbr {
            rate: v.count("rate") as f64,
            on: v.time("on"),
            off: v.time("off"),
            offset: v.time("offset"),
        },
        _ => SourceKind::Infinite,
    };
    if ok && matches!(kind, SourceKind::Vbr { .. }) && destinations.len() > 1 {
        t.error(
            cx,
            "destinations",
            "a VBR connection is unicast (one destination)",
        );
        ok = false;
    }
    if let (Some(s), true) = (source, ok) {
        if destinations.contains(&s) {
            t.error(
                cx,
                "destinations",
                "a connection cannot end where it starts",
            );
            ok = false;
        }
    }
    if !ok {
        return None;
    }
    Some(VcSpec {
        name: v.text("name").to_string(),
        source: source?,
        destinations,
        kind,
        start,
        stop,
        params,
    })
}

fn read_table(cx: &Cx, t: &Tbl, core: &Core) -> Option<AbrSpec> {
    use crate::decl::Value;
    let mut ok = true;
    let mut network = "lan".to_string();
    ok &= key_into(cx, t, "network", &mut network, |v| v.as_str().to_string());
    let wan = network == "wan";
    let mut erica = if wan {
        EricaParams::wan()
    } else {
        EricaParams::lan()
    };
    ok &= key_into(
        cx,
        t,
        "target_utilization",
        &mut erica.target,
        Value::as_f64,
    );
    ok &= key_into(
        cx,
        t,
        "averaging_time",
        &mut erica.max_interval,
        Value::as_time,
    );
    ok &= key_into(cx, t, "averaging_cells", &mut erica.cells, |v| {
        v.as_u64() as u32
    });
    ok &= key_into(cx, t, "delta", &mut erica.delta, Value::as_f64);
    let mut algorithm = "erica".to_string();
    ok &= key_into(cx, t, "algorithm", &mut algorithm, |v| {
        v.as_str().to_string()
    });
    if algorithm == "erica_plus" {
        erica.plus = Some(if wan {
            EricaPlus::wan()
        } else {
            EricaPlus::lan()
        });
    }
    match erica.plus.as_mut() {
        Some(q) => {
            if t.has("target_utilization") {
                t.error(
                    cx,
                    "target_utilization",
                    "ERICA+ targets the whole link and sets the fraction from its queue; \
                     give target_delay instead",
                );
                ok = false;
            }
            ok &= key_into(cx, t, "target_delay", &mut q.target_delay, Value::as_time);
            ok &= key_into(cx, t, "queue_drain_limit", &mut q.qdlf, Value::as_f64);
            ok &= key_into(cx, t, "curve_a", &mut q.a, Value::as_f64);
            ok &= key_into(cx, t, "curve_b", &mut q.b, Value::as_f64);
        }
        None => {
            for k in ["target_delay", "queue_drain_limit", "curve_a", "curve_b"] {
                if t.has(k) {
                    t.error(
                        cx,
                        k,
                        "only ERICA+ has a queue term: set algorithm = \"erica_plus\"",
                    );
                    ok = false;
                }
            }
        }
    }
    let mut timeout = millis(10.0);
    ok &= key_into(cx, t, "branch_timeout", &mut timeout, Value::as_time);
    let mut consolidation = "turnaround".to_string();
    ok &= key_into(cx, t, "consolidation", &mut consolidation, |v| {
        v.as_str().to_string()
    });
    let consolidation = match consolidation.as_str() {
        "flag" => Consolidation::Flag,
        "all_branches" => Consolidation::AllBranches { timeout },
        "pass_through" => Consolidation::PassThrough,
        _ => Consolidation::Turnaround,
    };
    // The default peak rate is the fastest link's.
    let link_rate = core
        .topology
        .links
        .iter()
        .map(|l| l.rate)
        .max()
        .unwrap_or(155_520_000) as f64;
    let mut params = SourceParams::defaults(link_rate);
    ok &= read_params(cx, t, &mut params);
    if ok && params.icr > params.pcr {
        t.error(cx, "icr", "must not exceed pcr");
        ok = false;
    }
    let mut sample = millis(0.1);
    ok &= key_into(cx, t, "sample", &mut sample, Value::as_time);
    let mut vcs = Vec::new();
    for v in t.tables(cx, "vc") {
        match read_vc(cx, &v, core, &params) {
            Some(s) => {
                if vcs.iter().any(|o: &VcSpec| o.name == s.name) {
                    v.error(cx, "name", format!("two connections named {:?}", s.name));
                    ok = false;
                } else {
                    vcs.push(s);
                }
            }
            None => ok = false,
        }
    }
    if ok && vcs.is_empty() {
        t.error(cx, "vc", "give at least one [[abr.vc]] connection");
        ok = false;
    }
    if vcs.len() > u16::MAX as usize {
        t.error(cx, "vc", "at most 65535 connections");
        ok = false;
    }
    let mut keys = SECTION.keys();
    keys.push("vc");
    t.finish(cx, &keys);
    ok.then_some(AbrSpec {
        erica,
        consolidation,
        vcs,
        sample,
    })
}

impl Family for AbrFamily {
    fn name(&self) -> &'static str {
        "abr"
    }
    fn sections(&self) -> &'static [&'static str] {
        &["abr"]
    }
    fn declared(&self) -> &'static [&'static crate::decl::Section] {
        super::params::DECLARED
    }
    fn read(&self, cx: &Cx, root: &Tbl, core: &Core) -> Option<Option<Arc<dyn Mechanism>>> {
        scenario::read_section(cx, root, "abr", |t| read_table(cx, t, core))
    }
}

/// A connection's tree in a built network.
struct Tree {
    /// Per node: the tree link into it (NONE: not in the tree, or the source).
    parent: Vec<LinkId>,
    /// Per node: the tree links out of it.
    children: Vec<Vec<LinkId>>,
}

fn tree(w: &mut World, vc: &VcSpec, names: &[String]) -> Result<Tree, String> {
    let n = names.len();
    let mut parent = vec![NONE; n];
    let mut children: Vec<Vec<LinkId>> = vec![Vec::new(); n];
    for &d in &vc.destinations {
        let path = w.net.path(vc.source as u32, d as u32)?;
        for l in path {
            let (from, to) = {
                let k = &w.net.links[l as usize];
                (k.from as usize, k.to as usize)
            };
            if parent[to] != NONE && parent[to] != l {
                return Err(format!(
                    "connection {:?}: the paths to its destinations reach {} over two links; its routes must form a tree",
                    vc.name, names[to]
                ));
            }
            parent[to] = l;
            if !children[from].contains(&l) {
                children[from].push(l);
            }
        }
    }
    Ok(Tree { parent, children })
}

impl Mechanism for AbrSpec {
    fn family(&self) -> &'static str {
        "abr"
    }
    fn build(
        &self,
        sc: &Scenario,
        w: &mut World,
        _core: &BuiltCore,
    ) -> Result<Box<dyn MechanismRun>, String> {
        let names: Vec<String> = sc.topology.nodes.clone();
        let n = names.len();
        let warmup = sc.run.warmup;
        // End systems: every source and destination node; every other node switches.
        let mut host = vec![false; n];
        for v in &self.vcs {
            host[v.source] = true;
            for &d in &v.destinations {
                host[d] = true;
            }
        }
        // Output-queued ports: VBR over ABR, unbounded.
        for l in 0..w.net.links.len() {
            w.net.links[l].qdisc = Box::new(Priority::new(2, usize::MAX, false, None));
            w.net.refresh_fast_path(l as LinkId);
        }
        let trees: Vec<Tree> = self
            .vcs
            .iter()
            .map(|v| tree(w, v, &names))
            .collect::<Result<_, _>>()?;
        for (v, t) in self.vcs.iter().zip(&trees) {
            for (node, kids) in t.children.iter().enumerate() {
                if node != v.source && !kids.is_empty() && host[node] {
                    return Err(format!(
                        "connection {:?} passes through {}, an end system; end systems must be leaves of every tree",
                        v.name, names[node]
                    ));
                }
            }
            if t.children[v.source].len() != 1 {
                return Err(format!(
                    "connection {:?}: its source {} must have one link into the network",
                    v.name, names[v.source]
                ));
            }
        }
        // Switches.
        let mut switch_of = vec![NONE; n];
        let mut switch_at: Vec<Option<AgentHandle<AbrSwitch>>> = vec![None; n];
        for node in 0..n {
            if host[node] {
                continue;
            }
            let ports: Vec<(LinkId, f64, bool)> = w
                .net
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.from as usize == node)
                .map(|(i, l)| {
                    // Utilization is followed on every port carrying forward cells.
                    let trunk = trees.iter().any(|t| t.parent[l.to as usize] == i as LinkId);
                    (i as LinkId, l.rate_bps as f64, trunk)
                })
                .collect();
            let s = AbrSwitch::new(
                &names[node],
                node as u32,
                &ports,
                self.erica,
                self.vcs.len(),
                self.consolidation,
                self.vcs.first().map(|v| v.params.pcr).unwrap_or(155.52e6),
                self.sample,
                warmup,
                // The steady state: the second half of the run.
                sc.run.duration / 2,
            );
            let h = w.add_agent(&format!("abr.switch.{}", names[node]), Box::new(s));
            switch_of[node] = h.id();
            switch_at[node] = Some(h);
        }
        // End systems, then the connections through the switches.
        let mut sources = Vec::new();
        let mut dests = Vec::new();
        for (vi, (v, t)) in self.vcs.iter().zip(&trees).enumerate() {
            let group = w.flows.add_group(&format!("abr.{}", v.name));
            let flow = w.flows.open(group, 0);
            // The agent handling this connection at each node.
            let mut agent_at = switch_of.clone();
            for a in agent_at
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| host[*i])
                .map(|(_, a)| a)
            {
                *a = NONE;
            }
            let mut my_dests = Vec::new();
            let bursty = match v.kind {
                SourceKind::Bursty { request_cells, .. } => Some(Client {
                    request_cells,
                    start: v.start,
                }),
                _ => None,
            };
            for &d in &v.destinations {
                let up_link = t.parent[d];
                let parent = w.net.links[up_link as usize].from;
                let back = w.net.link_between(d as u32, parent).ok_or_else(|| {
                    format!(
                        "connection {:?}: no link back from {} to {}",
                        v.name, names[d], names[parent as usize]
                    )
                })?;
                // The upstream agent is set below, once the source exists.
                let dst = AbrDestination::new(
                    vi as u16,
                    &format!("{}.{}", v.name, names[d]),
                    d as u32,
                    Hop {
                        link: back,
                        agent: NONE,
                    },
                    bursty,
                    flow,
                    self.sample,
                    warmup,
                );
                let id = w.add_agent(&format!("abr.dest.{}.{}", v.name, names[d]), Box::new(dst));
                agent_at[d] = id.id();
                my_dests.push((d, id));
            }
            let first = t.children[v.source][0];
            let src = AbrSource::new(
                vi as u16,
                &v.name,
                v.kind,
                v.params,
                v.source as u32,
                flow,
                Hop {
                    link: first,
                    agent: agent_at[w.net.links[first as usize].to as usize],
                },
                v.start,
                v.stop,
                v.destinations.len() as u32,
                self.sample,
                warmup,
            );
            let sid = w.add_agent(&format!("abr.source.{}", v.name), Box::new(src));
            agent_at[v.source] = sid.id();
            for &(d, id) in &my_dests {
                let parent = w.net.links[t.parent[d] as usize].from as usize;
                let up = agent_at[parent];
                let back = w
                    .net
                    .link_between(d as u32, parent as u32)
                    .expect("checked");
                let a = w.agent_mut(id);
                *a = AbrDestination::new(
                    vi as u16,
                    &format!("{}.{}", v.name, names[d]),
                    d as u32,
                    Hop {
                        link: back,
                        agent: up,
                    },
                    bursty,
                    flow,
                    self.sample,
                    warmup,
                );
            }
            let vbr = matches!(v.kind, SourceKind::Vbr { .. });
            for node in 0..n {
                if host[node] || t.parent[node] == NONE {
                    continue;
                }
                let parent = w.net.links[t.parent[node] as usize].from;
                let back = w.net.link_between(node as u32, parent).ok_or_else(|| {
                    format!(
                        "connection {:?}: no link back from {} to {}",
                        v.name, names[node], names[parent as usize]
                    )
                })?;
                let up = Hop {
                    link: back,
                    agent: agent_at[parent as usize],
                };
                let kids: Vec<(LinkId, AgentId)> = t.children[node]
                    .iter()
                    .map(|&l| (l, agent_at[w.net.links[l as usize].to as usize]))
                    .collect();
                let s = w.agent_mut(switch_at[node].expect("switch"));
                let branches = kids
                    .iter()
                    .map(|&(l, a)| (s.port_of(l).expect("port"), a))
                    .collect();
                s.set_vc(vi as u16, VcAtSwitch::new(up, branches, vbr, v.params.pcr));
            }
            sources.push(sid);
            dests.push(
                my_dests
                    .iter()
                    .map(|&(d, id)| (names[d].clone(), id))
                    .collect::<Vec<_>>(),
            );
        }
        let switches = switch_at.into_iter().flatten().collect();
        Ok(Box::new(AbrRun {
            sources,
            dests,
            switches,
        }))
    }
}

/// The ABR network built into a world.
struct AbrRun {
    sources: Vec<AgentHandle<AbrSource>>,
    dests: Vec<Vec<(String, AgentHandle<AbrDestination>)>>,
    switches: Vec<AgentHandle<AbrSwitch>>,
}

impl MechanismRun for AbrRun {
    fn finish(&mut self, sc: &Scenario, w: &mut World, m: &mut Map<String, Value>) {
        let spec = sc
            .mechanism::<AbrSpec>()
            .expect("the ABR family's own specification");
        let now = w.sched.now();
        let measured = to_secs(now.saturating_sub(sc.run.warmup)).max(1e-12);
        for (vi, v) in spec.vcs.iter().enumerate() {
            let p = format!("abr.vc.{}.", v.name);
            if let Some(s) = w.agents.get_mut(self.sources[vi]) {
                if !matches!(v.kind, SourceKind::Vbr { .. }) {
                    m.insert(p.clone() + "acr_mean_mbps", json!(s.acr_mean(now) / 1e6));
                    m.insert(p.clone() + "acr_final_mbps", json!(s.acr / 1e6));
                }
                m.insert(p.clone() + "cells_sent", json!(s.cells_sent));
                m.insert(p.clone() + "data_cells_sent", json!(s.data_sent));
                if !matches!(v.kind, SourceKind::Vbr { .. }) {
                    let e = s.er;
                    m.insert(p.clone() + "brm_received", json!(e.n));
                    if e.n > 0 {
                        m.insert(p.clone() + "er_mean_mbps", json!(e.mean / 1e6));
                        m.insert(p.clone() + "er_sd_mbps", json!(e.sd() / 1e6));
                        m.insert(p.clone() + "er_min_mbps", json!(e.min / 1e6));
                        m.insert(p.clone() + "er_max_mbps", json!(e.max / 1e6));
                    }
                }
                if let SourceKind::Bursty { .. } = v.kind {
                    m.insert(p.clone() + "bursts", json!(s.bursts));
                }
            }
            for (node, id) in &self.dests[vi] {
                if let Some(d) = w.agents.get_mut(*id) {
                    m.insert(format!("{p}dest.{node}.cells"), json!(d.cells));
                    m.insert(
                        format!("{p}dest.{node}.rate_mbps"),
                        json!(d.cells_measured as f64 * 424.0 / measured / 1e6),
                    );
                }
            }
        }
        let mut max_queue = 0usize;
        let mut steady_max_queue = 0usize;
        let mut bottleneck: Option<(String, f64)> = None;
        for &sid in &self.switches {
            let Some(s) = w.agents.get_mut(sid) else {
                continue;
            };
            let ports: Vec<(LinkId, QueueMax, bool)> = s
                .ports
                .iter()
                .map(|p| (p.link, p.max_queue, p.trunk))
                .collect();
            let counts = s.counts.clone();
            let sw = s.name().to_string();
            for (vi, c) in counts.iter().enumerate() {
                if c.returned + c.absorbed > 0 {
                    let p = format!("abr.branch.{sw}.{}.", spec.vcs[vi].name);
                    m.insert(p.clone() + "returned", json!(c.returned));
                    m.insert(p.clone() + "returned_blind", json!(c.returned_blind));
                    m.insert(p + "absorbed", json!(c.absorbed));
                }
            }
            for (link, q, trunk) in ports {
                let l = &w.net.links[link as usize];
                let p = format!("abr.port.{}.", l.name);
                m.insert(p.clone() + "max_queue_cells", json!(q.warm));
                m.insert(p.clone() + "steady_max_queue_cells", json!(q.steady));
                max_queue = max_queue.max(q.warm);
                steady_max_queue = steady_max_queue.max(q.steady);
                if trunk {
                    let util = m
                        .get(&format!("link.{}.utilization", l.name))
                        .and_then(|v| v.as_f64())
                        .unwrap_or_else(|| {
                            l.stats.tx_bytes as f64 * 8.0
                                / to_secs(now).max(1e-12)
                                / l.rate_bps as f64
                        });
                    m.insert(p + "utilization", json!(util));
                    if bottleneck.as_ref().is_none_or(|b| util > b.1) {
                        bottleneck = Some((l.name.clone(), util));
                    }
                }
            }
        }
        m.insert("abr.max_queue_cells".into(), json!(max_queue));
        m.insert("abr.steady_max_queue_cells".into(), json!(steady_max_queue));
        if let Some((name, u)) = bottleneck {
            m.insert("abr.bottleneck".into(), json!(name));
            m.insert("abr.bottleneck_utilization".into(), json!(u));
        }
    }
}
