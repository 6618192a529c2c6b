//! The `[pcn]` section and the PCN topologies, read into a [`PcnSpec`] and a
//! [`Topology`]. The keys of the section, of its tables and of the topology kinds are
//! read through their declaration ([`params`]).

use super::*;
use crate::decl::{self, Absent, Section};
use crate::mechanisms::pcn::params::{self, CLE, SECTION, TERMINATION, THRESHOLDS};
use crate::scenario::read_key;

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

/// The access delays of `pcn_rtt` (`k`): `access_delay` (all equal), or `access_delays`
/// as a list (one per ingress) or as `{ from, to }` (spread evenly).
fn access_delays(cx: &Cx, t: &Tbl, k: &Section, n: Option<u64>) -> Option<Vec<Time>> {
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
    let d = value(cx, t, k, "access_delay")?.as_time();
    Some(vec![d; n? as usize])
}

/// Reads a PCN topology from `[topology]` (and the `[links."NAME"]` overrides): the
/// keys its kind declares ([`params::TOPOLOGIES`]), read through the declaration, and no
/// other. The network is the one [`single_link`], [`rtt_star_egresses`] or
/// [`parking_lot`] builds: unidirectional links in the data direction, links other than
/// the bottlenecks 100 times faster, drop-tail queues of [`DEFAULT_QUEUE_PACKETS`]
/// packets.
pub(super) fn read_topology(cx: &Cx, t: &Tbl, root: &Tbl) -> Option<Topology> {
    let kind = t.req_str(cx, "kind")?;
    let Some(k) = params::TOPOLOGIES.iter().copied().find(|k| k.name == kind) else {
        let names: Vec<&str> = params::TOPOLOGIES.iter().map(|k| k.name).collect();
        t.error(
            cx,
            "kind",
            format!(
                "unknown topology {kind:?}; the PCN topologies are {}",
                decl::or_list(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
            ),
        );
        t.skip_rest();
        return None;
    };
    let mut known = vec!["kind"];
    known.extend(k.keys());
    let rate = value(cx, t, k, "rate").map(|v| v.as_u64());
    // A queue table holds a declared kind of its own (`queue.*`).
    let queue = if t.has("queue") {
        t.table(cx, "queue").and_then(|q| read_queue(cx, &q))
    } else {
        Some(QueueSpec::DropTail {
            limit: QueueLimit::Packets(DEFAULT_QUEUE_PACKETS as u64),
        })
    };
    let count = |key| value(cx, t, k, key).map(|v| v.as_u64());
    let time = |key| value(cx, t, k, key).map(|v| v.as_time());
    let mut w = World::new(0);
    let built = match k.name {
        "pcn_single" => {
            let delay = time("delay");
            match (rate, delay) {
                (Some(r), Some(d)) => Some(single_link(&mut w, r, d)),
                _ => None,
            }
        }
        "pcn_rtt" => {
            let n = count("ingresses");
            let m = count("egresses");
            let bd = time("bottleneck_delay");
            let delays = access_delays(cx, t, k, n);
            match (rate, bd, delays, m) {
                (Some(r), Some(bd), Some(ds), Some(m)) => {
                    Some(rtt_star_egresses(&mut w, r, bd, &ds, m as usize))
                }
                _ => None,
            }
        }
        _ => {
            let n = count("bottlenecks");
            match (rate, n) {
                (Some(r), Some(n)) => Some(parking_lot(&mut w, n as usize, r)),
                _ => None,
            }
        }
    };
    t.finish(cx, &known);
    let (_, queue) = (built?, queue?);
    let mut topo = Topology {
        kind: k.name.to_string(),
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
pub(super) fn link_overrides(cx: &Cx, root: &Tbl, topo: &mut Topology) {
    apply_link_overrides(cx, root, topo, false);
}

/// Bottleneck link names, and aggregates as (ingress, egress) node names.
pub(super) type Implied = (Vec<String>, Vec<(String, String)>);

/// The bottlenecks and aggregates a PCN topology implies (link names in chain order;
/// aggregates as (ingress, egress) node names, long one first in a parking lot).
pub(super) fn implied(topo: &Topology) -> Option<Implied> {
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

/// The declared key `key` of `s` in `t` ([`params`]): as given, checked against its
/// declaration, else its fixed default; `Some(None)` when it is absent and its default
/// is derived; `None` when it is wrong or, required, missing (reported).
pub(super) fn declared(cx: &Cx, t: &Tbl, s: &Section, key: &str) -> Option<Option<decl::Value>> {
    if let Some(v) = read_key(cx, t, s, key)? {
        return Some(Some(v));
    }
    let p = s.param(key);
    match p.default {
        Absent::Is(_) => Some(p.default_value()),
        Absent::Derived(_) => Some(None),
        Absent::Required => {
            cx.error(
                t.line(),
                &t.key_path(key),
                format!("missing (required: {})", p.doc),
            );
            None
        }
    }
}

/// [`declared`] of a key with a fixed default or required: its value, or `None` when it
/// is wrong or missing (reported).
pub(super) fn value(cx: &Cx, t: &Tbl, s: &Section, key: &str) -> Option<decl::Value> {
    debug_assert!(!matches!(s.param(key).default, Absent::Derived(_)));
    declared(cx, t, s, key)?
}

/// A declared boolean.
pub(super) fn flag(v: decl::Value) -> bool {
    matches!(v, decl::Value::Bool(true))
}

impl RateOrFraction {
    /// A value of a [`decl::Type::RateOrFraction`] key: a rate, or a fraction.
    pub fn from_value(v: &decl::Value) -> Self {
        match v {
            decl::Value::Rate(r) => RateOrFraction::Rate(*r),
            v => RateOrFraction::Fraction(v.as_f64()),
        }
    }
}

/// Reports `problems` of the declared rules on `t`; false if there were any.
pub(super) fn report(cx: &Cx, t: &Tbl, problems: Vec<decl::Problem>) -> bool {
    for (key, reason) in &problems {
        t.error(cx, key, reason.clone());
    }
    problems.is_empty()
}

pub(super) fn read_thresholds(cx: &Cx, p: &Tbl) -> Option<VqThresholds> {
    if !p.has("thresholds") {
        return Some(VqThresholds::default());
    }
    let t = p.table(cx, "thresholds")?;
    let [min, max, limit] = ["min", "max", "limit"].map(|k| value(cx, &t, &THRESHOLDS, k));
    t.finish(cx, &THRESHOLDS.keys());
    let v = decl::Values(vec![("min", min?), ("max", max?), ("limit", limit?)]);
    // The order is a property of the table as a whole: reported on it.
    if !report(cx, p, params::thresholds_rules(&v)) {
        return None;
    }
    let s = |k| to_secs(v.time(k));
    Some(VqThresholds {
        min_s: s("min"),
        max_s: s("max"),
        limit_s: s("limit"),
    })
}

pub(super) fn read_cle(cx: &Cx, p: &Tbl) -> Option<(CleMode, f64)> {
    if !p.has("cle") {
        let (w, threshold) = params::cle_defaults("per_packet");
        debug_assert_eq!(CleMode::per_packet(), CleMode::PerPacket { w });
        return Some((CleMode::per_packet(), threshold));
    }
    let t = p.table(cx, "cle")?;
    let mode = value(cx, &t, &CLE, "mode").map(|m| m.as_str().to_string());
    let w = declared(cx, &t, &CLE, "w");
    let threshold = declared(cx, &t, &CLE, "threshold");
    // A rule of the reader: the interval is the interval mode's.
    let period = match mode.as_deref() {
        Some("interval") => value(cx, &t, &CLE, "interval").map(|v| Some(v.as_time())),
        Some(_) if t.has("interval") => {
            t.error(cx, "interval", "only used with mode = \"interval\"");
            Some(None)
        }
        _ => Some(None),
    };
    t.finish(cx, &CLE.keys());
    let (mode, w, threshold, period) = (mode?, w?, threshold?, period?);
    let (dw, dth) = params::cle_defaults(&mode);
    let w = w.map_or(dw, |v| v.as_f64());
    let threshold = threshold.map_or(dth, |v| v.as_f64());
    let out = match period {
        Some(period) => (CleMode::Interval { w, period }, threshold),
        None => (CleMode::PerPacket { w }, threshold),
    };
    Some(out)
}

pub(super) fn read_termination(cx: &Cx, p: &Tbl, duration: Option<Time>) -> Option<PcnTermination> {
    let t = p.table(cx, "termination")?;
    let get = |k| value(cx, &t, &TERMINATION, k);
    let rt = get("rt").map(|v| RateOrFraction::from_value(&v));
    let before = get("before").map(|v| RateOrFraction::from_value(&v));
    let t_fail = get("t_fail").map(|v| v.as_time());
    let rounding = get("rounding").map(|v| match v.as_str() {
        "down" => Rounding::Down,
        "nearest" => Rounding::Nearest,
        _ => Rounding::Up,
    });
    let depth = get("depth").map(|v| match v {
        decl::Value::Size(b) => Depth::Bytes(b),
        v => Depth::Packets(v.as_u64()),
    });
    let stop = get("stop_arrivals").map(flag);
    let sar = get("sar_period").map(|v| v.as_time());
    let meas = get("rate_measurement").map(|v| v.as_time());
    let stale = get("ignore_stale_reports").map(flag);
    t.finish(cx, &TERMINATION.keys());
    let t_fail = t_fail?;
    // A rule of the reader: the failure falls inside the run.
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

/// Reads `[pcn]`: `Some(None)` when absent, `None` after a problem.
pub(super) fn read(
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
            format!(
                "missing (required: {}, e.g. [\"r0-r1\"])",
                SECTION.param("bottlenecks").doc
            ),
        );
        None
    };
    // Admission.
    let admission = if p.has("ra") {
        let ra = declared(cx, &p, &SECTION, "ra")
            .and_then(|v| v.map(|v| RateOrFraction::from_value(&v)));
        let curve = value(cx, &p, &SECTION, "marking").map(|m| match m.as_str() {
            "step" => MarkingCurve::Step,
            _ => MarkingCurve::Ramp,
        });
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
    let sample_interval = value(cx, &p, &SECTION, "sample_interval").map(|v| v.as_time());
    let iea_series = value(cx, &p, &SECTION, "iea_series").map(flag);
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
    let per_iea = declared(cx, &p, &SECTION, "per_iea").map(|v| match v {
        Some(v) => flag(v),
        None => ieas
            .as_ref()
            .is_none_or(|v| v.len() <= PER_IEA_DEFAULT_LIMIT),
    });
    p.finish(cx, &SECTION.keys());
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
