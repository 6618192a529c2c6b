//! The PCN family's part of the scenario language ([`PcnFamily`]): the `[pcn]` section (a
//! Pre-Congestion Notification domain over the scenario's network) and the PCN study's
//! own topologies (`[topology] kind = "pcn_single" | "pcn_rtt" | "pcn_parking_lot"`).
//!
//! The domain is assembled with [`PcnDomain`] exactly as a program would assemble it by
//! hand, so a scenario and a hand-built world with the same seed run identically. After
//! the run, the family's analysis adds the study's figures to the summary under `pcn.*` (per
//! bottleneck: admitted rate, over-admission, SD/Ra, and the termination figures; per
//! aggregate: calls and termination) and derives the short/long bandwidth-ratio series
//! of parking lots. `docs/scenarios.md` documents every key.

use super::{
    admission_accuracy, call_rate_for_overload, expected_termination, optimal_fraction,
    over_termination_percent, parking_lot, rtt_star_egresses, schedule_termination_rates,
    single_link, spread_delays, CallArrivals, CleMode, IeaSpec, IngressConfig, MarkingCurve,
    PcnDomain, PcnHandles, PcnIngress, Rounding, VqThresholds, DEFAULT_QUEUE_PACKETS,
    TERMINATION_DEPTH_PACKETS,
};
use crate::metrics::{Probe, Series};
use crate::net::{LinkId, NodeId};
use crate::scenario::units::{self, QueueLimit};
use crate::scenario::walk::{Cx, Tbl};
use crate::scenario::{
    apply_link_overrides, check_reachable, read_model, read_queue, BuiltCore, Core, Family,
    LinkSpec, Mechanism, MechanismRun, QueueSpec, Scenario, Topology, TrafficModel, TrafficSpec,
    MODEL_KEYS,
};
use crate::time::{millis, to_secs, Time, PS_PER_MS};
use crate::traffic::{ActiveCall, FlowGenerator, Holding, SourceModel};
use crate::world::{Agent, World};
use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

/// Aggregates above which `per_iea` defaults to false (the summary then holds totals
/// only, not hundreds of per-aggregate keys).
pub const PER_IEA_DEFAULT_LIMIT: usize = 50;

// ---------------------------------------------------------------------------------------
// Specification

/// A rate given as a fraction of a link's rate or as bits per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateOrFraction {
    /// Fraction of the link's rate.
    Fraction(f64),
    /// Bits per second.
    Rate(u64),
}

impl RateOrFraction {
    /// The rate on a link of `link_bps`.
    pub fn on(&self, link_bps: u64) -> u64 {
        match *self {
            RateOrFraction::Fraction(f) => (f * link_bps as f64).round() as u64,
            RateOrFraction::Rate(r) => r,
        }
    }
}

/// Admission control: marking on every bottleneck, CLE at the egresses, decisions at the
/// ingresses.
#[derive(Clone, Debug, PartialEq)]
pub struct PcnAdmission {
    /// configured-admissible-rate.
    pub ra: RateOrFraction,
    /// Ramp or step marking.
    pub curve: MarkingCurve,
    /// VQ thresholds (times at Ra).
    pub thresholds: VqThresholds,
    /// How the egress computes the CLE.
    pub cle: CleMode,
    /// A call is admitted iff CLE < this.
    pub cle_threshold: f64,
}

/// Termination bucket depth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Depth {
    /// Packets of the largest packet size of the aggregates crossing the bottleneck.
    Packets(u64),
    /// Bytes.
    Bytes(u64),
}

/// Flow termination after a failure event.
#[derive(Clone, Debug, PartialEq)]
pub struct PcnTermination {
    /// configured-termination-rate from `t_fail` on.
    pub rt: RateOrFraction,
    /// configured-termination-rate before `t_fail` (not binding: the link rate).
    pub before: RateOrFraction,
    /// The failure instant.
    pub t_fail: Time,
    /// Rounding of the rate to terminate to whole flows.
    pub rounding: Rounding,
    /// Token-bucket depth.
    pub depth: Depth,
    /// New calls stop arriving at `t_fail`.
    pub stop_arrivals: bool,
    /// The egress's SAR measurement period.
    pub sar_period: Time,
    /// The ingress's sending-rate measurement.
    pub rate_measurement: Time,
    /// Ingresses ignore SAR reports measured before their last termination.
    pub ignore_stale_reports: bool,
}

/// How much an aggregate offers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Demand {
    /// `k` x Ra of the first bottleneck on the path (times the share).
    Overload(f64),
    /// Mean offered rate (times the share): a fraction of the first bottleneck's link rate
    /// or a rate.
    Offered(RateOrFraction),
    /// Calls per second.
    CallRate(f64),
}

/// One ingress–egress aggregate.
#[derive(Clone, Debug)]
pub struct PcnIea {
    /// Name (of its ingress controller, flow group and series).
    pub name: String,
    /// Ingress node index.
    pub ingress: usize,
    /// Egress node index.
    pub egress: usize,
    /// What each flow sends.
    pub model: SourceModel,
    /// Poisson or BATCH calls.
    pub arrivals: CallArrivals,
    /// The demand.
    pub demand: Demand,
    /// Holding times.
    pub holding: Holding,
    /// Randomization f.
    pub jitter: f64,
    /// Share of the demand (multiplies `overload` and `offered`).
    pub share: f64,
}

/// A validated `[pcn]` section.
#[derive(Clone, Debug)]
pub struct PcnSpec {
    /// The marked links (indices into the topology), in chain order.
    pub bottlenecks: Vec<usize>,
    /// Admission control, if on.
    pub admission: Option<PcnAdmission>,
    /// Flow termination, if on.
    pub termination: Option<PcnTermination>,
    /// The aggregates.
    pub ieas: Vec<PcnIea>,
    /// PCN throughput sampling interval.
    pub sample_interval: Time,
    /// Per-aggregate summary keys (otherwise totals only, and the aggregates' own agent
    /// keys and a pcn topology's access links are left out of the summary).
    pub per_iea: bool,
    /// Per-aggregate series: throughput, active flows, terminations.
    pub iea_series: bool,
}

// ---------------------------------------------------------------------------------------
// Topologies

fn count(cx: &Cx, t: &Tbl, key: &str, lo: u64, hi: u64) -> Option<u64> {
    if !t.has(key) {
        cx.error(t.line(), &t.key_path(key), "missing (required)");
        return None;
    }
    let n = t.uint(cx, key)?;
    if n < lo || n > hi {
        t.error(cx, key, format!("must be between {lo} and {hi}, got {n}"));
        return None;
    }
    Some(n)
}

fn time_or(cx: &Cx, t: &Tbl, key: &str, default: Time) -> Option<Time> {
    if t.has(key) {
        t.time(cx, key)
    } else {
        Some(default)
    }
}

/// The access delays of `pcn_rtt`: `access_delay` (all equal), or `access_delays` as a
/// list (one per ingress) or as `{ from, to }` (spread evenly).
fn access_delays(cx: &Cx, t: &Tbl, n: Option<u64>) -> Option<Vec<Time>> {
    let both = t.has("access_delay") && t.has("access_delays");
    if both {
        t.error(
            cx,
            "access_delays",
            "give either access_delay (all equal) or access_delays, not both",
        );
        return None;
    }
    if t.has("access_delays") {
        let (item, line) = t.raw(cx, "access_delays")?;
        if item.is_table_like() {
            let s = t.table(cx, "access_delays")?;
            let lo = if s.has("from") {
                s.time(cx, "from")
            } else {
                cx.error(s.line(), &s.key_path("from"), "missing (required)");
                None
            };
            let hi = if s.has("to") {
                s.time(cx, "to")
            } else {
                cx.error(s.line(), &s.key_path("to"), "missing (required)");
                None
            };
            s.finish(cx, &["from", "to"]);
            let (lo, hi, n) = (lo?, hi?, n?);
            if hi < lo {
                s.error(cx, "to", "must not be below `from`");
                return None;
            }
            return Some(spread_delays(n as usize, lo, hi));
        }
        let arr = t.array(cx, "access_delays")?;
        let mut v = Vec::new();
        let mut ok = true;
        for (x, l) in arr {
            match x.as_str().map(units::parse_time) {
                Some(Ok(d)) => v.push(d),
                Some(Err(e)) => {
                    ok = false;
                    cx.error(l, &t.key_path("access_delays"), e);
                }
                None => {
                    ok = false;
                    cx.error(
                        l,
                        &t.key_path("access_delays"),
                        format!("expected times such as \"10ms\", found {x}"),
                    );
                }
            }
        }
        let n = n?;
        if !ok {
            return None;
        }
        if v.len() as u64 != n {
            cx.error(
                line,
                &t.key_path("access_delays"),
                format!("has {} entries but there are {n} ingresses", v.len()),
            );
            return None;
        }
        return Some(v);
    }
    let d = time_or(cx, t, "access_delay", PS_PER_MS)?;
    Some(vec![d; n? as usize])
}

/// Reads a PCN topology from `[topology]` (and the `[links."NAME"]` overrides). The
/// network is the one [`single_link`], [`rtt_star_egresses`] or [`parking_lot`] builds:
/// unidirectional links in the data direction, links other than the bottlenecks 100
/// times faster, drop-tail queues of [`DEFAULT_QUEUE_PACKETS`] packets.
fn read_topology(cx: &Cx, t: &Tbl, root: &Tbl) -> Option<Topology> {
    let kind = t.req_str(cx, "kind")?;
    let known: &[&str] = match kind.as_str() {
        "pcn_single" => &["kind", "rate", "delay", "queue"],
        "pcn_rtt" => &[
            "kind",
            "rate",
            "queue",
            "ingresses",
            "egresses",
            "access_delay",
            "access_delays",
            "bottleneck_delay",
        ],
        "pcn_parking_lot" => &["kind", "rate", "queue", "bottlenecks"],
        other => {
            t.error(
                cx,
                "kind",
                format!("unknown topology {other:?}; the PCN topologies are pcn_single, pcn_rtt and pcn_parking_lot"),
            );
            t.skip_rest();
            return None;
        }
    };
    let rate = if t.has("rate") {
        t.rate(cx, "rate")
    } else {
        cx.error(
            t.line(),
            &t.key_path("rate"),
            "missing (required: the bottleneck rate, e.g. \"OC3\")",
        );
        None
    };
    let queue = if t.has("queue") {
        t.table(cx, "queue").and_then(|q| read_queue(cx, &q))
    } else {
        Some(QueueSpec::DropTail {
            limit: QueueLimit::Packets(DEFAULT_QUEUE_PACKETS as u64),
        })
    };
    let mut w = World::new(0);
    let built = match kind.as_str() {
        "pcn_single" => {
            let delay = time_or(cx, t, "delay", PS_PER_MS);
            match (rate, delay) {
                (Some(r), Some(d)) => Some(single_link(&mut w, r, d)),
                _ => None,
            }
        }
        "pcn_rtt" => {
            let n = count(cx, t, "ingresses", 1, 100_000);
            let m = if t.has("egresses") {
                count(cx, t, "egresses", 1, 1000)
            } else {
                Some(1)
            };
            let bd = time_or(cx, t, "bottleneck_delay", PS_PER_MS);
            let delays = access_delays(cx, t, n);
            match (rate, bd, delays, m) {
                (Some(r), Some(bd), Some(ds), Some(m)) => {
                    Some(rtt_star_egresses(&mut w, r, bd, &ds, m as usize))
                }
                _ => None,
            }
        }
        _ => {
            let n = count(cx, t, "bottlenecks", 1, 1000);
            match (rate, n) {
                (Some(r), Some(n)) => Some(parking_lot(&mut w, n as usize, r)),
                _ => None,
            }
        }
    };
    t.finish(cx, known);
    let (_, queue) = (built?, queue?);
    let mut topo = Topology {
        kind: kind.clone(),
        nodes: w.net.nodes.iter().map(|n| n.name.clone()).collect(),
        links: w
            .net
            .links
            .iter()
            .map(|l| LinkSpec {
                name: l.name.clone(),
                from: l.from as usize,
                to: l.to as usize,
                rate: l.rate_bps,
                delay: l.delay,
                queue: queue.clone(),
                meters: Vec::new(),
            })
            .collect(),
        ..Default::default()
    };
    link_overrides(cx, root, &mut topo);
    Some(topo)
}

/// `[links."NAME"]` on a PCN topology: rate, delay and queue of any link (no meters: the
/// PCN domain puts its own markers on the bottlenecks).
fn link_overrides(cx: &Cx, root: &Tbl, topo: &mut Topology) {
    apply_link_overrides(cx, root, topo, false);
}

/// Bottleneck link names, and aggregates as (ingress, egress) node names.
type Implied = (Vec<String>, Vec<(String, String)>);

/// The bottlenecks and aggregates a PCN topology implies (link names in chain order;
/// aggregates as (ingress, egress) node names, long one first in a parking lot).
fn implied(topo: &Topology) -> Option<Implied> {
    let has = |n: &str| topo.node(n).is_some();
    match topo.kind.as_str() {
        "pcn_single" => Some((vec!["A-B".into()], vec![("A".into(), "B".into())])),
        "pcn_rtt" => {
            // One egress F, or egresses E1..Em behind F: every ingress to every egress,
            // by ingress, then egress.
            let mut outs: Vec<String> = (1..)
                .map(|j| format!("E{j}"))
                .take_while(|n| has(n))
                .collect();
            if outs.is_empty() {
                outs.push("F".into());
            }
            let ins: Vec<(String, String)> = (1..)
                .map(|k| format!("I{k}"))
                .take_while(|n| has(n))
                .flat_map(|i| outs.iter().map(move |e| (i.clone(), e.clone())))
                .collect();
            Some((vec!["D-F".into()], ins))
        }
        "pcn_parking_lot" => {
            let n = (1..).take_while(|k| has(&format!("R{k}"))).count();
            let links = (1..=n).map(|b| format!("R{}-R{b}", b - 1)).collect();
            let mut ieas = vec![("IL".to_string(), "EL".to_string())];
            ieas.extend((1..=n).map(|b| (format!("I{b}"), format!("E{b}"))));
            Some((links, ieas))
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Reading `[pcn]`

fn rate_or_fraction(cx: &Cx, t: &Tbl, key: &str, hi: f64) -> Option<RateOrFraction> {
    let (item, line) = t.raw(cx, key)?;
    let v = item.as_value();
    if let Some(s) = v.and_then(|v| v.as_str()) {
        return match units::parse_rate(s) {
            Ok(r) => Some(RateOrFraction::Rate(r)),
            Err(e) => {
                cx.error(
                    line,
                    &t.key_path(key),
                    format!("{e}; or give a fraction of the link rate, e.g. 0.5"),
                );
                None
            }
        };
    }
    let x = v.and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)));
    match x {
        Some(f) if f > 0.0 && f <= hi => Some(RateOrFraction::Fraction(f)),
        Some(f) => {
            cx.error(
                line,
                &t.key_path(key),
                format!("a fraction of the link rate must be in (0, {hi}], got {f}"),
            );
            None
        }
        None => {
            cx.error(
                line,
                &t.key_path(key),
                "expected a fraction of the link rate (e.g. 0.5) or a rate (e.g. \"77.76Mbps\")",
            );
            None
        }
    }
}

fn positive_time(cx: &Cx, t: &Tbl, key: &str, default: Time) -> Option<Time> {
    let v = time_or(cx, t, key, default)?;
    if v == 0 {
        t.error(cx, key, "must be positive");
        return None;
    }
    Some(v)
}

fn read_thresholds(cx: &Cx, p: &Tbl) -> Option<VqThresholds> {
    if !p.has("thresholds") {
        return Some(VqThresholds::default());
    }
    let t = p.table(cx, "thresholds")?;
    let d = VqThresholds::default();
    let get = |k: &str, dflt: f64| -> Option<f64> {
        if t.has(k) {
            t.time(cx, k).map(to_secs)
        } else {
            Some(dflt)
        }
    };
    let (min, max, limit) = (
        get("min", d.min_s),
        get("max", d.max_s),
        get("limit", d.limit_s),
    );
    t.finish(cx, &["min", "max", "limit"]);
    let (min, max, limit) = (min?, max?, limit?);
    if !(min <= max && max <= limit) || limit <= 0.0 {
        p.error(
            cx,
            "thresholds",
            format!(
                "must satisfy min <= max <= limit with limit > 0, got min {} ms, max {} ms, limit {} ms",
                min * 1e3,
                max * 1e3,
                limit * 1e3
            ),
        );
        return None;
    }
    Some(VqThresholds {
        min_s: min,
        max_s: max,
        limit_s: limit,
    })
}

fn read_cle(cx: &Cx, p: &Tbl) -> Option<(CleMode, f64)> {
    if !p.has("cle") {
        return Some((CleMode::per_packet(), 0.5));
    }
    let t = p.table(cx, "cle")?;
    let mode = if t.has("mode") {
        t.str(cx, "mode")
    } else {
        Some("per_packet".into())
    };
    let w = t.opt_unit_interval(cx, "w");
    let threshold = t.opt_unit_interval(cx, "threshold");
    let out = match mode.as_deref() {
        Some("per_packet") => {
            if t.has("interval") {
                t.error(cx, "interval", "only used with mode = \"interval\"");
            }
            match (w, threshold) {
                (Some(w), Some(th)) => Some((
                    CleMode::PerPacket {
                        w: w.unwrap_or(0.01),
                    },
                    th.unwrap_or(0.5),
                )),
                _ => None,
            }
        }
        Some("interval") => {
            let period = positive_time(cx, &t, "interval", 100 * PS_PER_MS);
            match (w, threshold, period) {
                (Some(w), Some(th), Some(period)) => Some((
                    CleMode::Interval {
                        w: w.unwrap_or(0.3),
                        period,
                    },
                    th.unwrap_or(0.05),
                )),
                _ => None,
            }
        }
        Some(other) => {
            t.error(
                cx,
                "mode",
                format!("unknown CLE mode {other:?}; use \"per_packet\" or \"interval\""),
            );
            None
        }
        None => None,
    };
    t.finish(cx, &["mode", "w", "threshold", "interval"]);
    out
}

fn read_termination(cx: &Cx, p: &Tbl, duration: Option<Time>) -> Option<PcnTermination> {
    let t = p.table(cx, "termination")?;
    let rt = if t.has("rt") {
        rate_or_fraction(cx, &t, "rt", 1.0)
    } else {
        cx.error(
            t.line(),
            &t.key_path("rt"),
            "missing (required: configured-termination-rate, a fraction of the link rate or a rate)",
        );
        None
    };
    let before = if t.has("before") {
        rate_or_fraction(cx, &t, "before", 1000.0)
    } else {
        Some(RateOrFraction::Fraction(1.0))
    };
    let t_fail = if t.has("t_fail") {
        t.time(cx, "t_fail")
    } else {
        cx.error(
            t.line(),
            &t.key_path("t_fail"),
            "missing (required: when the termination rate becomes binding, e.g. \"200s\")",
        );
        None
    };
    let rounding = if t.has("rounding") {
        t.str(cx, "rounding").and_then(|r| match r.as_str() {
            "up" => Some(Rounding::Up),
            "down" => Some(Rounding::Down),
            "nearest" => Some(Rounding::Nearest),
            other => {
                t.error(
                    cx,
                    "rounding",
                    format!("unknown rounding {other:?}; use \"up\", \"down\" or \"nearest\""),
                );
                None
            }
        })
    } else {
        Some(Rounding::Up)
    };
    let depth = if t.has("depth") {
        let (item, line) = t.raw(cx, "depth")?;
        match item.as_value() {
            Some(v) if v.as_str().is_some() => t.size(cx, "depth").and_then(|b| {
                if b == 0 {
                    t.error(cx, "depth", "must be at least one byte");
                    None
                } else {
                    Some(Depth::Bytes(b))
                }
            }),
            Some(v) if v.as_integer().is_some_and(|n| n > 0) => {
                Some(Depth::Packets(v.as_integer().unwrap_or(1) as u64))
            }
            _ => {
                cx.error(
                    line,
                    &t.key_path("depth"),
                    "expected a positive number of packets (e.g. 256) or a size (e.g. \"40KB\")",
                );
                None
            }
        }
    } else {
        Some(Depth::Packets(TERMINATION_DEPTH_PACKETS))
    };
    let stop = if t.has("stop_arrivals") {
        t.bool(cx, "stop_arrivals")
    } else {
        Some(true)
    };
    let sar = positive_time(cx, &t, "sar_period", 100 * PS_PER_MS);
    let meas = positive_time(cx, &t, "rate_measurement", 100 * PS_PER_MS);
    let stale = if t.has("ignore_stale_reports") {
        t.bool(cx, "ignore_stale_reports")
    } else {
        Some(false)
    };
    t.finish(
        cx,
        &[
            "rt",
            "before",
            "t_fail",
            "rounding",
            "depth",
            "stop_arrivals",
            "sar_period",
            "rate_measurement",
            "ignore_stale_reports",
        ],
    );
    let t_fail = t_fail?;
    if let Some(d) = duration {
        if t_fail >= d {
            t.error(
                cx,
                "t_fail",
                "must be before the end of the run (run.duration)",
            );
            return None;
        }
    }
    Some(PcnTermination {
        rt: rt?,
        before: before?,
        t_fail,
        rounding: rounding?,
        depth: depth?,
        stop_arrivals: stop?,
        sar_period: sar?,
        rate_measurement: meas?,
        ignore_stale_reports: stale?,
    })
}

/// What every aggregate (or the template) says about its flows.
struct Flows {
    model: SourceModel,
    arrivals: CallArrivals,
    demand: Demand,
    holding: Holding,
    jitter: f64,
}

fn read_flows(cx: &Cx, t: &Tbl, base: &Path, admission: bool) -> Option<Flows> {
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
    let arrivals = if t.has("arrivals") {
        t.str(cx, "arrivals").and_then(|a| match a.as_str() {
            "poisson" => Some(CallArrivals::Poisson),
            "batch" => Some(CallArrivals::Batch),
            other => {
                t.error(
                    cx,
                    "arrivals",
                    format!("unknown arrival process {other:?}; use \"poisson\" or \"batch\""),
                );
                None
            }
        })
    } else {
        Some(CallArrivals::Poisson)
    };
    let given: Vec<&str> = ["overload", "offered", "call_rate"]
        .into_iter()
        .filter(|k| t.has(k))
        .collect();
    let demand = match given.as_slice() {
        [] => {
            cx.error(
                t.line(),
                &t.key_path("overload"),
                "missing: give `overload` (demand as a multiple of ra), `offered` (a fraction of the bottleneck rate, or a rate) or `call_rate` (e.g. \"2/s\")",
            );
            None
        }
        ["overload"] => t.num(cx, "overload").and_then(|k| {
            if !(k > 0.0 && k.is_finite()) {
                t.error(cx, "overload", format!("must be positive, got {k}"));
                None
            } else if !admission {
                t.error(
                    cx,
                    "overload",
                    "is a multiple of pcn.ra, which is not given; use `offered` or `call_rate`",
                );
                None
            } else {
                Some(Demand::Overload(k))
            }
        }),
        ["offered"] => rate_or_fraction(cx, t, "offered", 1000.0).map(Demand::Offered),
        [_] => t
            .parsed(cx, "call_rate", units::parse_per_second)
            .map(Demand::CallRate),
        [_, second, ..] => {
            t.error(
                cx,
                second,
                "give only one of `overload`, `offered` and `call_rate`",
            );
            None
        }
    };
    let holding = if t.has("holding") {
        t.parsed(cx, "holding", units::parse_dist)
            .and_then(|d| match d {
                units::Dist::Exp(m) if m > 0.0 => Some(Holding::Exp(m)),
                units::Dist::Fixed(m) if m > 0.0 => Some(Holding::Fixed(m)),
                units::Dist::Pareto(..) => {
                    t.error(cx, "holding", "holding times are exponential or fixed");
                    None
                }
                _ => {
                    t.error(cx, "holding", "the mean holding time must be positive");
                    None
                }
            })
    } else {
        Some(Holding::Exp(60.0))
    };
    let jitter = if t.has("jitter") {
        t.num_in(cx, "jitter", 0.0, 1.0)
    } else {
        Some(0.0)
    };
    Some(Flows {
        model: model?,
        arrivals: arrivals?,
        demand: demand?,
        holding: holding?,
        jitter: jitter?,
    })
}

fn node(cx: &Cx, t: &Tbl, key: &str, topo: &Topology) -> Option<usize> {
    let name = t.req_str(cx, key)?;
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

fn read_iea(cx: &Cx, t: &Tbl, topo: &Topology, base: &Path, admission: bool) -> Option<PcnIea> {
    let ingress = node(cx, t, "ingress", topo);
    let egress = node(cx, t, "egress", topo);
    let name = if t.has("name") {
        t.str(cx, "name")
    } else {
        match (ingress, egress) {
            (Some(i), Some(e)) => Some(format!("{}-{}", topo.nodes[i], topo.nodes[e])),
            _ => None,
        }
    };
    let flows = read_flows(cx, t, base, admission);
    let share = if t.has("share") {
        t.num(cx, "share").and_then(|s| {
            if s > 0.0 && s.is_finite() {
                Some(s)
            } else {
                t.error(cx, "share", format!("must be positive, got {s}"));
                None
            }
        })
    } else {
        Some(1.0)
    };
    let mut known: Vec<&str> = MODEL_KEYS.to_vec();
    known.extend([
        "name",
        "ingress",
        "egress",
        "arrivals",
        "overload",
        "offered",
        "call_rate",
        "holding",
        "jitter",
        "share",
    ]);
    t.finish(cx, &known);
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
fn read_split(cx: &Cx, t: &Tbl, topo: &Topology, n: usize) -> Option<Vec<f64>> {
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
fn generated_ieas(
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
    let flows = read_flows(cx, t, base, admission);
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
    let mut known: Vec<&str> = MODEL_KEYS.to_vec();
    known.extend([
        "arrivals",
        "overload",
        "offered",
        "call_rate",
        "holding",
        "jitter",
        "weights",
        "split",
    ]);
    t.finish(cx, &known);
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

/// Reads `[pcn]`: `Some(None)` when absent, `None` after a problem.
fn read(
    cx: &Cx,
    root: &Tbl,
    topo: &Topology,
    traffic: &[TrafficSpec],
    base: &Path,
    duration: Option<Time>,
) -> Option<Option<PcnSpec>> {
    if !root.has("pcn") {
        return Some(None);
    }
    let p = root.table(cx, "pcn")?;
    let implied = implied(topo);
    // Bottlenecks.
    let bottlenecks: Option<Vec<usize>> = if p.has("bottlenecks") {
        p.array(cx, "bottlenecks").and_then(|a| {
            let mut out: Vec<usize> = Vec::new();
            let mut ok = true;
            for (v, line) in a {
                match v.as_str().and_then(|n| topo.link(n)) {
                    Some(i) if out.contains(&i) => {
                        ok = false;
                        cx.error(
                            line,
                            &p.key_path("bottlenecks"),
                            format!("link {v} is listed twice"),
                        );
                    }
                    Some(i) => out.push(i),
                    None => {
                        ok = false;
                        cx.error(
                            line,
                            &p.key_path("bottlenecks"),
                            format!("unknown link {v}; links are: {}", topo.link_list()),
                        );
                    }
                }
            }
            if out.is_empty() && ok {
                p.error(cx, "bottlenecks", "must name at least one link");
                return None;
            }
            ok.then_some(out)
        })
    } else if let Some((links, _)) = &implied {
        Some(
            links
                .iter()
                .map(|n| topo.link(n).expect("implied link"))
                .collect(),
        )
    } else {
        cx.error(
            p.line(),
            &p.key_path("bottlenecks"),
            "missing (required: the links whose PCN traffic is marked, e.g. [\"r0-r1\"])",
        );
        None
    };
    // Admission.
    let admission = if p.has("ra") {
        let ra = rate_or_fraction(cx, &p, "ra", 1.0);
        let curve = if p.has("marking") {
            p.str(cx, "marking").and_then(|m| match m.as_str() {
                "ramp" => Some(MarkingCurve::Ramp),
                "step" => Some(MarkingCurve::Step),
                other => {
                    p.error(
                        cx,
                        "marking",
                        format!("unknown marking {other:?}; use \"ramp\" or \"step\""),
                    );
                    None
                }
            })
        } else {
            Some(MarkingCurve::Ramp)
        };
        let th = read_thresholds(cx, &p);
        let cle = read_cle(cx, &p);
        match (ra, curve, th, cle) {
            (Some(ra), Some(curve), Some(thresholds), Some((cle, cle_threshold))) => {
                Some(Some(PcnAdmission {
                    ra,
                    curve,
                    thresholds,
                    cle,
                    cle_threshold,
                }))
            }
            _ => None,
        }
    } else {
        for k in ["marking", "thresholds", "cle"] {
            if p.has(k) {
                p.error(
                    cx,
                    k,
                    "only used with admission control: give pcn.ra (the configured-admissible-rate)",
                );
            }
        }
        Some(None)
    };
    let has_admission = p.has("ra");
    let termination = if p.has("termination") {
        read_termination(cx, &p, duration).map(Some)
    } else {
        Some(None)
    };
    let sample_interval = positive_time(cx, &p, "sample_interval", millis(50.0));
    let iea_series = if p.has("iea_series") {
        p.bool(cx, "iea_series")
    } else {
        Some(false)
    };
    // Aggregates.
    let mut name_lines: Vec<usize> = Vec::new();
    let ieas: Option<Vec<PcnIea>> = match (p.has("traffic"), p.has("iea")) {
        (true, true) => {
            p.error(
                cx,
                "iea",
                "give either [pcn.traffic] (one aggregate per ingress of a pcn_* topology) or [[pcn.iea]] entries, not both",
            );
            if let Some(t) = p.table(cx, "traffic") {
                t.skip_rest();
            }
            None
        }
        (true, false) => p
            .table(cx, "traffic")
            .and_then(|t| generated_ieas(cx, &t, topo, base, has_admission)),
        (false, true) => {
            let v: Vec<Option<PcnIea>> = p
                .tables(cx, "iea")
                .iter()
                .map(|t| {
                    name_lines.push(t.line_of(cx, "name"));
                    read_iea(cx, t, topo, base, has_admission)
                })
                .collect();
            if v.is_empty() {
                p.error(cx, "iea", "needs at least one aggregate");
                None
            } else if v.iter().all(Option::is_some) {
                Some(v.into_iter().flatten().collect())
            } else {
                None
            }
        }
        (false, false) => {
            cx.error(
                p.line(),
                &p.key_path("iea"),
                "missing: describe the aggregates with [[pcn.iea]] entries, or with [pcn.traffic] on a pcn_* topology",
            );
            None
        }
    };
    let per_iea = if p.has("per_iea") {
        p.bool(cx, "per_iea")
    } else {
        Some(
            ieas.as_ref()
                .is_none_or(|v| v.len() <= PER_IEA_DEFAULT_LIMIT),
        )
    };
    p.finish(
        cx,
        &[
            "bottlenecks",
            "ra",
            "marking",
            "thresholds",
            "cle",
            "termination",
            "sample_interval",
            "per_iea",
            "iea_series",
            "traffic",
            "iea",
        ],
    );
    let ieas = ieas?;
    // Names: unique, and not those of traffic entries (they name flow groups).
    let mut ok = true;
    for (i, a) in ieas.iter().enumerate() {
        let (path, line) = match name_lines.get(i) {
            Some(&l) => (format!("iea.{i}.name"), l),
            None => ("traffic".to_string(), p.line_of(cx, "traffic")),
        };
        if ieas[..i].iter().any(|b| b.name == a.name) {
            ok = false;
            cx.error(
                line,
                &p.key_path(&path),
                format!("two aggregates are called {:?}", a.name),
            );
        } else if traffic.iter().any(|t| t.name == a.name) {
            ok = false;
            cx.error(
                line,
                &p.key_path(&path),
                format!(
                    "a traffic entry is already called {:?} (aggregates and traffic entries name flow groups)",
                    a.name
                ),
            );
        }
    }
    if !ok {
        return None;
    }
    Some(Some(PcnSpec {
        bottlenecks: bottlenecks?,
        admission: admission?,
        termination: termination?,
        ieas,
        sample_interval: sample_interval?,
        per_iea: per_iea?,
        iea_series: iea_series?,
    }))
}

// ---------------------------------------------------------------------------------------
// Building

/// The largest packet size a model sends, bytes.
pub fn max_packet_bytes(m: &SourceModel) -> u32 {
    match m {
        SourceModel::Cbr { size, .. }
        | SourceModel::OnOff { size, .. }
        | SourceModel::Trace { size, .. } => *size,
        SourceModel::Poisson { size, .. } => size.mean().round() as u32,
        SourceModel::Mix(ms) => ms.iter().map(max_packet_bytes).max().unwrap_or(0),
    }
}

/// An aggregate of a built domain.
#[derive(Clone, Debug)]
struct IeaRun {
    name: String,
    agent: u32,
    /// Bottlenecks crossed (indices into the scenario's list), in path order.
    crosses: Vec<usize>,
    /// Signalling round trip.
    round_trip: Time,
}

/// Flows active at the failure instant, per aggregate.
type Snapshot = Rc<RefCell<Option<Vec<Vec<ActiveCall>>>>>;

/// A PCN domain built into a world: what the summary needs after the run.
struct PcnRun {
    spec: PcnSpec,
    handles: PcnHandles,
    links: Vec<LinkId>,
    ra: Vec<Option<u64>>,
    rt: Vec<Option<u64>>,
    ieas: Vec<IeaRun>,
    snapshot: Snapshot,
    iea_throughput: Vec<usize>,
}

/// The flows of each aggregate active at `now`.
fn active_now(w: &mut World, agents: &[u32]) -> Vec<Vec<ActiveCall>> {
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
fn ingress_config(spec: &PcnSpec, iea: &PcnIea, lambda: f64, warmup: Time) -> IngressConfig {
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
fn build(spec: &PcnSpec, sc: &Scenario, w: &mut World) -> Result<PcnRun, String> {
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
        let agents: Vec<u32> = handles.ingresses.iter().map(|h| h.agent).collect();
        let snap = snapshot.clone();
        w.schedule_action(t.t_fail, move |w: &mut World| {
            *snap.borrow_mut() = Some(active_now(w, &agents));
        });
        let rates = links
            .iter()
            .zip(&rt)
            .map(|(&l, r)| (l, r.expect("termination rate")))
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

fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// An order of the bottlenecks consistent with every path (the beat-down calculator
/// walks the chain in that order), or `None` if the paths disagree.
fn chain_order(nb: usize, paths: &[Vec<usize>]) -> Option<Vec<usize>> {
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
struct Term {
    load_flows: usize,
    load_bps: f64,
    terminated_flows: usize,
    terminated_bps: f64,
}

impl MechanismRun for PcnRun {
    /// Adds the `pcn.*` summary keys and derived series after a run.
    fn finish(&mut self, sc: &Scenario, w: &mut World, m: &mut Map<String, Value>) {
        finish(sc, w, self, m);
    }
}

fn finish(sc: &Scenario, w: &mut World, run: &PcnRun, m: &mut Map<String, Value>) {
    let spec = &run.spec;
    let now = w.sched.now();
    let warm = to_secs(sc.run.warmup);
    let nb = run.links.len();
    let names: Vec<String> = run
        .links
        .iter()
        .map(|&l| w.net.links[l as usize].name.clone())
        .collect();
    // Admission accuracy per bottleneck.
    for (b, &l) in run.links.iter().enumerate() {
        let p = format!("pcn.bottleneck.{}.", names[b]);
        let link_bps = w.net.links[l as usize].rate_bps;
        m.insert(p.clone() + "link_bps", json!(link_bps));
        let Some(series) = run.handles.throughput(w, l) else {
            continue;
        };
        let ra = run.ra[b].unwrap_or(link_bps) as f64;
        let acc = admission_accuracy(series, warm, ra);
        m.insert(p.clone() + "mean_bps", num(acc.mean_bps));
        m.insert(p.clone() + "samples", json!(acc.samples));
        if let Some(ra) = run.ra[b] {
            m.insert(p.clone() + "ra_bps", json!(ra));
            m.insert(
                p.clone() + "over_admission_pct",
                num(acc.over_admission_pct),
            );
            m.insert(p.clone() + "sd_over_ra", num(acc.sd_over_ra));
        }
    }
    // Calls per aggregate.
    let mut tot = [0.0f64; 4];
    let mut rows: Vec<(String, Vec<(String, Value)>)> = Vec::new();
    for a in &run.ieas {
        let mut out = Vec::new();
        if let Some(ing) = w.agents.get_mut::<FlowGenerator>(a.agent) {
            ing.report(now, &mut out);
        }
        let get = |k: &str| {
            out.iter()
                .find(|(n, _)| n == k)
                .and_then(|(_, v)| v.as_f64())
                .unwrap_or(0.0)
        };
        let (offered, blocked) = (get("offered_calls"), get("blocked_calls"));
        let terminated = get("terminated_flows");
        tot[0] += offered;
        tot[1] += blocked;
        tot[2] += get("active_mean");
        tot[3] += terminated;
        rows.push((
            a.name.clone(),
            vec![
                ("offered".into(), json!(offered)),
                ("admitted".into(), json!(offered - blocked)),
                ("blocked".into(), json!(blocked)),
                (
                    "blocking".into(),
                    num(if offered > 0.0 {
                        blocked / offered
                    } else {
                        0.0
                    }),
                ),
                ("active_mean".into(), num(get("active_mean"))),
                ("rtt_ms".into(), json!(to_secs(a.round_trip) * 1e3)),
            ],
        ));
    }
    m.insert("pcn.ieas".into(), json!(run.ieas.len()));
    m.insert("pcn.offered".into(), json!(tot[0]));
    m.insert("pcn.admitted".into(), json!(tot[0] - tot[1]));
    m.insert("pcn.blocked".into(), json!(tot[1]));
    m.insert(
        "pcn.blocking".into(),
        num(if tot[0] > 0.0 { tot[1] / tot[0] } else { 0.0 }),
    );
    m.insert("pcn.active_mean".into(), num(tot[2]));
    // Termination.
    if let (Some(t), Some(snap)) = (&spec.termination, run.snapshot.borrow().as_ref()) {
        let terms: Vec<Term> = snap
            .iter()
            .map(|flows| {
                let mut x = Term {
                    load_flows: flows.len(),
                    load_bps: flows.iter().map(|f| f.mean_bps).sum(),
                    ..Default::default()
                };
                for f in flows {
                    if w.flows.recs[f.flow as usize].stop < f.end {
                        x.terminated_flows += 1;
                        x.terminated_bps += f.mean_bps;
                    }
                }
                x
            })
            .collect();
        let rt: Vec<f64> = run.rt.iter().map(|r| r.unwrap_or(0) as f64).collect();
        let paths: Vec<Vec<usize>> = run.ieas.iter().map(|a| a.crosses.clone()).collect();
        let loads: Vec<f64> = terms.iter().map(|x| x.load_bps).collect();
        // Expected (beat-down) with the bottlenecks in chain order.
        let expected = chain_order(nb, &paths).map(|order| {
            let pos: Vec<usize> = (0..nb)
                .map(|b| order.iter().position(|&o| o == b).expect("in order"))
                .collect();
            let mut p2: Vec<Vec<usize>> = paths
                .iter()
                .map(|p| p.iter().map(|&b| pos[b]).collect())
                .collect();
            for p in p2.iter_mut() {
                p.sort_unstable();
            }
            let rt2: Vec<f64> = order.iter().map(|&b| rt[b]).collect();
            let e = expected_termination(&loads, &p2, &rt2);
            let per_b: Vec<f64> = (0..nb).map(|b| e.bottleneck[pos[b]]).collect();
            (e.iea, per_b)
        });
        let put =
            |m: &mut Map<String, Value>, p: &str, x: &Term, optimal: f64, expected: Option<f64>| {
                let actual = if x.load_bps > 0.0 {
                    x.terminated_bps / x.load_bps
                } else {
                    f64::NAN
                };
                m.insert(format!("{p}load_flows"), json!(x.load_flows));
                m.insert(format!("{p}load_bps"), num(x.load_bps));
                m.insert(format!("{p}terminated_flows"), json!(x.terminated_flows));
                m.insert(format!("{p}terminated_bps"), num(x.terminated_bps));
                m.insert(format!("{p}actual"), num(actual));
                m.insert(
                    format!("{p}actual_flows"),
                    num(if x.load_flows > 0 {
                        x.terminated_flows as f64 / x.load_flows as f64
                    } else {
                        f64::NAN
                    }),
                );
                m.insert(format!("{p}optimal"), num(optimal));
                m.insert(
                    format!("{p}over_termination_pct"),
                    num(if optimal > 0.0 {
                        over_termination_percent(actual, optimal)
                    } else {
                        f64::NAN
                    }),
                );
                m.insert(format!("{p}a_minus_o_pts"), num((actual - optimal) * 100.0));
                if let Some(e) = expected {
                    m.insert(format!("{p}expected"), num(e));
                    m.insert(format!("{p}a_minus_e_pts"), num((actual - e) * 100.0));
                }
            };
        let mut b_opt = vec![0.0; nb];
        for b in 0..nb {
            let mut x = Term::default();
            for (i, a) in run.ieas.iter().enumerate() {
                if a.crosses.contains(&b) {
                    x.load_flows += terms[i].load_flows;
                    x.load_bps += terms[i].load_bps;
                    x.terminated_flows += terms[i].terminated_flows;
                    x.terminated_bps += terms[i].terminated_bps;
                }
            }
            b_opt[b] = optimal_fraction(x.load_bps, rt[b]);
            let p = format!("pcn.bottleneck.{}.", names[b]);
            m.insert(p.clone() + "rt_bps", json!(rt[b]));
            m.insert(
                p.clone() + "threshold_flows",
                num(if x.load_flows > 0 {
                    rt[b] / (x.load_bps / x.load_flows as f64)
                } else {
                    f64::NAN
                }),
            );
            put(m, &p, &x, b_opt[b], expected.as_ref().map(|e| e.1[b]));
        }
        let mut all = Term::default();
        let mut first = f64::NAN;
        let mut last = f64::NAN;
        let mut rounds = 0usize;
        for (i, a) in run.ieas.iter().enumerate() {
            let x = &terms[i];
            all.load_flows += x.load_flows;
            all.load_bps += x.load_bps;
            all.terminated_flows += x.terminated_flows;
            all.terminated_bps += x.terminated_bps;
            let optimal = a.crosses.iter().map(|&b| b_opt[b]).fold(0.0, f64::max);
            let (mut f, mut l, mut r) = (f64::NAN, f64::NAN, 0usize);
            if let Some(ing) = PcnIngress::of(w, a.agent) {
                for ev in ing.terminations().iter().filter(|e| e.terminated > 0) {
                    let at = to_secs(ev.at);
                    // f64::min and max ignore a NaN operand.
                    f = f.min(at);
                    l = l.max(at);
                    r += 1;
                }
            }
            first = first.min(f);
            last = last.max(l);
            rounds += r;
            if spec.per_iea {
                let p = format!("pcn.iea.{}.", a.name);
                put(m, &p, x, optimal, expected.as_ref().map(|e| e.0[i]));
                m.insert(p.clone() + "first_termination_s", num(f));
                m.insert(p.clone() + "last_termination_s", num(l));
                m.insert(p + "termination_rounds", json!(r));
            }
        }
        m.insert("pcn.t_fail_s".into(), json!(to_secs(t.t_fail)));
        m.insert("pcn.load_flows".into(), json!(all.load_flows));
        m.insert("pcn.load_bps".into(), num(all.load_bps));
        m.insert("pcn.terminated_flows".into(), json!(all.terminated_flows));
        m.insert(
            "pcn.actual".into(),
            num(if all.load_bps > 0.0 {
                all.terminated_bps / all.load_bps
            } else {
                f64::NAN
            }),
        );
        m.insert("pcn.first_termination_s".into(), num(first));
        m.insert("pcn.last_termination_s".into(), num(last));
        m.insert("pcn.termination_rounds".into(), json!(rounds));
    }
    if spec.per_iea {
        for (name, kv) in rows {
            for (k, v) in kv {
                m.insert(format!("pcn.iea.{name}.{k}"), v);
            }
        }
    } else {
        // Totals only: leave out the aggregates' own agent keys and, on a PCN topology,
        // the access links.
        let prefixes: Vec<String> = run
            .ieas
            .iter()
            .map(|a| format!("agent.{}.", a.name))
            .collect();
        let access: Vec<String> = if sc.topology.kind.starts_with("pcn_") {
            w.net
                .links
                .iter()
                .filter(|l| !names.contains(&l.name))
                .map(|l| format!("link.{}.", l.name))
                .collect()
        } else {
            Vec::new()
        };
        m.retain(|k, _| {
            !(k.starts_with("agent.") && prefixes.iter().any(|p| k.starts_with(p.as_str()))
                || k.starts_with("link.") && access.iter().any(|p| k.starts_with(p.as_str())))
        });
    }
    short_long_ratio(w, run, m, warm);
}

/// The ratio of the mean short-haul to the mean long-haul aggregate throughput (short:
/// crossing one bottleneck, long: more than one), per sample, as the series
/// `pcn.short_long_ratio`, and its post-warm-up mean in the summary.
fn short_long_ratio(w: &mut World, run: &PcnRun, m: &mut Map<String, Value>, warm: f64) {
    if run.iea_throughput.is_empty() {
        return;
    }
    let series: Vec<Series> = run
        .iea_throughput
        .iter()
        .map(|&id| w.sampler_series(id).clone())
        .collect();
    let short: Vec<usize> = (0..run.ieas.len())
        .filter(|&i| run.ieas[i].crosses.len() == 1)
        .collect();
    let long: Vec<usize> = (0..run.ieas.len())
        .filter(|&i| run.ieas[i].crosses.len() > 1)
        .collect();
    if short.is_empty() || long.is_empty() {
        return;
    }
    let id = w.rec.id("pcn.short_long_ratio", "fraction");
    let n = series.iter().map(|s| s.v.len()).min().unwrap_or(0);
    let mean = |set: &[usize], k: usize| {
        set.iter().map(|&i| series[i].v[k]).sum::<f64>() / set.len() as f64
    };
    let (mut s_sum, mut l_sum) = (0.0, 0.0);
    for k in 0..n {
        let (s, l) = (mean(&short, k), mean(&long, k));
        let t = series[0].t[k];
        w.rec.push(
            id,
            crate::time::secs(t),
            if l > 0.0 { s / l } else { f64::NAN },
        );
        if t > warm {
            s_sum += s;
            l_sum += l;
        }
    }
    m.insert(
        "pcn.short_long_ratio".into(),
        num(if l_sum > 0.0 { s_sum / l_sum } else { f64::NAN }),
    );
}

// ---------------------------------------------------------------------------------------
// The family

/// The PCN family of the scenario language: the `[pcn]` section and the topologies
/// `pcn_single`, `pcn_rtt` and `pcn_parking_lot`.
pub struct PcnFamily;

/// The registered instance.
pub static PCN: PcnFamily = PcnFamily;

impl Family for PcnFamily {
    fn name(&self) -> &'static str {
        "pcn"
    }
    fn sections(&self) -> &'static [&'static str] {
        &["pcn"]
    }
    fn topology_kinds(&self) -> &'static [&'static str] {
        &["pcn_single", "pcn_rtt", "pcn_parking_lot"]
    }
    fn mark_bits(&self) -> u16 {
        super::marks::ALL
    }
    fn marks(&self) -> &'static [(&'static str, u16)] {
        &[
            ("pcn", super::marks::PCN),
            (
                "pcn_admission",
                super::marks::PCN | super::marks::PCN_ADMISSION,
            ),
            (
                "pcn_termination",
                super::marks::PCN | super::marks::PCN_TERMINATION,
            ),
        ]
    }
    fn read_topology(&self, cx: &Cx, t: &Tbl, root: &Tbl) -> Option<Topology> {
        read_topology(cx, t, root)
    }
    fn read(&self, cx: &Cx, root: &Tbl, core: &Core) -> Option<Option<Arc<dyn Mechanism>>> {
        let duration = core.run.map(|r| r.duration);
        let spec = read(
            cx,
            root,
            core.topology,
            core.traffic,
            core.base_dir,
            duration,
        )?;
        Some(spec.map(|s| Arc::new(s) as Arc<dyn Mechanism>))
    }
}

impl Mechanism for PcnSpec {
    fn family(&self) -> &'static str {
        "pcn"
    }
    fn build(
        &self,
        sc: &Scenario,
        w: &mut World,
        _core: &BuiltCore,
    ) -> Result<Box<dyn MechanismRun>, String> {
        Ok(Box::new(build(self, sc, w)?))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
