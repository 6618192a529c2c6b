//! The RPR family's part of the scenario language ([`RprFamily`]): the ring topology
//! (`[topology] kind = "rpr_ring"`) and the `[rpr]` section (fairness mode, buffer
//! design and every MAC and fairness parameter), the builder that puts a station on
//! every node, and the post-run `rpr.*` summary.

use super::monitor::{RprMonitor, WatchedEntry};
use super::params::{RING, SECTION};
use super::station::{BufferDesign, FairnessMode, RprConfig, RprStation};
use crate::net::NONE;
use crate::scenario::units::QueueLimit;
use crate::scenario::walk::{Cx, Tbl};
use crate::scenario::{
    apply_link_overrides, BuiltCore, Core, Family, LinkSpec, Mechanism, MechanismRun, QueueSpec,
    Scenario, Topology, TrafficModel,
};
use crate::time::{to_secs, Time};
use crate::world::{AgentHandle, World};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The RPR family of the scenario language.
pub struct RprFamily;

/// The registered instance.
pub static RPR: RprFamily = RprFamily;

/// What a scenario asks of the ring.
#[derive(Clone, Debug)]
pub struct RprSpec {
    /// Number of stations (nodes `S0` … `S{n-1}`).
    pub stations: usize,
    /// The stations' MAC and fairness parameters.
    pub config: RprConfig,
    /// Traffic entries (indices) whose flows get 1-ms throughput series.
    pub watch: Vec<usize>,
    /// The TCP entry whose first connection's cwnd and RTT are traced.
    pub trace_tcp: Option<usize>,
}

/// The declared key `key` of the ring ([`RING`]): as given, else its default; `None` when
/// it is there but wrong (reported).
fn ring_key(cx: &Cx, t: &Tbl, key: &str) -> Option<crate::decl::Value> {
    let v = crate::scenario::read_key(cx, t, &RING, key)?;
    Some(v.unwrap_or_else(|| RING.param(key).default_value().expect("a fixed default")))
}

fn read_ring(cx: &Cx, t: &Tbl, root: &Tbl) -> Option<Topology> {
    let n = ring_key(cx, t, "stations")?.as_u64() as usize;
    let rate = ring_key(cx, t, "rate")?.as_u64();
    let delay = ring_key(cx, t, "delay")?.as_time();
    let mut known = vec!["kind"];
    known.extend(RING.keys());
    t.finish(cx, &known);
    let nodes: Vec<String> = (0..n).map(|i| format!("S{i}")).collect();
    let mut links = Vec::new();
    let queue = QueueSpec::DropTail {
        limit: QueueLimit::Packets(10_000),
    };
    // Ringlet 0 (data) first, then ringlet 1 (fairness messages, upstream).
    for (a, b) in (0..n)
        .map(|i| (i, (i + 1) % n))
        .chain((0..n).map(|i| ((i + 1) % n, i)))
    {
        links.push(LinkSpec {
            name: format!("{}-{}", nodes[a], nodes[b]),
            from: a,
            to: b,
            rate,
            delay,
            queue: queue.clone(),
            meters: Vec::new(),
        });
    }
    let mut topo = Topology {
        kind: "rpr_ring".into(),
        nodes,
        links,
        ..Default::default()
    };
    apply_link_overrides(cx, root, &mut topo, false);
    Some(topo)
}

/// Reads the declared key `key` of `[rpr]` into `slot`.
fn key_into<T>(
    cx: &Cx,
    t: &Tbl,
    key: &str,
    slot: &mut T,
    conv: impl FnOnce(&crate::decl::Value) -> T,
) -> bool {
    crate::scenario::key_into(cx, t, &SECTION, key, slot, conv)
}

fn traffic_index(cx: &Cx, t: &Tbl, key: &str, name: &str, core: &Core) -> Option<usize> {
    let i = core.traffic.iter().position(|e| e.name == name);
    // An entry that failed to read is missing for that reason only.
    if i.is_none() && !cx.has_error_under("traffic") {
        let names: Vec<&str> = core.traffic.iter().map(|e| e.name.as_str()).collect();
        t.error(
            cx,
            key,
            format!(
                "no traffic entry {name:?}; the entries are: {}",
                names.join(", ")
            ),
        );
    }
    i
}

fn read_section(cx: &Cx, t: &Tbl, core: &Core) -> Option<RprSpec> {
    use crate::decl::Value;
    let mut c = RprConfig::default();
    let mut ok = true;
    ok &= key_into(cx, t, "mode", &mut c.mode, |v| match v.as_str() {
        "conservative" => FairnessMode::Conservative,
        _ => FairnessMode::Aggressive,
    });
    ok &= key_into(cx, t, "design", &mut c.design, |v| match v.as_str() {
        "single" => BufferDesign::Single,
        _ => BufferDesign::Dual,
    });
    ok &= key_into(
        cx,
        t,
        "aging_interval",
        &mut c.aging_interval,
        Value::as_time,
    );
    ok &= key_into(
        cx,
        t,
        "sample_interval",
        &mut c.sample_interval,
        Value::as_time,
    );
    ok &= key_into(cx, t, "trace_from", &mut c.trace_from, Value::as_time);
    ok &= key_into(cx, t, "trace_until", &mut c.trace_until, Value::as_time);
    ok &= key_into(cx, t, "age_coef", &mut c.age_coef, Value::as_f64);
    ok &= key_into(cx, t, "lp_coef", &mut c.lp_coef, Value::as_f64);
    ok &= key_into(cx, t, "ramp_coef", &mut c.ramp_coef, Value::as_f64);
    ok &= key_into(
        cx,
        t,
        "ramp_down_coef",
        &mut c.ramp_down_coef,
        Value::as_f64,
    );
    ok &= key_into(cx, t, "ramp_up_coef", &mut c.ramp_up_coef, Value::as_f64);
    ok &= key_into(cx, t, "stq_low", &mut c.stq_low, Value::as_f64);
    ok &= key_into(cx, t, "stq_medium", &mut c.stq_medium, Value::as_f64);
    ok &= key_into(cx, t, "stq_high", &mut c.stq_high, Value::as_f64);
    ok &= key_into(
        cx,
        t,
        "rate_low_threshold",
        &mut c.rate_low_threshold,
        Value::as_f64,
    );
    ok &= key_into(
        cx,
        t,
        "aggressive_on_rates",
        &mut c.aggressive_on_rates,
        |v| *v == Value::Bool(true),
    );
    if ok && !(c.stq_low <= c.stq_medium && c.stq_medium <= c.stq_high) {
        t.error(
            cx,
            "stq_high",
            format!(
                "the STQ thresholds must satisfy low <= medium <= high, got {} / {} / {}",
                c.stq_low, c.stq_medium, c.stq_high
            ),
        );
        ok = false;
    }
    ok &= key_into(cx, t, "add_credit", &mut c.add_credit, Value::as_u64);
    ok &= key_into(cx, t, "stq_size", &mut c.stq_size, Value::as_u64);
    ok &= key_into(cx, t, "fairness_size", &mut c.fairness_size, |v| {
        v.as_u64() as u32
    });
    ok &= key_into(cx, t, "client_buffer", &mut c.client_buffer, |v| {
        v.as_u64() as usize
    });
    let mut watch = Vec::new();
    match crate::scenario::read_names(cx, t, &SECTION, "watch") {
        Some(names) => {
            for (name, _) in names.unwrap_or_default() {
                match traffic_index(cx, t, "watch", &name, core) {
                    Some(i) => watch.push(i),
                    None => ok = false,
                }
            }
        }
        None => ok = false,
    }
    let mut trace_tcp = None;
    if t.has("trace_tcp") {
        if let Some(name) = t.str(cx, "trace_tcp") {
            match traffic_index(cx, t, "trace_tcp", &name, core) {
                Some(i) if matches!(core.traffic[i].model, TrafficModel::Tcp(_)) => {
                    trace_tcp = Some(i)
                }
                Some(_) => {
                    t.error(
                        cx,
                        "trace_tcp",
                        format!("traffic entry {name:?} is not TCP"),
                    );
                    ok = false;
                }
                None => ok = false,
            }
        } else {
            ok = false;
        }
    }
    t.finish(cx, &SECTION.keys());
    ok.then_some(RprSpec {
        stations: core.topology.nodes.len(),
        config: c,
        watch,
        trace_tcp,
    })
}

impl Family for RprFamily {
    fn name(&self) -> &'static str {
        "rpr"
    }
    fn sections(&self) -> &'static [&'static str] {
        &["rpr"]
    }
    fn declared(&self) -> &'static [&'static crate::decl::Section] {
        super::params::DECLARED
    }
    fn topology_kinds(&self) -> &'static [&'static str] {
        &["rpr_ring"]
    }
    fn topology_declared(&self) -> &'static [&'static crate::decl::Section] {
        super::params::TOPOLOGIES
    }
    fn read_topology(&self, cx: &Cx, t: &Tbl, root: &Tbl) -> Option<Topology> {
        read_ring(cx, t, root)
    }
    fn read(&self, cx: &Cx, root: &Tbl, core: &Core) -> Option<Option<Arc<dyn Mechanism>>> {
        let ring = core.topology.kind == "rpr_ring";
        if !root.has("rpr") {
            if !ring {
                return Some(None);
            }
            let spec = RprSpec {
                stations: core.topology.nodes.len(),
                config: RprConfig::default(),
                watch: Vec::new(),
                trace_tcp: None,
            };
            return Some(Some(Arc::new(spec)));
        }
        let t = root.table(cx, "rpr")?;
        if !ring {
            t.error(
                cx,
                "mode",
                "the [rpr] section runs on a ring: set [topology] kind = \"rpr_ring\"",
            );
            t.skip_rest();
            return None;
        }
        let spec = read_section(cx, &t, core)?;
        Some(Some(Arc::new(spec)))
    }
}

impl Mechanism for RprSpec {
    fn family(&self) -> &'static str {
        "rpr"
    }
    fn build(
        &self,
        sc: &Scenario,
        w: &mut World,
        core: &BuiltCore,
    ) -> Result<Box<dyn MechanismRun>, String> {
        let n = self.stations;
        let warmup = sc.run.warmup;
        let mut ids = Vec::with_capacity(n);
        let ring_delay: Time = (0..n)
            .map(|i| {
                let l = w
                    .net
                    .link_between(i as u32, ((i + 1) % n) as u32)
                    .expect("ring");
                w.net.links[l as usize].delay
            })
            .sum();
        for i in 0..n {
            let up = (i + n - 1) % n;
            let data = w
                .net
                .link_between(i as u32, ((i + 1) % n) as u32)
                .ok_or("ring without its data span")?;
            let ctrl = w
                .net
                .link_between(i as u32, up as u32)
                .ok_or("ring without its control span")?;
            let rate = w.net.links[data as usize].rate_bps;
            let mut st = RprStation::new(
                self.config.clone(),
                i as u32,
                n as u32,
                i as u32,
                data,
                ctrl,
                up as u32,
                rate,
                ring_delay,
            );
            st.measure_from(warmup);
            let id = w.add_agent(&format!("rpr.S{i}"), Box::new(st));
            w.attach_port(data, id.id());
            w.attach_port(ctrl, id.id());
            ids.push(id);
        }
        for i in 0..n {
            let up = ids[(i + n - 1) % n].id();
            w.agent_mut(ids[i]).set_upstream(up);
        }
        let watched = self
            .watch
            .iter()
            .map(|&ti| WatchedEntry {
                name: sc.traffic[ti].name.clone(),
                group: w.flows.group_id(&sc.traffic[ti].name).unwrap_or(NONE),
            })
            .collect();
        let traced = self.trace_tcp.and_then(|ti| {
            core.connections
                .iter()
                .find(|c| c.traffic == ti)
                .map(|c| (c.sender, c.flow))
        });
        let mon = RprMonitor::new(self.config.sample_interval, warmup, watched, traced);
        let monitor = w.add_agent("rpr.monitor", Box::new(mon));
        for i in 0..n {
            w.tap(i as u32, monitor.id());
        }
        Ok(Box::new(RprRun {
            stations: ids,
            monitor,
        }))
    }
}

/// The ring built into a world.
struct RprRun {
    stations: Vec<AgentHandle<RprStation>>,
    monitor: AgentHandle<RprMonitor>,
}

/// Jain's fairness index of `x`: (Σx)² / (n·Σx²); 1 when all are equal.
pub fn jain_index(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || s2 == 0.0 {
        return 1.0;
    }
    s * s / (x.len() as f64 * s2)
}

impl MechanismRun for RprRun {
    fn finish(&mut self, sc: &Scenario, w: &mut World, m: &mut Map<String, Value>) {
        let now = w.sched.now();
        let measured = to_secs(now.saturating_sub(sc.run.warmup)).max(1e-12);
        let mut shares = Vec::new();
        for (i, &id) in self.stations.iter().enumerate() {
            let mut delivered = 0u64;
            let mut any = false;
            for t in sc.traffic.iter().filter(|t| t.from == i) {
                if let Some(g) = w.flows.group_id(&t.name) {
                    delivered += w.flows.groups[g as usize].rx_bytes_measured;
                    any = true;
                }
            }
            let p = format!("rpr.station.{i}.");
            let bps = delivered as f64 * 8.0 / measured;
            m.insert(p.clone() + "throughput_bps", json!(bps));
            if any {
                shares.push(bps);
            }
            if let Some(s) = w.agents.get_mut(id) {
                let st = s.stats();
                m.insert(
                    p.clone() + "add_bps",
                    json!(st.added_bytes as f64 * 8.0 / measured),
                );
                m.insert(p.clone() + "client_max_pkts", json!(st.client_max));
                m.insert(p.clone() + "client_drops", json!(st.client_drops));
                m.insert(p.clone() + "stq_max_bytes", json!(st.stq_max));
                m.insert(p.clone() + "stq_drops", json!(st.stq_drops));
                m.insert(p + "frtt_s", json!(to_secs(s.frtt())));
            }
        }
        m.insert("rpr.jain_index".into(), json!(jain_index(&shares)));
        let Some(mon) = w.agents.get_mut(self.monitor) else {
            return;
        };
        let base = std::mem::take(&mut mon.rx_at_warmup);
        if mon.rtt.count() > 0 {
            m.insert("rpr.tcp.rtt_mean_s".into(), json!(mon.rtt.mean() / 1e12));
            m.insert(
                "rpr.tcp.rtt_p99_s".into(),
                json!(mon.rtt.quantile(0.99) as f64 / 1e12),
            );
            m.insert("rpr.tcp.rtt_samples".into(), json!(mon.rtt.count()));
        }
        for (i, h) in mon.rtt_by_node.iter().enumerate() {
            if h.count() > 0 {
                let p = format!("rpr.station.{i}.");
                m.insert(p.clone() + "rtt_mean_s", json!(h.mean() / 1e12));
                m.insert(p + "rtt_p99_s", json!(h.quantile(0.99) as f64 / 1e12));
            }
        }
        for t in &sc.traffic {
            let Some(g) = w.flows.group_id(&t.name) else {
                continue;
            };
            let mut k = 0;
            for (f, r) in w.flows.recs.iter().enumerate() {
                if r.group != g {
                    continue;
                }
                let b0 = base.get(f).copied().unwrap_or(0);
                m.insert(
                    format!("rpr.flow.{}.{k}.throughput_bps", t.name),
                    json!((r.rx_bytes - b0) as f64 * 8.0 / measured),
                );
                k += 1;
            }
        }
    }
}
