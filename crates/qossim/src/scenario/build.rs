//! Turning a validated [`Scenario`] into a [`World`] and running it.

use super::topology::{LinkSpec, QueueSpec};
use super::units::QueueLimit;
use super::{MeterSpec, MetricKind, Scenario, TrafficModel};
use crate::meter::{FlowProfiler, Meter, Policer, TokenBucketProfiler, TswProfiler};
use crate::metrics::{Probe, Series};
use crate::net::{AgentId, FlowId, LinkId, NONE};
use crate::queue::{
    Codel, DropTail, FlowDrops, Limit, Priority, QueueDisc, Red, Rio, TopClassLimit,
};
use crate::time::{secs, to_secs, Time, PS_PER_MS};
use crate::traffic::{FlowGenerator, MaxActive, PacketTemplate, Sink, Source};
use crate::transport::{TcpConfig, TcpReceiver, TcpReceiverConfig, TcpRenoSender};
use crate::world::World;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// ns-2's delayed-ACK timer.
const DELAYED_ACK: Time = 100 * PS_PER_MS;

fn make_queue(l: &LinkSpec, seed: u64) -> Box<dyn QueueDisc> {
    let rng = || crate::rng::Rng::stream(seed, &format!("queue.{}", l.name));
    match &l.queue {
        QueueSpec::DropTail { limit } => Box::new(DropTail::new(match limit {
            QueueLimit::Packets(p) => Limit::Packets(*p as usize),
            QueueLimit::Bytes(b) => Limit::Bytes(*b),
        })),
        QueueSpec::Priority {
            classes,
            limit,
            push_out,
            top,
        } => Box::new(Priority::new(
            *classes as usize,
            *limit as usize,
            *push_out,
            top.map(|(rate_bps, depth_bytes)| TopClassLimit {
                rate_bps,
                depth_bytes,
            }),
        )),
        QueueSpec::Red(p) => Box::new(Red::new(p.with_link(l.rate, p.mean_pkt_size), rng())),
        QueueSpec::Rio(p) => Box::new(Rio::new(p.with_link(l.rate, p.mean_pkt_size), rng())),
        QueueSpec::Codel(p) => Box::new(Codel::new(*p)),
    }
}

/// A TCP connection of the scenario: where to find it after the run.
struct Conn {
    traffic: usize,
    index: u64,
    sender: AgentId,
    flow: FlowId,
}

/// What the summary needs to know about the world beyond its own counters.
#[derive(Default)]
struct Built {
    conns: Vec<Conn>,
    /// Links whose drops are kept per flow (RED and RIO ports).
    tracked: Vec<LinkId>,
    /// The PCN domain, if the scenario has one.
    pcn: Option<super::pcn::PcnRun>,
}

/// Builds the world of a scenario for a run with `seed`.
pub fn build(sc: &Scenario, seed: u64) -> Result<World, String> {
    build_world(sc, seed).map(|(w, _)| w)
}

fn build_world(sc: &Scenario, seed: u64) -> Result<(World, Built), String> {
    let mut w = World::new(seed);
    let mut built = Built::default();
    let warmup = sc.run.warmup;
    for n in &sc.topology.nodes {
        w.net.add_node(n);
    }
    for l in &sc.topology.links {
        let id = w.net.add_link(
            &l.name,
            l.from as u32,
            l.to as u32,
            l.rate,
            l.delay,
            make_queue(l, seed),
        );
        if matches!(l.queue, QueueSpec::Red(_) | QueueSpec::Rio(_)) {
            w.net.links[id as usize].stats.drops.track_flows = true;
            built.tracked.push(id);
        }
        for (i, m) in l.meters.iter().enumerate() {
            let hook: Box<dyn crate::net::PortHook> = match *m {
                MeterSpec::Policer { rate, depth } => {
                    Box::new(Policer::new(rate, depth).track_flows(true))
                }
                MeterSpec::TokenBucket { rate, depth } => {
                    Box::new(TokenBucketProfiler::new(rate, depth))
                }
                MeterSpec::Tsw { target, win, rule } => Box::new(
                    TswProfiler::new(target, win, w.rng(&format!("meter.{}.{i}", l.name)))
                        .with_rule(rule),
                ),
            };
            w.net.add_hook(id, hook);
        }
    }
    let mut sinks: HashMap<usize, u32> = HashMap::new();
    for (ti, t) in sc.traffic.iter().enumerate() {
        let model = match &t.model {
            TrafficModel::Source(m) => Some(m),
            TrafficModel::Tcp(_) => None,
        };
        let sink = match model {
            Some(_) => *sinks.entry(t.to).or_insert_with(|| {
                let name = format!("sink@{}", sc.topology.nodes[t.to]);
                w.add_agent(&name, Box::new(Sink))
            }),
            None => NONE,
        };
        let group = w.flows.add_group(&t.name);
        let mut tmpl = PacketTemplate::new(t.from as u32, t.to as u32, sink);
        tmpl.class = t.class;
        let first_link = if let Some(r) = &t.route {
            let links: Vec<u32> = r
                .windows(2)
                .map(|p| {
                    w.net
                        .link_between(p[0] as u32, p[1] as u32)
                        .expect("validated route")
                })
                .collect();
            let first = links[0];
            tmpl.route = w.net.add_route(links)?;
            first
        } else {
            tmpl.route = NONE;
            w.net.routes_to(t.to as u32);
            w.net.path(t.from as u32, t.to as u32)?[0]
        };
        let model = match &t.model {
            TrafficModel::Tcp(tcp) => {
                for i in 0..t.flows {
                    let name = format!("tcp.{}.{i}", t.name);
                    let mut r = w.rng(&format!("{name}.start"));
                    let start = t.start + (r.uniform() * tcp.start_spread as f64) as Time;
                    let rcfg = TcpReceiverConfig {
                        delayed_ack: tcp.delayed_ack.then_some(DELAYED_ACK),
                        measure_from: warmup,
                        ..TcpReceiverConfig::default()
                    };
                    let rx = w.add_agent(&format!("{name}.rx"), Box::new(TcpReceiver::new(rcfg)));
                    let mut tm = tmpl;
                    tm.dst_agent = rx;
                    let flow = w.flows.open(group, start);
                    let cfg = TcpConfig {
                        packet_size: tcp.packet_size,
                        wnd: tcp.wnd,
                        min_rto: tcp.min_rto,
                        init_rto: tcp.init_rto,
                        tick: tcp.tick,
                        group,
                        start_delay: start,
                        ..TcpConfig::default()
                    };
                    let mut s = TcpRenoSender::new(cfg, tm)
                        .with_flow(flow)
                        .measure_from(warmup);
                    if let Some(p) = &t.profile {
                        let mut m = p.make(w.rng(&format!("{name}.profile")), start);
                        s = s.with_marker(Box::new(move |pkt, now| {
                            m.meter(pkt, now);
                        }));
                    }
                    let sender = w.add_agent(&name, Box::new(s));
                    built.conns.push(Conn {
                        traffic: ti,
                        index: i,
                        sender,
                        flow,
                    });
                }
                continue;
            }
            TrafficModel::Source(m) => m,
        };
        match &t.calls {
            Some(c) => {
                let name = format!("traffic.{}", t.name);
                let mut g = FlowGenerator::new(
                    &name,
                    seed,
                    model.clone(),
                    tmpl,
                    group,
                    c.arrivals,
                    c.holding,
                    t.jitter,
                )
                .measure_from(sc.run.warmup);
                if let Some(s) = c.stop {
                    g = g.stop_arrivals_at(s);
                }
                if let Some(m) = c.max_active {
                    g = g.with_admission(Box::new(MaxActive(m as usize)));
                }
                w.add_agent(&name, Box::new(g));
            }
            None => {
                let mut phase = w.rng(&format!("traffic.{}.phase", t.name));
                let spacing = model.spacing();
                let stop = t.stop.unwrap_or(u64::MAX);
                let shared = model.shared_choices();
                let mut meters: Vec<Box<dyn Meter>> = Vec::new();
                let mut first_flow = NONE;
                for i in 0..t.flows {
                    let mut r = w.rng(&format!("traffic.{}/{i}", t.name));
                    let m = shared[model.pick_index(&mut r)].clone();
                    let flow = w.flows.open(group, t.start);
                    if i == 0 {
                        first_flow = flow;
                    }
                    let offset = t.start + secs(phase.uniform() * spacing);
                    if let Some(p) = &t.profile {
                        let prng = w.rng(&format!("traffic.{}/{i}.profile", t.name));
                        meters.push(p.make(prng, offset));
                    }
                    let s = Source::with_shared(m, tmpl, flow, offset, stop, t.jitter, r);
                    w.add_agent("", Box::new(s));
                }
                if !meters.is_empty() {
                    let hook = FlowProfiler::new(&t.name, first_flow, meters).measure_from(warmup);
                    w.net.add_hook(first_link, Box::new(hook));
                }
            }
        }
    }
    for m in &sc.metrics {
        let probe = match m.kind {
            MetricKind::LinkThroughput {
                link,
                class,
                pcn_only,
            } => Probe::LinkThroughput {
                link: link as u32,
                class,
                pcn_only,
            },
            MetricKind::QueueLength { link } => Probe::QueueLength { link: link as u32 },
            MetricKind::GroupThroughput { traffic } => Probe::GroupThroughput {
                group: traffic as u32,
            },
            MetricKind::QueueAverage { link, in_only } => {
                let id = w.rec.id(&m.name, "packets");
                let every = m.interval;
                w.schedule_action(every, move |w| {
                    sample_queue_average(w, link as LinkId, in_only, every, id)
                });
                continue;
            }
        };
        w.add_sampler(&m.name, probe, m.interval);
    }
    built.pcn = super::pcn::build(sc, &mut w)?;
    if warmup > 0 {
        w.set_warmup(warmup);
        let tracked = built.tracked.clone();
        w.schedule_action(warmup, move |w| forget_per_flow_counts(w, &tracked));
    }
    Ok((w, built))
}

/// Samples a RED or RIO port's average queue into the series `id`, then schedules the
/// next sample `every` later. (A chain of world actions rather than a sampler: the value
/// lives inside the queue discipline.)
fn sample_queue_average(w: &mut World, link: LinkId, in_only: bool, every: Time, id: usize) {
    let now = w.sched.now();
    let q = w.net.links[link as usize].qdisc.as_any_mut();
    let v = if let Some(r) = q.downcast_mut::<Rio>() {
        if in_only {
            r.avg_in()
        } else {
            r.avg()
        }
    } else if let Some(r) = q.downcast_mut::<Red>() {
        r.avg()
    } else {
        f64::NAN
    };
    w.rec.push(id, now, v);
    w.schedule_action(now + every, move |w| {
        sample_queue_average(w, link, in_only, every, id)
    });
}

/// At the end of the warm-up: per-flow drop and policing counts start again from zero.
fn forget_per_flow_counts(w: &mut World, tracked: &[LinkId]) {
    for &l in tracked {
        w.net.links[l as usize].stats.drops.by_flow.clear();
    }
    for l in w.net.links.iter_mut() {
        for h in l.hooks.iter_mut() {
            if let Some(p) = h.as_any_mut().downcast_mut::<Policer>() {
                p.reset_flows();
            }
        }
    }
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// Flat summary: `link.NAME.x`, `group.NAME.x`, `series.NAME.mean`, ...
    pub summary: Map<String, Value>,
    /// Sampled series.
    pub series: Vec<Series>,
    /// Events executed.
    pub events: u64,
    /// Simulated time reached, seconds.
    pub sim_time_s: f64,
    /// Wall-clock time of the run (build included), seconds.
    pub wall_s: f64,
    /// Seed used.
    pub seed: u64,
    /// Scenario hash.
    pub scenario_hash: String,
    /// True if the run was stopped early by the progress callback.
    pub interrupted: bool,
}

/// Builds and runs a scenario. `progress` receives the fraction of simulated time done
/// and may return false to stop the run early.
pub fn run(
    sc: &Scenario,
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, String> {
    let t0 = std::time::Instant::now();
    let seed = seed.unwrap_or(sc.run.seed);
    let (mut w, built) = build_world(sc, seed)?;
    let end: Time = sc.run.duration;
    let done = w.run_with_progress(end, progress);
    let mut summary = w.summary();
    diffserv_summary(sc, &mut w, &built, &mut summary);
    super::pcn::finish(sc, &mut w, built.pcn.as_ref(), &mut summary);
    let series = w.series().into_iter().cloned().collect();
    Ok(RunOutput {
        summary,
        series,
        events: w.sched.processed(),
        sim_time_s: to_secs(w.sched.now()),
        wall_s: t0.elapsed().as_secs_f64(),
        seed,
        scenario_hash: sc.hash.clone(),
        interrupted: !done,
    })
}

fn pct(part: u64, whole: u64) -> Value {
    if whole == 0 {
        Value::Null
    } else {
        json!(100.0 * part as f64 / whole as f64)
    }
}

/// Adds the per-group (and per-connection) DiffServ figures, all counted after the
/// warm-up: drops split into IN early / IN overflow / OUT at RED and RIO ports, IN
/// packets seen and demoted by each policer, IN packets sent by host profiles. Only for
/// scenarios that use the DiffServ mechanisms (a RED or RIO queue, a meter on a link or
/// a host profile): other summaries stay exactly those of the world.
fn diffserv_summary(sc: &Scenario, w: &mut World, built: &Built, m: &mut Map<String, Value>) {
    let diffserv = !built.tracked.is_empty()
        || sc.traffic.iter().any(|t| t.profile.is_some())
        || sc.topology.links.iter().any(|l| !l.meters.is_empty());
    if !diffserv {
        return;
    }
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
    for &l in &built.tracked {
        let link = &w.net.links[l as usize];
        let mut per_group = vec![FlowDrops::default(); ngroups];
        for (f, d) in link.stats.drops.by_flow.iter().enumerate() {
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
    for link in w.net.links.iter_mut() {
        let lname = link.name.clone();
        for h in link.hooks.iter_mut() {
            let any = h.as_any_mut();
            if let Some(p) = any.downcast_mut::<Policer>() {
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
            } else if let Some(p) = any.downcast_mut::<FlowProfiler>() {
                if let Some(g) = w.flows.group_id(p.label()) {
                    let slot = group_in_sent[g as usize].get_or_insert(0);
                    *slot += p.in_pkts;
                }
            }
        }
    }
    for c in &built.conns {
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
