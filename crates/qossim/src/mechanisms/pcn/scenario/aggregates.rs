//! The `[[pcn.iea]]` aggregates and their flows, read or generated (`[pcn.traffic]`),
//! through their declarations ([`params::IEA`], [`params::TRAFFIC`]).

use super::*;
use crate::decl::{self, Section};
use crate::mechanisms::pcn::params::{self, IEA, TRAFFIC};

/// The keys a table of aggregates accepts: its declared ones and those of the traffic
/// models its `model` may name.
pub fn keys_with_model(s: &Section) -> Vec<&'static str> {
    let mut known = crate::traffic::model_keys();
    known.extend(
        s.keys()
            .into_iter()
            .filter(|k| !known.contains(k))
            .collect::<Vec<_>>(),
    );
    known
}

/// What every aggregate (or the template) says about its flows.
pub(super) struct Flows {
    pub(super) model: SourceModel,
    pub(super) arrivals: CallArrivals,
    pub(super) demand: Demand,
    pub(super) holding: Holding,
    pub(super) jitter: f64,
}

/// Reads the keys of `[pcn.traffic]` or of a `[[pcn.iea]]` entry (`s`, their
/// declaration) that describe the flows.
pub(super) fn read_flows(
    cx: &Cx,
    t: &Tbl,
    s: &Section,
    base: &Path,
    admission: bool,
) -> Option<Flows> {
    let model = if t.has("model") {
        read_model(cx, t, base).and_then(|m| match m {
            TrafficModel::Source(s) => Some(s),
            TrafficModel::Tcp(_) => {
                t.error(
                    cx,
                    "model",
                    "PCN aggregates carry open-loop real-time flows; model \"tcp\" is not supported here",
                );
                None
            }
        })
    } else {
        cx.error(
            t.line(),
            &t.key_path("model"),
            "missing (required: e.g. \"CBR\", \"VBR\", \"MIX\", \"SVD\" or \"trace\")",
        );
        None
    };
    let arrivals = value(cx, t, s, "arrivals").map(|a| match a.as_str() {
        "batch" => CallArrivals::Batch,
        _ => CallArrivals::Poisson,
    });
    // A rule of the reader: exactly one demand.
    let given: Vec<&str> = params::DEMAND.into_iter().filter(|k| t.has(k)).collect();
    let demand_of = |key| declared(cx, t, s, key).and_then(|v| v);
    let demand = match given.as_slice() {
        [] => {
            cx.error(
                t.line(),
                &t.key_path("overload"),
                "missing: give `overload` (demand as a multiple of ra), `offered` (a fraction of the bottleneck rate, or a rate) or `call_rate` (e.g. \"2/s\")",
            );
            None
        }
        ["overload"] => demand_of("overload").and_then(|k| {
            if !admission {
                t.error(
                    cx,
                    "overload",
                    "is a multiple of pcn.ra, which is not given; use `offered` or `call_rate`",
                );
                None
            } else {
                Some(Demand::Overload(k.as_f64()))
            }
        }),
        ["offered"] => {
            demand_of("offered").map(|v| Demand::Offered(RateOrFraction::from_value(&v)))
        }
        [_] => demand_of("call_rate").map(|v| Demand::CallRate(v.as_f64())),
        [_, second, ..] => {
            t.error(
                cx,
                second,
                "give only one of `overload`, `offered` and `call_rate`",
            );
            None
        }
    };
    let holding = value(cx, t, s, "holding").and_then(|d| {
        let v = decl::Values(vec![("holding", d)]);
        report(cx, t, params::flows_rules(&v)).then(|| match v.dist("holding") {
            units::Dist::Fixed(m) => Holding::Fixed(m),
            units::Dist::Exp(m) | units::Dist::Pareto(_, m) => Holding::Exp(m),
        })
    });
    let jitter = value(cx, t, s, "jitter").map(|v| v.as_f64());
    Some(Flows {
        model: model?,
        arrivals: arrivals?,
        demand: demand?,
        holding: holding?,
        jitter: jitter?,
    })
}

pub(super) fn node(cx: &Cx, t: &Tbl, key: &str, topo: &Topology) -> Option<usize> {
    let name = value(cx, t, &IEA, key)?.as_str().to_string();
    let i = topo.node(&name);
    if i.is_none() {
        t.error(
            cx,
            key,
            format!("unknown node {name:?}; nodes are: {}", topo.node_list()),
        );
    }
    i
}

pub(super) fn read_iea(
    cx: &Cx,
    t: &Tbl,
    topo: &Topology,
    base: &Path,
    admission: bool,
) -> Option<PcnIea> {
    let ingress = node(cx, t, "ingress", topo);
    let egress = node(cx, t, "egress", topo);
    let name = declared(cx, t, &IEA, "name").and_then(|n| match (n, ingress, egress) {
        (Some(n), _, _) => Some(n.as_str().to_string()),
        (None, Some(i), Some(e)) => Some(format!("{}-{}", topo.nodes[i], topo.nodes[e])),
        _ => None,
    });
    let flows = read_flows(cx, t, &IEA, base, admission);
    let share = value(cx, t, &IEA, "share").map(|v| v.as_f64());
    t.finish(cx, &keys_with_model(&IEA));
    let (ingress, egress, flows, share) = (ingress?, egress?, flows?, share?);
    if matches!(flows.demand, Demand::CallRate(_)) && t.has("share") {
        t.error(
            cx,
            "share",
            "scales `overload` or `offered`; a `call_rate` is the aggregate's own",
        );
        return None;
    }
    let same = "ingress and egress are the same node";
    if !check_reachable(cx, t, "egress", topo, (ingress, egress), same) {
        return None;
    }
    Some(PcnIea {
        name: name?,
        ingress,
        egress,
        model: flows.model,
        arrivals: flows.arrivals,
        demand: flows.demand,
        holding: flows.holding,
        jitter: flows.jitter,
        share,
    })
}

/// `split = "LONG:SHORT"` on a parking lot: the weights of the long aggregate and of
/// every short one.
pub(super) fn read_split(cx: &Cx, t: &Tbl, topo: &Topology, n: usize) -> Option<Vec<f64>> {
    let s = t.str(cx, "split")?;
    if topo.kind != "pcn_parking_lot" {
        t.error(
            cx,
            "split",
            "divides a parking lot's demand between its long and short aggregates; use `weights` on other topologies",
        );
        return None;
    }
    let parsed = s.split_once(':').and_then(|(a, b)| {
        let (a, b) = (a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?);
        (a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite()).then_some((a, b))
    });
    match parsed {
        Some((long, short)) => {
            let mut w = vec![short; n];
            w[0] = long;
            Some(w)
        }
        None => {
            t.error(
                cx,
                "split",
                format!(
                    "expected \"LONG:SHORT\" with two positive numbers, e.g. \"2:1\", got {s:?}"
                ),
            );
            None
        }
    }
}

/// The aggregates generated by `[pcn.traffic]` on a PCN topology: one per ingress, with
/// shares from `weights` (each bottleneck's demand divided among the aggregates crossing
/// it in proportion to their weights).
pub(super) fn generated_ieas(
    cx: &Cx,
    t: &Tbl,
    topo: &Topology,
    base: &Path,
    admission: bool,
) -> Option<Vec<PcnIea>> {
    let Some((links, pairs)) = implied(topo) else {
        cx.error(
            t.line(),
            &t.path,
            format!(
                "[pcn.traffic] generates one aggregate per ingress of a pcn_single, pcn_rtt or pcn_parking_lot topology; with topology {:?} list the aggregates as [[pcn.iea]]",
                topo.kind
            ),
        );
        t.skip_rest();
        return None;
    };
    let flows = read_flows(cx, t, &TRAFFIC, base, admission);
    let weights: Option<Vec<f64>> = if t.has("weights") {
        t.array(cx, "weights").and_then(|a| {
            let mut v = Vec::new();
            for (x, line) in a {
                match x.as_float().or(x.as_integer().map(|i| i as f64)) {
                    Some(w) if w > 0.0 && w.is_finite() => v.push(w),
                    _ => {
                        cx.error(
                            line,
                            &t.key_path("weights"),
                            format!("weights are positive numbers, found {x}"),
                        );
                        return None;
                    }
                }
            }
            if v.len() != pairs.len() {
                t.error(
                    cx,
                    "weights",
                    format!(
                        "has {} entries but the topology has {} aggregates ({})",
                        v.len(),
                        pairs.len(),
                        pairs
                            .iter()
                            .map(|(a, b)| format!("{a}-{b}"))
                            .take(6)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
                return None;
            }
            Some(v)
        })
    } else if t.has("split") {
        read_split(cx, t, topo, pairs.len())
    } else {
        Some(vec![1.0; pairs.len()])
    };
    if t.has("weights") && t.has("split") {
        t.error(cx, "split", "give either `weights` or `split`, not both");
        return None;
    }
    t.finish(cx, &keys_with_model(&TRAFFIC));
    let (flows, weights) = (flows?, weights?);
    if matches!(flows.demand, Demand::CallRate(_)) && t.has("weights") {
        t.error(
            cx,
            "weights",
            "divide `overload` or `offered` among the aggregates; with `call_rate` every aggregate gets that rate",
        );
        return None;
    }
    // Which bottlenecks each aggregate crosses: in a parking lot the long one crosses
    // all, short b crosses b; elsewhere there is one bottleneck.
    let nb = links.len();
    let crosses = |i: usize| -> Vec<usize> {
        if topo.kind == "pcn_parking_lot" {
            if i == 0 {
                (0..nb).collect()
            } else {
                vec![i - 1]
            }
        } else {
            vec![0]
        }
    };
    let per_bottleneck: Vec<f64> = (0..nb)
        .map(|b| {
            (0..pairs.len())
                .filter(|&i| crosses(i).contains(&b))
                .map(|i| weights[i])
                .sum()
        })
        .collect();
    let ieas = pairs
        .iter()
        .enumerate()
        .map(|(i, (a, b))| {
            let total = crosses(i)
                .iter()
                .map(|&k| per_bottleneck[k])
                .fold(0.0, f64::max);
            PcnIea {
                name: format!("{a}-{b}"),
                ingress: topo.node(a).expect("implied node"),
                egress: topo.node(b).expect("implied node"),
                model: flows.model.clone(),
                arrivals: flows.arrivals,
                demand: flows.demand,
                holding: flows.holding,
                jitter: flows.jitter,
                share: weights[i] / total,
            }
        })
        .collect();
    Some(ieas)
}
