//! Turning a validated [`Scenario`] into a [`World`] and running it.

use super::topology::LinkSpec;
use super::{
    BuiltCore, Connection, LinkMetrics, MechanismRun, MeterSpec, MetricKind, Scenario, TrafficModel,
};
use crate::meter::{FlowProfiler, Meter, Policer, TokenBucketProfiler, TswProfiler};
use crate::metrics::{Probe, Series};
use crate::net::{LinkId, NONE};
use crate::queue::{LinkEnv, QueueDisc};
use crate::time::{secs, to_secs, Time, PS_PER_MS};
use crate::trace::{TraceFile, Tracer};
use crate::traffic::{FlowGenerator, MaxActive, PacketTemplate, Sink, Source};
use crate::transport::{TcpConfig, TcpReceiver, TcpReceiverConfig, TcpRenoSender};
use crate::world::World;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

/// ns-2's delayed-ACK timer.
const DELAYED_ACK: Time = 100 * PS_PER_MS;

fn make_queue(l: &LinkSpec, seed: u64) -> Box<dyn QueueDisc> {
    let rng = || crate::rng::Rng::stream(seed, &format!("queue.{}", l.name));
    let kind = crate::queue::discipline(l.queue.kind()).expect("a registered queue kind");
    let env = LinkEnv {
        rate_bps: l.rate,
        rng: &rng,
    };
    (kind.build)(&l.queue, &env)
}

/// Builds the world of a scenario for a run with `seed`.
pub fn build(sc: &Scenario, seed: u64) -> Result<World, String> {
    build_world(sc, seed, None, None).map(|(w, _)| w)
}

/// Flows built between two calls of a [`BuildProgress`].
pub const BUILD_PROGRESS_STEP: u64 = 1 << 16;

/// Told `(flows built, flows to build)` while a run's world is built: every
/// [`BUILD_PROGRESS_STEP`] flows and once at the end, only for scenarios of at least that
/// many static flows and connections (smaller ones build in milliseconds).
#[derive(Clone)]
pub struct BuildProgress(pub Arc<dyn Fn(u64, u64) + Send + Sync>);

impl std::fmt::Debug for BuildProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BuildProgress")
    }
}

/// Asked every [`BUILD_PROGRESS_STEP`] flows while a run's world is built: true stops
/// the build (and the run fails with "interrupted"), so that a signal is honoured during
/// the setup of a scenario of millions of flows.
#[derive(Clone)]
pub struct BuildStop(pub Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for BuildStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BuildStop")
    }
}

/// Counts the flows built, tells a [`BuildProgress`] and asks a [`BuildStop`] every step.
struct BuildCount<'a> {
    done: u64,
    total: u64,
    tell: Option<&'a BuildProgress>,
    stop: Option<&'a BuildStop>,
}

impl BuildCount<'_> {
    #[inline]
    fn one(&mut self) -> Result<(), String> {
        self.done += 1;
        if self.done.is_multiple_of(BUILD_PROGRESS_STEP) {
            if let Some(t) = self.tell {
                (t.0)(self.done, self.total);
            }
            if self.stop.is_some_and(|s| (s.0)()) {
                return Err(format!(
                    "interrupted while building ({} of {} flows built)",
                    self.done, self.total
                ));
            }
        }
        Ok(())
    }
}

/// Static flows and TCP connections of a scenario: what building costs.
fn flows_to_build(sc: &Scenario) -> u64 {
    sc.traffic
        .iter()
        .filter(|t| t.calls.is_none())
        .map(|t| t.flows)
        .sum()
}

fn build_world(
    sc: &Scenario,
    seed: u64,
    progress: Option<&BuildProgress>,
    stop: Option<&BuildStop>,
) -> Result<(World, Vec<Box<dyn MechanismRun>>), String> {
    let total = flows_to_build(sc);
    let mut count = BuildCount {
        done: 0,
        total,
        tell: progress.filter(|_| total >= BUILD_PROGRESS_STEP),
        stop,
    };
    let mut w = World::new(seed);
    let mut built = BuiltCore::default();
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
        for (i, m) in l.meters.iter().enumerate() {
            match *m {
                MeterSpec::Policer { rate, depth } => {
                    let p = Policer::new(rate, depth).track_flows(true);
                    built.policers.push(w.net.add_hook(id, Box::new(p)));
                }
                MeterSpec::TokenBucket { rate, depth } => {
                    w.net
                        .add_hook(id, Box::new(TokenBucketProfiler::new(rate, depth)));
                }
                MeterSpec::Tsw { target, win, rule } => {
                    let rng = w.rng(&format!("meter.{}.{i}", l.name));
                    let p = TswProfiler::new(target, win, rng).with_rule(rule);
                    w.net.add_hook(id, Box::new(p));
                }
            }
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
                w.add_agent(&name, Box::new(Sink)).id()
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
            match w.net.next_hop(t.from as u32, t.to as u32) {
                Some(l) => l,
                // The whole path, for the error that names where it breaks.
                None => w.net.path(t.from as u32, t.to as u32)?[0],
            }
        };
        let model = match &t.model {
            TrafficModel::Tcp(tcp) => {
                for i in 0..t.flows {
                    let name = format!("tcp.{}.{i}", t.name);
                    let mut r = w.rng(&format!("{name}.start"));
                    let start = t.start + (r.uniform() * tcp.start_spread as f64) as Time;
                    let rcfg = TcpReceiverConfig {
                        delayed_ack: tcp.delayed_ack.then_some(DELAYED_ACK),
                        dctcp: matches!(tcp.congestion, crate::transport::Congestion::Dctcp(_)),
                        sack: tcp.sack,
                        timestamps: tcp.timestamps,
                        ..TcpReceiverConfig::default()
                    };
                    let rx = w.add_agent(&format!("{name}.rx"), Box::new(TcpReceiver::new(rcfg)));
                    let mut tm = tmpl;
                    tm.dst_agent = rx.id();
                    let flow = w.flows.open(group, start);
                    let cfg = TcpConfig {
                        packet_size: tcp.packet_size,
                        wnd: tcp.wnd,
                        min_rto: tcp.min_rto,
                        init_rto: tcp.init_rto,
                        tick: tcp.tick,
                        group,
                        start_delay: start,
                        congestion: tcp.congestion,
                        ecn: tcp.ecn,
                        sack: tcp.sack,
                        timestamps: tcp.timestamps,
                        ..TcpConfig::default()
                    };
                    let traced = sc
                        .metrics
                        .iter()
                        .any(|m| m.kind == MetricKind::TcpWindow { traffic: ti });
                    let mut s = TcpRenoSender::new(cfg, tm).with_flow(flow).trace(traced);
                    if let Some(p) = &t.profile {
                        let mut m = p.make(w.rng(&format!("{name}.profile")), start);
                        s = s.with_marker(Box::new(move |pkt, now| {
                            m.meter(pkt, now);
                        }));
                    }
                    let sender = w.add_agent(&name, Box::new(s));
                    count.one()?;
                    built.connections.push(Connection {
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
                );
                if let Some(s) = c.stop {
                    g = g.stop_arrivals_at(s);
                }
                if t.start > 0 {
                    g = g.start_arrivals_at(t.start);
                }
                g = g.with_per_flow(t.per_flow);
                if let Some(m) = c.max_active {
                    g = g.with_admission(Box::new(MaxActive(m as usize)));
                }
                built.generators.push((ti, w.add_agent(&name, Box::new(g))));
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
                    let flow = if t.per_flow {
                        w.flows.open(group, t.start)
                    } else {
                        w.flows.open_shared(group, t.start)
                    };
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
                    count.one()?;
                }
                if !meters.is_empty() {
                    let hook = FlowProfiler::new(&t.name, first_flow, meters);
                    built
                        .profilers
                        .push(w.net.add_hook(first_link, Box::new(hook)));
                }
            }
        }
    }
    for m in &sc.metrics {
        let probe = match m.kind {
            MetricKind::LinkThroughput {
                link,
                class,
                marked,
            } => Probe::LinkThroughput {
                link: link as u32,
                class,
                marked: match marked {
                    Some((name, mask)) => Some(w.net.count_marked(link as u32, name, mask)?),
                    None => None,
                },
            },
            MetricKind::QueueLength { link } => Probe::QueueLength { link: link as u32 },
            MetricKind::GroupThroughput { traffic } => Probe::GroupThroughput {
                group: traffic as u32,
            },
            MetricKind::TcpWindow { .. } => continue, // recorded by the connections
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
    let mut runs = Vec::with_capacity(sc.mechanisms.len());
    for m in &sc.mechanisms {
        runs.push(m.build(sc, &mut w, &built)?);
    }
    if warmup > 0 {
        w.set_warmup(warmup);
    }
    if let Some(t) = count.tell {
        (t.0)(count.done, count.total);
    }
    Ok((w, runs))
}

/// Samples a RED or RIO port's average queue into the series `id`, then schedules the
/// next sample `every` later. (A chain of world actions rather than a sampler: the value
/// lives inside the queue discipline.)
fn sample_queue_average(w: &mut World, link: LinkId, in_only: bool, every: Time, id: usize) {
    let now = w.sched.now();
    let v = w.net.links[link as usize]
        .qdisc
        .average_queue(in_only)
        .unwrap_or(f64::NAN);
    w.rec.push(id, now, v);
    w.schedule_action(now + every, move |w| {
        sample_queue_average(w, link, in_only, every, id)
    });
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
    /// The raw packet-trace files written (one per `[[trace]]` entry).
    pub traces: Vec<TraceFile>,
    /// Link names by index (to read trace records); empty when nothing was traced.
    pub link_names: Vec<String>,
    /// Node names by index (to read trace records); empty when nothing was traced.
    pub node_names: Vec<String>,
    /// The flows that carry TCP (to write trace headers); empty when nothing was traced.
    pub tcp_flows: Vec<u32>,
    /// The event-trace hash (fingerprint mode only): time, target and kind of every
    /// event executed, in order.
    pub trace_hash: Option<u64>,
}

/// Settings of one run that are not part of the scenario.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Directory for raw trace files (default: a new directory under the system's
    /// temporary directory).
    pub trace_dir: Option<PathBuf>,
    /// Fingerprint mode: keep the event-trace hash and stop after this many events (or
    /// at the end of the run, whichever comes first).
    pub fingerprint_events: Option<u64>,
    /// Check the run's bookkeeping at its end ([`World::check_invariants`]); always on in
    /// debug builds. A violation fails the run.
    pub check_invariants: bool,
    /// Memory the run may use, bytes (default: what the machine reports available); a
    /// scenario estimated to need more is refused before it is built.
    pub memory_available: Option<u64>,
    /// Told how building the world advances (scenarios of many flows).
    pub build_progress: Option<BuildProgress>,
    /// Asked while the world is built whether to stop (a signal arrived).
    pub build_stop: Option<BuildStop>,
}

/// Bytes of memory a link costs in a run (its port, queue, counters and routes), as
/// measured on a 100 000-link chain.
pub const BYTES_PER_LINK: u64 = 2_400;
/// Bytes of memory a static flow costs at least (its source, slot and timer, measured on
/// 100 000 idle CBR flows sharing one record: 182 B; a record of its own adds 56 B).
pub const BYTES_PER_FLOW: u64 = 180;

/// An estimate of the memory a scenario's run needs, bytes: its links, static flows,
/// traffic entries, calls, queued packets and sampled series
/// ([`super::budget::total_bytes`]).
pub fn memory_estimate(sc: &Scenario) -> u64 {
    super::budget::total_bytes(sc)
}

/// Memory the machine reports available (Linux `MemAvailable`), or the memory budget
/// ([`super::budget::memory_budget`]) when that is smaller or set explicitly, bytes, if
/// known.
fn memory_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok();
    let avail = text.as_deref().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    });
    if std::env::var_os(super::budget::BUDGET_ENV).is_some() {
        // A budget set explicitly replaces the machine's figures.
        if let Some((b, _)) = super::budget::memory_budget() {
            return Some(b);
        }
    }
    let budget = super::budget::memory_budget().map(|(b, _)| b);
    match (avail, budget) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Builds and runs a scenario. `progress` receives the fraction of simulated time done
/// and may return false to stop the run early.
pub fn run(
    sc: &Scenario,
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, String> {
    run_with(sc, seed, progress, &RunOptions::default())
}

/// Environment variable: the most bytes one store of pending events of a run may grow
/// to (a size, e.g. `64KiB`; see [`crate::engine::set_event_memory_limit`]). Growing
/// beyond it fails as when memory runs out: the run stops with an out-of-memory error.
/// For tests of the whole process; unset in normal use.
pub const EVENT_MEMORY_ENV: &str = "QOSSIM_EVENT_MEMORY_LIMIT";

/// [`run`] with options (where traces go).
pub fn run_with(
    sc: &Scenario,
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
    options: &RunOptions,
) -> Result<RunOutput, String> {
    let t0 = std::time::Instant::now();
    let seed = seed.unwrap_or(sc.run.seed);
    crate::metrics::take_growth_failure();
    // A stand-in for memory running out while events pile up, for tests of processes
    // (see `EVENT_MEMORY_ENV`); unset, the stores of events grow as memory allows.
    if let Some(b) = std::env::var(EVENT_MEMORY_ENV)
        .ok()
        .and_then(|v| super::units::parse_size(&v).ok())
    {
        crate::engine::set_event_memory_limit(Some(usize::try_from(b).unwrap_or(usize::MAX)));
    }
    if let Some(avail) = options.memory_available.or_else(memory_available) {
        let need = memory_estimate(sc);
        if need > avail {
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            return Err(format!(
                "{}: this scenario needs about {:.2} GiB (its links, flows, entries, queued \
                 packets and series) and {:.2} GiB are available; make it smaller or use flow \
                 arrivals",
                sc.file,
                gib(need),
                gib(avail)
            ));
        }
    }
    let (mut w, mut runs) = build_world(
        sc,
        seed,
        options.build_progress.as_ref(),
        options.build_stop.as_ref(),
    )?;
    match &sc.run.link_metrics {
        LinkMetrics::All => {}
        LinkMetrics::None => w.set_link_summary(vec![false; w.net.links.len()]),
        LinkMetrics::Only(links) => {
            let mut report = vec![false; w.net.links.len()];
            for &l in links {
                report[l] = true;
            }
            w.set_link_summary(report);
        }
    }
    let tracer = if sc.traces.is_empty() {
        None
    } else {
        let dir = options.trace_dir.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!(
                "qossim-trace-{}-{}-{seed}",
                std::process::id(),
                sc.hash
            ))
        });
        let t = Rc::new(RefCell::new(Tracer::create(
            &sc.traces,
            &dir,
            sc.run.duration,
        )?));
        w.net.attach_tracer(t.clone());
        Some(t)
    };
    if options.check_invariants || cfg!(debug_assertions) {
        w.enable_flow_conservation();
    }
    let end: Time = sc.run.duration;
    let done = match options.fingerprint_events {
        Some(max) => {
            w.enable_trace_hash();
            w.run_limited(end, max);
            true
        }
        None => w.run_with_progress(end, progress),
    };
    if let Some(why) = crate::metrics::take_growth_failure() {
        return Err(format!(
            "{}: {why} at {} s of simulated time; the run was stopped",
            sc.file,
            to_secs(w.sched.now())
        ));
    }
    if options.check_invariants || cfg!(debug_assertions) {
        let broken = w.check_invariants();
        if !broken.is_empty() {
            return Err(format!(
                "{}: invariant violated: {}",
                sc.file,
                broken.join("; ")
            ));
        }
    }
    let mut summary = w.summary();
    for r in runs.iter_mut() {
        r.finish(sc, &mut w, &mut summary);
    }
    let mut series: Vec<_> = w.series().into_iter().cloned().collect();
    series.extend(w.delay_cdf_series());
    let traces = match &tracer {
        Some(t) => t.borrow_mut().finish()?,
        None => Vec::new(),
    };
    let (link_names, node_names, tcp_flows) = if traces.is_empty() {
        (Vec::new(), Vec::new(), Vec::new())
    } else {
        let tcp: Vec<u32> = sc
            .traffic
            .iter()
            .filter(|t| matches!(t.model, TrafficModel::Tcp(_)))
            .filter_map(|t| w.flows.group_id(&t.name))
            .collect();
        (
            w.net.links.iter().map(|l| l.name.clone()).collect(),
            w.net.nodes.iter().map(|n| n.name.clone()).collect(),
            (0..w.flows.recs.len() as u32)
                .filter(|&f| tcp.contains(&w.flows.recs[f as usize].group))
                .collect(),
        )
    };
    Ok(RunOutput {
        summary,
        series,
        events: w.sched.processed(),
        sim_time_s: to_secs(w.sched.now()),
        wall_s: t0.elapsed().as_secs_f64(),
        seed,
        scenario_hash: sc.hash.clone(),
        interrupted: !done,
        traces,
        link_names,
        node_names,
        tcp_flows,
        trace_hash: w.trace_hash(),
    })
}
