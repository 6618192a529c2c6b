//! The endpoint admission family's part of the scenario language ([`EndpointFamily`]):
//! `[[endpoint.probe]]` (probing admission on a traffic entry with call arrivals),
//! `[[endpoint.mbac]]` (Measured Sum at a link; one entry per measured link of a
//! traffic entry's path) and `[[endpoint.virtual_queue]]` (the
//! marking design's virtual queue on a link), the builder and the post-run summary.
//! Each entry's keys are declared in [`super::params`] and read through that
//! declaration; this reader adds what needs the rest of the scenario (the traffic entry
//! and link named, the defaults taken from them, the rules across entries).

use super::mbac::{MbacAdmission, MeasuredSum};
use super::params::{vq_rules, MBAC, PROBE, VIRTUAL_QUEUE};
use super::probe::{Algorithm, ProbeAdmission, ProbeReceiver, ProbeSpec};
use super::vq::VirtualQueue;
use crate::decl::{no_rules, Problem, Section, Value as DeclValue, Values};
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

/// The traffic entry `name` (the entry's `traffic`), which must open calls of a CBR,
/// on-off or trace model (a trace only with the entry's `rate`).
fn call_entry(cx: &Cx, t: &Tbl, core: &Core, name: &str) -> Option<(usize, SourceModel)> {
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

fn link_of(cx: &Cx, t: &Tbl, core: &Core, name: &str) -> Option<usize> {
    let i = core.topology.link(name);
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

/// The probing algorithm called `name` (one of [`super::params::ALGORITHMS`]).
pub(super) fn algorithm(name: &str) -> Option<Algorithm> {
    match name {
        "simple" => Some(Algorithm::Simple),
        "early_reject" => Some(Algorithm::EarlyReject),
        "slow_start" => Some(Algorithm::SlowStart),
        _ => None,
    }
}

/// Reads one entry of an array of `section`: its declared keys (no other), then `rules`
/// (each problem blamed on its key); the values, or `None` once every problem has been
/// reported.
fn read_entry(
    cx: &Cx,
    t: &Tbl,
    section: &Section,
    rules: fn(&Values) -> Vec<Problem>,
) -> Option<Values> {
    let values = scenario::read_params(cx, t, section.title, section.params);
    t.finish(cx, &section.keys());
    let values = values?;
    let problems = rules(&values);
    for (key, reason) in &problems {
        t.error(cx, key, reason.clone());
    }
    problems.is_empty().then_some(values)
}

/// The entry's `rate` if given, else the peak rate of the traffic model.
fn rate_of(v: &Values, model: &SourceModel) -> f64 {
    v.get("rate")
        .map(DeclValue::as_f64)
        .unwrap_or_else(|| peak_rate(model).unwrap_or(0.0))
}

fn read_probe(cx: &Cx, t: &Tbl, core: &Core) -> Option<ProbeEntry> {
    let v = read_entry(cx, t, &PROBE, no_rules)?;
    let (i, model) = call_entry(cx, t, core, v.text("traffic"))?;
    let class = match v.get("class") {
        Some(c) => c.as_u64() as u8,
        None => core.traffic[i].class,
    };
    Some(ProbeEntry {
        traffic: i,
        spec: ProbeSpec {
            algorithm: algorithm(v.text("algorithm")).expect("a declared algorithm"),
            epsilon: v.number("epsilon"),
            rate: rate_of(&v, &model),
            probe_time: v.time("probe_time"),
            interval: v.time("interval"),
            size: packet_size(&model).expect("checked"),
            class,
            grace: 0,
            one_way: 0,
        },
        grace: v.get("grace").map(DeclValue::as_time),
    })
}

fn read_mbac(cx: &Cx, t: &Tbl, core: &Core) -> Option<MbacEntry> {
    let v = read_entry(cx, t, &MBAC, no_rules)?;
    let entry = call_entry(cx, t, core, v.text("traffic"));
    let link = link_of(cx, t, core, v.text("link"));
    let (i, model) = entry?;
    Some(MbacEntry {
        traffic: i,
        link: link?,
        target: v.number("target"),
        sample: v.time("sample"),
        window: v.count("window") as usize,
        rate: rate_of(&v, &model),
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
    let v = read_entry(cx, t, &VIRTUAL_QUEUE, vq_rules)?;
    let link = link_of(cx, t, core, v.text("link"))?;
    let limit = match v.get("limit") {
        Some(n) => n.as_u64() as usize,
        None => match queue_packets(&core.topology.links[link].queue) {
            Some(n) => n as usize,
            None => {
                t.error(
                    cx,
                    "limit",
                    "missing: the link's queue has no packet limit to copy; give one",
                );
                return None;
            }
        },
    };
    Some(VqEntry {
        link,
        fraction: v.number("fraction"),
        limit,
        per_class: v.bool("per_class"),
        shared: v.bool("shared"),
        mark_pushed_out: v.bool("mark_pushed_out"),
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
    fn declared(&self) -> &'static [&'static Section] {
        super::params::DECLARED
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
