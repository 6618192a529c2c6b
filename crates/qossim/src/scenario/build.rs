//! Turning a validated [`Scenario`] into a [`World`] and running it.

use super::topology::QueueSpec;
use super::units::QueueLimit;
use super::{MetricKind, Scenario};
use crate::metrics::{Probe, Series};
use crate::net::NONE;
use crate::queue::{DropTail, Limit, Priority, QueueDisc, TopClassLimit};
use crate::time::{secs, to_secs, Time};
use crate::traffic::{FlowGenerator, MaxActive, PacketTemplate, Sink, Source};
use crate::world::World;
use serde_json::{Map, Value};
use std::collections::HashMap;

fn make_queue(q: &QueueSpec) -> Box<dyn QueueDisc> {
    match q {
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
    }
}

/// Builds the world of a scenario for a run with `seed`.
pub fn build(sc: &Scenario, seed: u64) -> Result<World, String> {
    let mut w = World::new(seed);
    for n in &sc.topology.nodes {
        w.net.add_node(n);
    }
    for l in &sc.topology.links {
        w.net.add_link(
            &l.name,
            l.from as u32,
            l.to as u32,
            l.rate,
            l.delay,
            make_queue(&l.queue),
        );
    }
    let mut sinks: HashMap<usize, u32> = HashMap::new();
    for t in &sc.traffic {
        let sink = *sinks.entry(t.to).or_insert_with(|| {
            let name = format!("sink@{}", sc.topology.nodes[t.to]);
            w.add_agent(&name, Box::new(Sink))
        });
        let group = w.flows.add_group(&t.name);
        let mut tmpl = PacketTemplate::new(t.from as u32, t.to as u32, sink);
        tmpl.class = t.class;
        if let Some(r) = &t.route {
            let links: Vec<u32> = r
                .windows(2)
                .map(|p| {
                    w.net
                        .link_between(p[0] as u32, p[1] as u32)
                        .expect("validated route")
                })
                .collect();
            tmpl.route = w.net.add_route(links)?;
        } else {
            tmpl.route = NONE;
            w.net.routes_to(t.to as u32);
        }
        match &t.calls {
            Some(c) => {
                let name = format!("traffic.{}", t.name);
                let mut g = FlowGenerator::new(
                    &name,
                    seed,
                    t.model.clone(),
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
                let spacing = t.model.spacing();
                let stop = t.stop.unwrap_or(u64::MAX);
                let shared = t.model.shared_choices();
                for i in 0..t.flows {
                    let mut r = w.rng(&format!("traffic.{}/{i}", t.name));
                    let model = shared[t.model.pick_index(&mut r)].clone();
                    let flow = w.flows.open(group, t.start);
                    let offset = t.start + secs(phase.uniform() * spacing);
                    let s = Source::with_shared(model, tmpl, flow, offset, stop, t.jitter, r);
                    w.add_agent("", Box::new(s));
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
        };
        w.add_sampler(&m.name, probe, m.interval);
    }
    if sc.run.warmup > 0 {
        w.set_warmup(sc.run.warmup);
    }
    Ok(w)
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
    let mut w = build(sc, seed)?;
    let end: Time = sc.run.duration;
    let done = w.run_with_progress(end, progress);
    let summary = w.summary();
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
