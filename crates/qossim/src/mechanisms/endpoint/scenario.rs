//! The endpoint admission family's part of the scenario language ([`EndpointFamily`]):
//! `[[endpoint.probe]]` (probing admission on a traffic entry with call arrivals),
//! `[[endpoint.mbac]]` (Measured Sum at a link; one entry per measured link of a
//! traffic entry's path) and `[[endpoint.virtual_queue]]` (the
//! marking design's virtual queue on a link), the builder and the post-run summary.

use super::mbac::{MbacAdmission, MeasuredSum};
use super::probe::{Algorithm, ProbeAdmission, ProbeReceiver, ProbeSpec};
use super::vq::VirtualQueue;
use crate::packet::Packet;
use crate::queue::{DropCause, DropObserver};
use crate::scenario::units::QueueLimit;
use crate::scenario::walk::{Cx, Tbl};
use crate::scenario::{
    self, BuiltCore, Core, Family, Mechanism, MechanismRun, QueueSpec, Scenario, TrafficModel,
};
use crate::time::{millis, secs, to_secs, Time};
use crate::traffic::{FlowGenerator, SourceModel};
use crate::world::{AgentHandle, World};
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// Counts the drops of every flow at the ports it observes, from the warm-up on: data
/// lost is what the network dropped, never what was still in flight when the run ended.
struct FlowDrops(Rc<RefCell<HashMap<u32, u64>>>);

impl DropObserver for FlowDrops {
    fn on_drop(&mut self, pkt: &Packet, _cause: DropCause) {
        *self.0.borrow_mut().entry(pkt.flow).or_insert(0) += 1;
    }
    fn on_warmup(&mut self) {
        self.0.borrow_mut().clear();
    }
}

/// The endpoint admission family of the scenario language.
pub struct EndpointFamily;

/// The registered instance.
pub static ENDPOINT: EndpointFamily = EndpointFamily;

/// Probing admission on one traffic entry.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeEntry {
    /// The traffic entry (index).
    pub traffic: usize,
    /// The probing configuration (`grace` and `one_way` 0: computed from the path).
    pub spec: ProbeSpec,
    /// The receiver's grace, if given.
    pub grace: Option<Time>,
}

/// Measured Sum admission on one traffic entry.
#[derive(Clone, Debug, PartialEq)]
pub struct MbacEntry {
    /// The traffic entry (index).
    pub traffic: usize,
    /// The measured link (index in the topology).
    pub link: usize,
    /// Utilization target υ.
    pub target: f64,
    /// Sampling period S.
    pub sample: Time,
    /// Samples in the window T.
    pub window: usize,
    /// Requested rate, bits/s.
    pub rate: f64,
}

/// A virtual queue on a link.
#[derive(Clone, Debug, PartialEq)]
pub struct VqEntry {
    /// The link (index in the topology).
    pub link: usize,
    /// Fraction of the link rate it is served at.
    pub fraction: f64,
    /// Its limit, packets waiting.
    pub limit: usize,
    /// One counter per priority level (strict priority) instead of one FIFO counter.
    pub per_class: bool,
    /// With `per_class`: the levels share the limit, as the real buffer is shared, and
    /// a higher level's packet arriving at a full virtual buffer pushes out the most
    /// recent lower-level one instead of being marked.
    pub shared: bool,
    /// With `shared`: a pushed-out virtual packet counts as dropped by the virtual queue,
    /// and its real copy is marked at its departure if it is still queued.
    pub mark_pushed_out: bool,
}

/// What a scenario asks of endpoint admission.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointSpec {
    /// Probing entries.
    pub probes: Vec<ProbeEntry>,
    /// Measured Sum entries.
    pub mbacs: Vec<MbacEntry>,
    /// Virtual queues.
    pub vqs: Vec<VqEntry>,
}

const PROBE_KEYS: &[&str] = &[
    "traffic",
    "algorithm",
    "epsilon",
    "probe_time",
    "interval",
    "rate",
    "class",
    "grace",
];
const MBAC_KEYS: &[&str] = &["traffic", "link", "target", "sample", "window", "rate"];
const VQ_KEYS: &[&str] = &[
    "link",
    "fraction",
    "limit",
    "per_class",
    "shared",
    "mark_pushed_out",
];

/// The peak (token) rate of a source model, bits/s, if it has one.
fn peak_rate(m: &SourceModel) -> Option<f64> {
    match m {
        SourceModel::Cbr { size, interval } | SourceModel::OnOff { size, interval, .. } => {
            Some(*size as f64 * 8.0 / interval)
        }
        _ => None,
    }
}

fn packet_size(m: &SourceModel) -> Option<u32> {
    match m {
        SourceModel::Cbr { size, .. }
        | SourceModel::OnOff { size, .. }
        | SourceModel::Trace { size, .. } => Some(*size),
        _ => None,
    }
}

/// The traffic entry named by `key`, which must open calls of a CBR or on-off model.
fn call_entry(cx: &Cx, t: &Tbl, core: &Core) -> Option<(usize, SourceModel)> {
    let name = t.req_str(cx, "traffic")?;
    let Some(i) = core.traffic.iter().position(|e| e.name == name) else {
        if !cx.has_error_under("traffic") {
            let names: Vec<&str> = core.traffic.iter().map(|e| e.name.as_str()).collect();
            t.error(
                cx,
                "traffic",
                format!(
                    "no traffic entry {name:?}; the entries are: {}",
                    names.join(", ")
                ),
            );
        }
        return None;
    };
    let e = &core.traffic[i];
    if e.calls.is_none() {
        t.error(
            cx,
            "traffic",
            format!("traffic entry {name:?} has no call arrivals ([traffic.calls]) to admit"),
        );
        return None;
    }
    match &e.model {
        TrafficModel::Source(m) if peak_rate(m).is_some() => Some((i, m.clone())),
        // A trace has no burst rate of its own: the entry gives its token rate.
        TrafficModel::Source(m @ SourceModel::Trace { .. }) if t.has("rate") => {
            Some((i, m.clone()))
        }
        TrafficModel::Source(SourceModel::Trace { .. }) => {
            t.error(
                cx,
                "rate",
                format!("missing: traffic entry {name:?} replays a trace; give its token rate"),
            );
            None
        }
        _ => {
            t.error(
                cx,
                "traffic",
                format!(
                    "traffic entry {name:?}: admission needs a \"cbr\", \"onoff\" or \"trace\" model (a token rate)"
                ),
            );
            None
        }
    }
}

fn link_of(cx: &Cx, t: &Tbl, core: &Core) -> Option<usize> {
    let name = t.req_str(cx, "link")?;
    let i = core.topology.link(&name);
    if i.is_none() {
        t.error(
            cx,
            "link",
            format!(
                "unknown link {name:?}; links are: {}",
                core.topology.link_list()
            ),
        );
    }
    i
}

fn positive_time(cx: &Cx, t: &Tbl, key: &str, default: Time) -> Option<Time> {
    let mut v = default;
    t.time_into(cx, key, true, &mut v).then_some(v)
}

fn rate_or(cx: &Cx, t: &Tbl, default: f64) -> Option<f64> {
    if !t.has("rate") {
        return Some(default);
    }
    match t.rate(cx, "rate")? {
        0 => {
            t.error(cx, "rate", "must be positive");
            None
        }
        v => Some(v as f64),
    }
}

fn read_probe(cx: &Cx, t: &Tbl, core: &Core) -> Option<ProbeEntry> {
    let entry = call_entry(cx, t, core);
    let algorithm = if t.has("algorithm") {
        match t.str(cx, "algorithm").as_deref() {
            Some("simple") => Some(Algorithm::Simple),
            Some("early_reject") => Some(Algorithm::EarlyReject),
            Some("slow_start") => Some(Algorithm::SlowStart),
            Some(o) => {
                t.error(
                    cx,
                    "algorithm",
                    format!("unknown algorithm {o:?}; expected \"simple\", \"early_reject\" or \"slow_start\""),
                );
                None
            }
            None => None,
        }
    } else {
        Some(Algorithm::SlowStart)
    };
    let epsilon = if t.has("epsilon") {
        t.num_in(cx, "epsilon", 0.0, 1.0)
    } else {
        Some(0.0)
    };
    let probe_time = positive_time(cx, t, "probe_time", secs(5.0));
    let interval = positive_time(cx, t, "interval", secs(1.0));
    let grace = if t.has("grace") {
        t.time(cx, "grace").map(Some)
    } else {
        Some(None)
    };
    let class = t.class(cx, "class");
    let (i, model) = entry?;
    let rate = rate_or(cx, t, peak_rate(&model).unwrap_or(0.0));
    t.finish(cx, PROBE_KEYS);
    let class = class?.unwrap_or(core.traffic[i].class);
    Some(ProbeEntry {
        traffic: i,
        spec: ProbeSpec {
            algorithm: algorithm?,
            epsilon: epsilon?,
            rate: rate?,
            probe_time: probe_time?,
            interval: interval?,
            size: packet_size(&model).expect("checked"),
            class,
            grace: 0,
            one_way: 0,
        },
        grace: grace?,
    })
}

fn read_mbac(cx: &Cx, t: &Tbl, core: &Core) -> Option<MbacEntry> {
    let entry = call_entry(cx, t, core);
    let link = link_of(cx, t, core);
    let target = if t.has("target") {
        t.num_in(cx, "target", 0.0, 10.0)
    } else {
        Some(0.9)
    };
    let sample = positive_time(cx, t, "sample", millis(500.0));
    let window = if t.has("window") {
        t.uint_in(cx, "window", 1, 1000).map(|w| w as usize)
    } else {
        Some(3)
    };
    let (i, model) = entry?;
    let rate = rate_or(cx, t, peak_rate(&model).unwrap_or(0.0));
    t.finish(cx, MBAC_KEYS);
    Some(MbacEntry {
        traffic: i,
        link: link?,
        target: target?,
        sample: sample?,
        window: window?,
        rate: rate?,
    })
}

fn queue_packets(q: &QueueSpec) -> Option<u64> {
    match q {
        QueueSpec::DropTail {
            limit: QueueLimit::Packets(n),
        } => Some(*n),
        QueueSpec::Priority { limit, .. } => Some(*limit),
        _ => None,
    }
}

fn read_vq(cx: &Cx, t: &Tbl, core: &Core) -> Option<VqEntry> {
    let link = link_of(cx, t, core);
    let fraction = if t.has("fraction") {
        t.num_in(cx, "fraction", 0.0, 1.0).and_then(|f| {
            if f > 0.0 {
                Some(f)
            } else {
                t.error(cx, "fraction", "must be above 0");
                None
            }
        })
    } else {
        Some(0.9)
    };
    let limit = if t.has("limit") {
        t.uint(cx, "limit").map(|v| v as usize)
    } else {
        match link.and_then(|l| queue_packets(&core.topology.links[l].queue)) {
            Some(n) => Some(n as usize),
            None if link.is_some() => {
                t.error(
                    cx,
                    "limit",
                    "missing: the link's queue has no packet limit to copy; give one",
                );
                None
            }
            None => None,
        }
    };
    let per_class = if t.has("per_class") {
        t.bool(cx, "per_class")
    } else {
        Some(false)
    };
    let shared = if t.has("shared") {
        t.bool(cx, "shared")
    } else {
        Some(false)
    };
    if shared == Some(true) && per_class == Some(false) {
        t.error(
            cx,
            "shared",
            "needs per_class = true (the levels share one buffer)",
        );
    }
    let mark_pushed_out = if t.has("mark_pushed_out") {
        t.bool(cx, "mark_pushed_out")
    } else {
        Some(false)
    };
    if mark_pushed_out == Some(true) && shared == Some(false) {
        t.error(
            cx,
            "mark_pushed_out",
            "needs shared = true (only a shared virtual buffer pushes packets out)",
        );
    }
    t.finish(cx, VQ_KEYS);
    Some(VqEntry {
        link: link?,
        fraction: fraction?,
        limit: limit?,
        per_class: per_class?,
        shared: shared?,
        mark_pushed_out: mark_pushed_out?,
    })
}

fn read_table(cx: &Cx, t: &Tbl, core: &Core) -> Option<EndpointSpec> {
    let mut ok = true;
    let mut probes = Vec::new();
    let mut mbacs = Vec::new();
    let mut vqs = Vec::new();
    let mut used: Vec<usize> = Vec::new();
    for p in t.tables(cx, "probe") {
        match read_probe(cx, &p, core) {
            Some(e) if used.contains(&e.traffic) => {
                p.error(
                    cx,
                    "traffic",
                    "this traffic entry already has an admission policy",
                );
                ok = false;
            }
            Some(e) => {
                used.push(e.traffic);
                probes.push(e)
            }
            None => ok = false,
        }
    }
    for m in t.tables(cx, "mbac") {
        match read_mbac(cx, &m, core) {
            Some(e) if used.contains(&e.traffic) => {
                m.error(
                    cx,
                    "traffic",
                    "this traffic entry already has an admission policy",
                );
                ok = false;
            }
            // Several entries of one traffic entry: one per measured link of its path,
            // all asking for the same rate.
            Some(e)
                if mbacs
                    .iter()
                    .any(|o: &MbacEntry| o.traffic == e.traffic && o.link == e.link) =>
            {
                m.error(
                    cx,
                    "link",
                    "this traffic entry is already measured at this link",
                );
                ok = false;
            }
            Some(e)
                if mbacs
                    .iter()
                    .any(|o: &MbacEntry| o.traffic == e.traffic && o.rate != e.rate) =>
            {
                m.error(
                    cx,
                    "rate",
                    "entries of one traffic entry (one per link of its path) ask for one rate: give them the same",
                );
                ok = false;
            }
            Some(e) => {
                if let Some(o) = mbacs.iter().find(|o: &&MbacEntry| o.link == e.link) {
                    if (o.target, o.sample, o.window) != (e.target, e.sample, e.window) {
                        m.error(
                            cx,
                            "link",
                            "entries measuring the same link share one estimator: give them the same target, sample and window",
                        );
                        ok = false;
                        continue;
                    }
                }
                mbacs.push(e)
            }
            None => ok = false,
        }
    }
    for v in t.tables(cx, "virtual_queue") {
        match read_vq(cx, &v, core) {
            Some(e) => vqs.push(e),
            None => ok = false,
        }
    }
    t.finish(cx, &["probe", "mbac", "virtual_queue"]);
    ok.then_some(EndpointSpec { probes, mbacs, vqs })
}

impl Family for EndpointFamily {
    fn name(&self) -> &'static str {
        "endpoint"
    }
    fn sections(&self) -> &'static [&'static str] {
        &["endpoint"]
    }
    fn read(&self, cx: &Cx, root: &Tbl, core: &Core) -> Option<Option<Arc<dyn Mechanism>>> {
        scenario::read_section(cx, root, "endpoint", |t| read_table(cx, t, core))
    }
}

/// The largest packet any traffic entry of `sc` sends (at least `size`): what a full
/// packet-limited queue may be made of, so what bounds a probe's wait.
fn largest_packet(sc: &Scenario, size: u32) -> u32 {
    sc.traffic
        .iter()
        .filter_map(|t| match &t.model {
            TrafficModel::Source(m) => packet_size(m),
            TrafficModel::Tcp(tcp) => Some(tcp.packet_size),
        })
        .fold(size, u32::max)
}

/// One-way propagation of the path from `a` to `b`, and the longest time a packet can
/// wait on it: full buffers of the largest packets any traffic entry sends, and `size`
/// bytes of its own.
fn path_times(
    w: &mut World,
    sc: &Scenario,
    a: u32,
    b: u32,
    size: u32,
) -> Result<(Time, Time), String> {
    let path = w.net.path(a, b)?;
    let big = largest_packet(sc, size);
    let mut prop = 0;
    let mut wait = 0;
    for l in path {
        let link = &w.net.links[l as usize];
        prop += link.delay;
        let time_of =
            |bytes: u32| (bytes as f64 * 8.0 * 1e12 / link.rate_bps as f64).ceil() as Time;
        let limit = sc
            .topology
            .link(&link.name)
            .and_then(|i| queue_packets(&sc.topology.links[i].queue))
            .unwrap_or(1000);
        wait += time_of(big) * limit + time_of(size);
    }
    Ok((prop, wait))
}

impl Mechanism for EndpointSpec {
    fn family(&self) -> &'static str {
        "endpoint"
    }
    fn build(
        &self,
        sc: &Scenario,
        w: &mut World,
        core: &BuiltCore,
    ) -> Result<Box<dyn MechanismRun>, String> {
        for v in &self.vqs {
            let link = w
                .net
                .link_id(&sc.topology.links[v.link].name)
                .ok_or("no such link")?;
            let vq = if v.mark_pushed_out {
                VirtualQueue::shared_marking_pushed_out(v.fraction, v.limit)
            } else if v.shared {
                VirtualQueue::shared(v.fraction, v.limit)
            } else if v.per_class {
                VirtualQueue::per_class(v.fraction, v.limit)
            } else {
                VirtualQueue::new(v.fraction, v.limit)
            };
            w.net.add_hook(link, Box::new(vq));
        }
        let generator = |ti: usize| -> Result<AgentHandle<FlowGenerator>, String> {
            core.generators
                .iter()
                .find(|&&(t, _)| t == ti)
                .map(|&(_, g)| g)
                .ok_or_else(|| format!("traffic entry {:?} has no generator", sc.traffic[ti].name))
        };
        let mut receivers = Vec::new();
        for p in &self.probes {
            let t = &sc.traffic[p.traffic];
            let (src, dst) = (t.from as u32, t.to as u32);
            let (one_way, wait) = path_times(w, sc, src, dst, p.spec.size)?;
            let mut spec = p.spec.clone();
            spec.one_way = one_way;
            spec.grace = p
                .grace
                .unwrap_or((one_way + wait).min(secs(2.0)) + millis(1.0));
            let spec = Arc::new(spec);
            let rx = w.add_agent(
                &format!("endpoint.{}.receiver", t.name),
                Box::new(ProbeReceiver::new(spec.clone())),
            );
            let group = w.flows.add_group(&format!("{}.probe", t.name));
            let flow = w.flows.open_shared(group, 0);
            let g = generator(p.traffic)?;
            w.agent_mut(g).set_admission(Box::new(ProbeAdmission::new(
                spec,
                rx.id(),
                src,
                dst,
                flow,
            )));
            receivers.push(rx);
        }
        let mut estimators: Vec<(usize, AgentHandle<MeasuredSum>)> = Vec::new();
        // Per traffic entry: its rate and the estimators of its measured links.
        let mut policies: Vec<(usize, f64, Vec<AgentHandle<MeasuredSum>>)> = Vec::new();
        for m in &self.mbacs {
            let est = match estimators.iter().find(|(l, _)| *l == m.link) {
                Some(&(_, id)) => id,
                None => {
                    let name = &sc.topology.links[m.link].name;
                    let link = w.net.link_id(name).ok_or("no such link")?;
                    let c = w.net.links[link as usize].rate_bps as f64;
                    let id = w.add_agent(
                        &format!("endpoint.mbac.{name}"),
                        Box::new(MeasuredSum::new(link, c, m.sample, m.window, m.target)),
                    );
                    estimators.push((m.link, id));
                    id
                }
            };
            match policies.iter_mut().find(|(t, _, _)| *t == m.traffic) {
                Some((_, _, ests)) => ests.push(est),
                None => policies.push((m.traffic, m.rate, vec![est])),
            }
        }
        for (traffic, rate, ests) in policies {
            let g = generator(traffic)?;
            w.agent_mut(g)
                .set_admission(Box::new(MbacAdmission::new(ests, rate)));
        }
        // One drop count per flow over every port (each port's warm-up clears the same
        // shared map, which is harmless).
        let drops = Rc::new(RefCell::new(HashMap::new()));
        for l in 0..w.net.links.len() {
            w.net.links[l]
                .stats
                .drops
                .observe(Box::new(FlowDrops(drops.clone())));
        }
        Ok(Box::new(EndpointRun { receivers, drops }))
    }
}

/// Endpoint admission built into a world.
struct EndpointRun {
    receivers: Vec<AgentHandle<ProbeReceiver>>,
    drops: Rc<RefCell<HashMap<u32, u64>>>,
}

impl MechanismRun for EndpointRun {
    fn finish(&mut self, sc: &Scenario, w: &mut World, m: &mut Map<String, Value>) {
        let spec = sc
            .mechanism::<EndpointSpec>()
            .expect("the endpoint family's own specification");
        let now = w.sched.now();
        let measured = to_secs(now.saturating_sub(sc.run.warmup)).max(1e-12);
        let mut entries: Vec<usize> = spec.probes.iter().map(|p| p.traffic).collect();
        for e in &spec.mbacs {
            if !entries.contains(&e.traffic) {
                entries.push(e.traffic);
            }
        }
        let (mut sent, mut lost_all, mut bytes) = (0u64, 0u64, 0u64);
        let drops = self.drops.borrow();
        for &ti in &entries {
            let name = &sc.traffic[ti].name;
            let Some(g) = w.flows.group_id(name) else {
                continue;
            };
            // Data lost: what the ports dropped, not what was in flight at the end.
            let lost: u64 = drops
                .iter()
                .filter(|(&f, _)| w.flows.recs.get(f as usize).is_some_and(|r| r.group == g))
                .map(|(_, &n)| n)
                .sum();
            let gs = &w.flows.groups[g as usize];
            let s = gs.sent_pkts_measured;
            sent += s;
            lost_all += lost;
            bytes += gs.rx_bytes_measured;
            let p = format!("endpoint.{name}.");
            m.insert(p.clone() + "data_sent", json!(s));
            m.insert(p.clone() + "data_lost", json!(lost));
            m.insert(
                p.clone() + "data_loss",
                json!(if s > 0 { lost as f64 / s as f64 } else { 0.0 }),
            );
            m.insert(
                p.clone() + "data_bps",
                json!(gs.rx_bytes_measured as f64 * 8.0 / measured),
            );
            for k in ["offered_calls", "blocked_calls", "blocking"] {
                if let Some(v) = m.get(&format!("agent.traffic.{name}.{k}")).cloned() {
                    m.insert(p.clone() + k, v);
                }
            }
            if let Some(pg) = w.flows.group_id(&format!("{name}.probe")) {
                let pg = &w.flows.groups[pg as usize];
                m.insert(p.clone() + "probes_sent", json!(pg.sent_pkts_measured));
                m.insert(p.clone() + "probes_received", json!(pg.rx_pkts_measured));
            }
        }
        drop(drops);
        m.insert("endpoint.data_sent".into(), json!(sent));
        m.insert("endpoint.data_lost".into(), json!(lost_all));
        m.insert(
            "endpoint.data_loss".into(),
            json!(if sent > 0 {
                lost_all as f64 / sent as f64
            } else {
                0.0
            }),
        );
        m.insert(
            "endpoint.data_bps".into(),
            json!(bytes as f64 * 8.0 / measured),
        );
        for (p, &rx) in spec.probes.iter().zip(&self.receivers) {
            if let Some(r) = w.agents.get_mut(rx) {
                let c = r.counts;
                let pre = format!("endpoint.{}.", sc.traffic[p.traffic].name);
                m.insert(pre.clone() + "probes_marked", json!(c.marked));
                m.insert(pre.clone() + "probe_admitted", json!(c.admitted));
                m.insert(pre + "probe_rejected", json!(c.rejected));
            }
        }
    }
}
