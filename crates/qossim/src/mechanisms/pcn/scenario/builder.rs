//! A [`PcnSpec`] built into a world: the domain, its aggregates and their call processes.

use super::*;
use crate::world::AgentHandle;

/// An aggregate of a built domain.
#[derive(Clone, Debug)]
pub(super) struct IeaRun {
    pub(super) name: String,
    pub(super) agent: AgentHandle<FlowGenerator>,
    /// Bottlenecks crossed (indices into the scenario's list), in path order.
    pub(super) crosses: Vec<usize>,
    /// Signalling round trip.
    pub(super) round_trip: Time,
}

/// Flows active at the failure instant, per aggregate.
pub(super) type Snapshot = Rc<RefCell<Option<Vec<Vec<ActiveCall>>>>>;

/// A PCN domain built into a world: what the summary needs after the run.
pub(super) struct PcnRun {
    pub(super) spec: PcnSpec,
    pub(super) handles: PcnHandles,
    pub(super) links: Vec<LinkId>,
    pub(super) ra: Vec<Option<u64>>,
    pub(super) rt: Vec<Option<u64>>,
    pub(super) ieas: Vec<IeaRun>,
    pub(super) snapshot: Snapshot,
    pub(super) iea_throughput: Vec<usize>,
}

/// The flows of each aggregate active at `now`.
pub(super) fn active_now(
    w: &mut World,
    agents: &[AgentHandle<FlowGenerator>],
) -> Vec<Vec<ActiveCall>> {
    let now = w.sched.now();
    agents
        .iter()
        .map(|&a| {
            w.agents
                .get_mut::<FlowGenerator>(a)
                .map_or_else(Vec::new, |ing| {
                    ing.active_calls()
                        .iter()
                        .filter(|f| f.end > now)
                        .copied()
                        .collect()
                })
        })
        .collect()
}

/// The ingress configuration of an aggregate whose call rate is `lambda`.
pub(super) fn ingress_config(
    spec: &PcnSpec,
    iea: &PcnIea,
    lambda: f64,
    warmup: Time,
) -> IngressConfig {
    let mut cfg = IngressConfig::new(iea.model.clone(), iea.arrivals.arrivals(lambda));
    cfg.holding = iea.holding;
    cfg.jitter = iea.jitter;
    cfg.admission_control = spec.admission.is_some();
    if let Some(a) = &spec.admission {
        cfg.cle_threshold = a.cle_threshold;
    }
    if let Some(t) = &spec.termination {
        if t.stop_arrivals {
            cfg.stop_arrivals = t.t_fail;
        }
        cfg.rounding = t.rounding;
        cfg.rate_measurement = t.rate_measurement;
        cfg.ignore_stale_reports = t.ignore_stale_reports;
    }
    cfg.measure_from = warmup;
    cfg.record_active = spec.iea_series;
    cfg.record_terminations = spec.per_iea || spec.iea_series;
    cfg
}

/// Builds the scenario's PCN domain into `w` (after its topology and traffic).
pub(super) fn build(spec: &PcnSpec, sc: &Scenario, w: &mut World) -> Result<PcnRun, String> {
    let links: Vec<LinkId> = spec.bottlenecks.iter().map(|&l| l as LinkId).collect();
    let link_bps: Vec<u64> = links
        .iter()
        .map(|&l| w.net.links[l as usize].rate_bps)
        .collect();
    let ra: Vec<Option<u64>> = link_bps
        .iter()
        .map(|&r| spec.admission.as_ref().map(|a| a.ra.on(r)))
        .collect();
    let rt: Vec<Option<u64>> = link_bps
        .iter()
        .map(|&r| spec.termination.as_ref().map(|t| t.rt.on(r)))
        .collect();
    for (i, (&a, &t)) in ra.iter().zip(&rt).enumerate() {
        let name = &w.net.links[links[i] as usize].name;
        if a == Some(0) || t == Some(0) {
            return Err(format!(
                "pcn: the configured rate on {name} rounds to 0 bit/s"
            ));
        }
    }
    // Paths and demands.
    let mut ieas = Vec::new();
    let mut configs = Vec::new();
    for iea in &spec.ieas {
        let path = w.net.path(iea.ingress as NodeId, iea.egress as NodeId)?;
        let crosses: Vec<usize> = path
            .iter()
            .filter_map(|l| links.iter().position(|b| b == l))
            .collect();
        let first = crosses.first().copied();
        let hold = iea.holding.mean();
        let mean = iea.model.mean_bps();
        let no_bottleneck = || {
            format!(
                "pcn: aggregate {} crosses no PCN bottleneck, so its demand cannot be relative to one; give `call_rate` or an `offered` rate",
                iea.name
            )
        };
        let lambda = match iea.demand {
            Demand::Overload(k) => {
                let b = first.ok_or_else(no_bottleneck)?;
                let ra_b = ra[b].expect("overload needs admission (validated)");
                call_rate_for_overload(k * iea.share, ra_b as f64, mean, hold)
            }
            Demand::Offered(RateOrFraction::Fraction(f)) => {
                let b = first.ok_or_else(no_bottleneck)?;
                f * iea.share * link_bps[b] as f64 / (mean * hold)
            }
            Demand::Offered(RateOrFraction::Rate(r)) => r as f64 * iea.share / (mean * hold),
            Demand::CallRate(x) => x,
        };
        configs.push(ingress_config(spec, iea, lambda, sc.run.warmup));
        ieas.push((iea, crosses));
    }
    let (cle, sar_period) = (
        spec.admission
            .as_ref()
            .map_or(CleMode::per_packet(), |a| a.cle),
        spec.termination
            .as_ref()
            .map_or(100 * PS_PER_MS, |t| t.sar_period),
    );
    let mut dom = PcnDomain::new(cle)
        .sar_period(sar_period)
        .sample_interval(spec.sample_interval);
    for (b, &l) in links.iter().enumerate() {
        if let (Some(a), Some(r)) = (&spec.admission, ra[b]) {
            dom = dom.admission_marking(l, r, a.thresholds, a.curve);
        }
        if let Some(t) = &spec.termination {
            let depth = match t.depth {
                Depth::Bytes(d) => d,
                Depth::Packets(n) => {
                    let size = ieas
                        .iter()
                        .filter(|(_, c)| c.contains(&b))
                        .map(|(a, _)| max_packet_bytes(&a.model))
                        .max()
                        .unwrap_or(1500);
                    n * size as u64
                }
            };
            dom = dom.termination_marking(l, t.before.on(link_bps[b]), depth);
        }
    }
    for ((iea, _), cfg) in ieas.iter().zip(configs) {
        dom = dom.iea_spec(IeaSpec {
            name: iea.name.clone(),
            ingress: iea.ingress as NodeId,
            egress: iea.egress as NodeId,
            route: None,
            config: cfg,
        });
    }
    let handles = dom.build(w)?;
    let mut iea_throughput = Vec::new();
    if spec.iea_series {
        for h in &handles.ingresses {
            let probe = Probe::GroupThroughput { group: h.group };
            let name = format!("pcn.{}.throughput", h.name);
            iea_throughput.push(w.add_sampler(&name, probe, spec.sample_interval));
        }
    }
    let snapshot: Snapshot = Rc::new(RefCell::new(None));
    if let Some(t) = &spec.termination {
        let agents: Vec<_> = handles.ingresses.iter().map(|h| h.agent).collect();
        let snap = snapshot.clone();
        w.schedule_action(t.t_fail, move |w: &mut World| {
            *snap.borrow_mut() = Some(active_now(w, &agents));
        });
        let rates = links
            .iter()
            .zip(&rt)
            .map(|(&l, r)| {
                let m = handles
                    .termination_marker_on(l)
                    .expect("termination marker");
                (m, r.expect("termination rate"))
            })
            .collect();
        schedule_termination_rates(w, t.t_fail, rates);
    }
    let runs = ieas
        .iter()
        .zip(&handles.ingresses)
        .map(|((_, crosses), h)| IeaRun {
            name: h.name.clone(),
            agent: h.agent,
            crosses: crosses.clone(),
            round_trip: h.signalling.round_trip(),
        })
        .collect();
    Ok(PcnRun {
        spec: spec.clone(),
        handles,
        links,
        ra,
        rt,
        ieas: runs,
        snapshot,
        iea_throughput,
    })
}

// ---------------------------------------------------------------------------------------
// Summary

pub(super) fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// An order of the bottlenecks consistent with every path (the beat-down calculator
/// walks the chain in that order), or `None` if the paths disagree.
pub(super) fn chain_order(nb: usize, paths: &[Vec<usize>]) -> Option<Vec<usize>> {
    let mut after = vec![Vec::new(); nb];
    let mut indeg = vec![0usize; nb];
    for p in paths {
        for w in p.windows(2) {
            if !after[w[0]].contains(&w[1]) {
                after[w[0]].push(w[1]);
                indeg[w[1]] += 1;
            }
        }
    }
    let mut order = Vec::new();
    let mut ready: Vec<usize> = (0..nb).rev().filter(|&b| indeg[b] == 0).collect();
    while let Some(b) = ready.pop() {
        order.push(b);
        for &c in after[b].clone().iter().rev() {
            indeg[c] -= 1;
            if indeg[c] == 0 {
                ready.push(c);
            }
        }
    }
    (order.len() == nb).then_some(order)
}

/// Per-aggregate termination figures.
#[derive(Clone, Debug, Default)]
pub(super) struct Term {
    pub(super) load_flows: usize,
    pub(super) load_bps: f64,
    pub(super) terminated_flows: usize,
    pub(super) terminated_bps: f64,
}

impl MechanismRun for PcnRun {
    /// Adds the `pcn.*` summary keys and derived series after a run.
    fn finish(&mut self, sc: &Scenario, w: &mut World, m: &mut Map<String, Value>) {
        finish(sc, w, self, m);
    }
}
