//! The scenario language: a TOML file (or text) describing one run — topology, queues,
//! traffic, metrics, duration, warm-up and seed — validated in full before anything
//! runs. `docs/scenarios.md` documents every key.
//!
//! Validation reports every problem at once, each as `FILE:LINE: key.path: reason`
//! ([`Diagnostic`]): unknown keys, wrong units, non-positive rates, unknown nodes or
//! links, routes that do not connect, unreadable trace files.

pub mod budget;
mod build;
mod declared;
pub mod expand;
mod family;
mod meters;
pub mod sections;
mod topo_index;
mod topology;
pub mod topology_kinds;
mod trace;
mod traffic_read;
pub mod units;
pub mod walk;

pub use build::{
    build, memory_estimate, run, run_with, BuildProgress, BuildStop, RunOptions, RunOutput,
    BUILD_PROGRESS_STEP, BYTES_PER_FLOW, BYTES_PER_LINK,
};
pub use declared::{key_into, read_key, read_names, read_params};
pub use family::{
    read_section, BuiltCore, Connection, Core, Family, Mechanism, MechanismRun, NoAnalysis,
    Registry,
};
pub use meters::MeterSpec;
pub use topology::{apply_link_overrides, read_queue, LinkSpec, QueueSpec, Topology};
use traffic_read::*;
pub use traffic_read::{entry_keys, read_model, MAX_FLOWS_PER_ENTRY};
pub use walk::Diagnostic;

use crate::rng::fnv1a64;
use crate::time::Time;
use crate::traffic::{models, Arrivals, Holding, SourceModel};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml_edit::{DocumentMut, ImDocument};
use walk::{Cx, Tbl};

/// Run settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Simulated duration.
    pub duration: Time,
    /// Statistics before this time are discarded.
    pub warmup: Time,
    /// Seed used when none is given on the command line.
    pub seed: u64,
    /// Which links the summary reports (`link.NAME.*`).
    pub link_metrics: LinkMetrics,
}

/// Which links a run's summary reports: all of them (the default), none, or the named
/// ones (for topologies whose per-link lines would dwarf everything else).
#[derive(Clone, Debug, PartialEq, Default)]
pub enum LinkMetrics {
    /// Every link.
    #[default]
    All,
    /// No link.
    None,
    /// The links with these indices.
    Only(Vec<usize>),
}

/// Flow-level arrivals of a traffic entry.
#[derive(Clone, Debug, PartialEq)]
pub struct CallsSpec {
    /// Arrival process.
    pub arrivals: Arrivals,
    /// Holding times.
    pub holding: Holding,
    /// Trunk limit (calls beyond it are blocked).
    pub max_active: Option<u64>,
    /// No arrivals after this time.
    pub stop: Option<Time>,
}

/// TCP connections with an infinite backlog (`model = "tcp"`).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpSpec {
    /// Segment size on the wire, bytes (40 of them header).
    pub packet_size: u32,
    /// Advertised window, segments.
    pub wnd: u32,
    /// Delayed ACKs at the receivers (100 ms timer), or an ACK per segment.
    pub delayed_ack: bool,
    /// Minimum retransmission timeout.
    pub min_rto: Time,
    /// Retransmission timeout before the first RTT sample.
    pub init_rto: Time,
    /// Clock granularity of RTT measurement.
    pub tick: Time,
    /// Connection starts are uniform in `[start, start + start_spread]`.
    pub start_spread: Time,
    /// Congestion control: Reno (default), NewReno or CUBIC.
    pub congestion: crate::transport::Congestion,
    /// ECN-capable connections (RFC 3168).
    pub ecn: bool,
    /// SACK-based loss recovery (RFC 2018 blocks, RFC 6675 recovery); NewReno or CUBIC.
    pub sack: bool,
    /// The timestamp option (RFC 7323): an RTT sample from every ACK of new data.
    pub timestamps: bool,
}

impl Default for TcpSpec {
    /// 576-byte segments, an unlimited window, an ACK per segment, min RTO 200 ms,
    /// initial RTO 3 s, 10 ms tick, no start spread, Reno.
    fn default() -> Self {
        TcpSpec {
            packet_size: 576,
            wnd: 1_000_000,
            delayed_ack: false,
            min_rto: crate::time::millis(200.0),
            init_rto: crate::time::secs(3.0),
            tick: crate::time::millis(10.0),
            start_spread: 0,
            congestion: crate::transport::Congestion::Reno,
            ecn: false,
            sack: false,
            timestamps: false,
        }
    }
}

/// What a traffic entry's flows are.
#[derive(Clone, Debug)]
pub enum TrafficModel {
    /// Open-loop packet sources (CBR, on-off, Poisson, trace, codecs).
    Source(SourceModel),
    /// TCP connections.
    Tcp(TcpSpec),
}

impl TrafficModel {
    /// The source model, if this entry is open-loop.
    pub fn source(&self) -> Option<&SourceModel> {
        match self {
            TrafficModel::Source(m) => Some(m),
            TrafficModel::Tcp(_) => None,
        }
    }
}

/// One traffic entry: static flows, TCP connections, or flows created by call arrivals.
#[derive(Clone, Debug)]
pub struct TrafficSpec {
    /// Name; also the name of the group its flows are counted in.
    pub name: String,
    /// Source node index.
    pub from: usize,
    /// Destination node index.
    pub to: usize,
    /// What each flow sends.
    pub model: TrafficModel,
    /// Number of static flows or TCP connections (ignored with `calls`).
    pub flows: u64,
    /// When static flows start (each with a random phase within one spacing).
    pub start: Time,
    /// When static flows stop.
    pub stop: Option<Time>,
    /// Randomization: each packet delayed by U(0, jitter x spacing).
    pub jitter: f64,
    /// Class of the packets.
    pub class: u8,
    /// Call arrivals, if flow-level.
    pub calls: Option<CallsSpec>,
    /// Explicit route as node indices, if given.
    pub route: Option<Vec<usize>>,
    /// Host profiler applied to each flow (or connection) of the entry.
    pub profile: Option<MeterSpec>,
    /// Keep a record per flow (`per_flow = false`: the entry's open-loop flows share
    /// their group's one record, for flows nobody measures individually).
    pub per_flow: bool,
}

/// A metric to sample.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricSpec {
    /// Series name.
    pub name: String,
    /// What to sample.
    pub kind: MetricKind,
    /// Sampling interval.
    pub interval: Time,
}

/// What a metric samples.
#[derive(Clone, Debug, PartialEq)]
pub enum MetricKind {
    /// Bits per second sent on a link (optionally one class or PCN traffic only).
    LinkThroughput {
        /// Link index.
        link: usize,
        /// Only this class.
        class: Option<u8>,
        /// Only packets carrying all bits of this named mark (a family's mark).
        marked: Option<(&'static str, u16)>,
    },
    /// Packets queued on a link.
    QueueLength {
        /// Link index.
        link: usize,
    },
    /// Bits per second delivered to a traffic entry's flows.
    GroupThroughput {
        /// Traffic entry index.
        traffic: usize,
    },
    /// The congestion window, slow-start threshold (segments, at every change) and RTT
    /// samples (seconds) of every connection of a TCP entry: series `tcp.NAME.k.cwnd`,
    /// `.ssthresh` and `.rtt` (the metric's name and interval are not used).
    TcpWindow {
        /// Traffic entry index (a TCP entry).
        traffic: usize,
    },
    /// The average queue of a RED or RIO port (packets): of the whole queue, or (RIO) of
    /// the IN packets only.
    QueueAverage {
        /// Link index.
        link: usize,
        /// True for RIO's IN average.
        in_only: bool,
    },
}

/// A validated scenario, ready to build.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// File name it came from (for messages).
    pub file: String,
    /// Run settings.
    pub run: RunSpec,
    /// Nodes and links.
    pub topology: Topology,
    /// Traffic entries.
    pub traffic: Vec<TrafficSpec>,
    /// Sampled metrics.
    pub metrics: Vec<MetricSpec>,
    /// Packet traces (`[[trace]]`).
    pub traces: Vec<crate::trace::TraceSpec>,
    /// The mechanism families this scenario uses, in build order.
    pub mechanisms: Vec<Arc<dyn Mechanism>>,
    /// Hash of the scenario text and overrides (hex).
    pub hash: String,
}

/// Applies `key.path=value` overrides to TOML text. A value that parses as TOML (number,
/// boolean, quoted string, array, inline table) is used as such, anything else as a
/// string. Path segments that are integers index arrays (`traffic.0.flows=10`); in an
/// array of tables whose entries have names, a name picks an entry too
/// (`traffic.ftp.flows=10`); missing tables on the way are created.
pub fn apply_overrides(text: &str, overrides: &[(String, String)]) -> Result<String, String> {
    apply_overrides_resolved(text, overrides).map(|(t, _)| t)
}

/// [`apply_overrides`], also returning each override's path with entry names resolved to
/// indices (`traffic.ftp.flows` -> `traffic.0.flows`), the paths diagnostics name.
pub fn apply_overrides_resolved(
    text: &str,
    overrides: &[(String, String)],
) -> Result<(String, Vec<String>), String> {
    apply_overrides_traced(text, overrides).map(|(t, p, _)| (t, p))
}

/// [`apply_overrides_resolved`], also returning where each `[[traffic]]` entry came from
/// when entries with a `count` were expanded.
fn apply_overrides_traced(
    text: &str,
    overrides: &[(String, String)],
) -> Result<(String, Vec<String>, Option<expand::Origin>), String> {
    let counted = text.contains("count");
    if overrides.is_empty() && !counted {
        return Ok((text.to_string(), Vec::new(), None));
    }
    let mut doc: DocumentMut = match text.parse() {
        Ok(d) => d,
        // Invalid TOML: the reader reports it with its line.
        Err(_) if overrides.is_empty() => return Ok((text.to_string(), Vec::new(), None)),
        Err(e) => return Err(toml_edit::TomlError::to_string(&e)),
    };
    // Entries with a `count` become their copies first, so overrides can name them.
    let origin = if counted {
        expand::expand_counts_traced(&mut doc)?
    } else {
        None
    };
    if overrides.is_empty() && origin.is_none() {
        return Ok((text.to_string(), Vec::new(), None));
    }
    let mut paths = Vec::with_capacity(overrides.len());
    for (path, raw) in overrides {
        let value: toml_edit::Value = raw
            .parse::<toml_edit::Value>()
            .unwrap_or_else(|_| toml_edit::Value::from(raw.as_str()));
        let segs = split_key_path(path).map_err(|why| format!("--set {path}: {why}"))?;
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        if segs.iter().any(|s| s.is_empty()) {
            return Err(format!("--set {path}: empty key segment"));
        }
        let mut resolved = Vec::with_capacity(segs.len());
        set_path(doc.as_item_mut(), &segs, value, path, &mut resolved)?;
        paths.push(resolved.join("."));
    }
    Ok((doc.to_string(), paths, origin))
}

/// Splits a dotted key path into its keys; a key may be quoted as in TOML
/// (`links."n1-n2".rate`, `links.'a.b'.rate`) to hold dots.
pub fn split_key_path(path: &str) -> Result<Vec<String>, String> {
    let mut segs = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars().peekable();
    let mut quoted_seg = false;
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' if cur.is_empty() && !quoted_seg => {
                let mut closed = false;
                while let Some(d) = chars.next() {
                    if d == c {
                        closed = true;
                        break;
                    }
                    if d == '\\' && c == '"' {
                        if let Some(e) = chars.next() {
                            cur.push(e);
                        }
                        continue;
                    }
                    cur.push(d);
                }
                if !closed {
                    return Err(format!("unclosed quote {c} in the key path"));
                }
                quoted_seg = true;
                if chars.peek().is_some_and(|&n| n != '.') {
                    return Err("a quoted key must be followed by '.' or end the path".into());
                }
            }
            '.' => {
                if cur.is_empty() && !quoted_seg {
                    return Err("empty key segment".into());
                }
                segs.push(std::mem::take(&mut cur));
                quoted_seg = false;
            }
            c => cur.push(c),
        }
    }
    if cur.is_empty() && !quoted_seg {
        return Err("empty key segment".into());
    }
    segs.push(cur);
    Ok(segs)
}

fn set_path(
    item: &mut toml_edit::Item,
    segs: &[&str],
    value: toml_edit::Value,
    full: &str,
    resolved: &mut Vec<String>,
) -> Result<(), String> {
    let seg = segs[0];
    let last = segs.len() == 1;
    if seg.parse::<usize>().is_err() {
        if let Some(aot) = item.as_array_of_tables_mut() {
            let names: Vec<Option<String>> = aot
                .iter()
                .map(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_string))
                .collect();
            let Some(idx) = names.iter().position(|n| n.as_deref() == Some(seg)) else {
                let known: Vec<&str> = names.iter().flatten().map(String::as_str).collect();
                return Err(format!(
                    "--set {full}: no entry named {seg:?} (named: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            };
            resolved.push(idx.to_string());
            if last {
                return Err(format!("--set {full}: cannot replace a whole table"));
            }
            let t = aot.get_mut(idx).expect("found above");
            return set_in(t, &segs[1..], value, full, resolved);
        }
    }
    if let Ok(idx) = seg.parse::<usize>() {
        if let Some(aot) = item.as_array_of_tables_mut() {
            let n = aot.len();
            let t = aot
                .get_mut(idx)
                .ok_or_else(|| format!("--set {full}: index {idx} out of range ({n} entries)"))?;
            resolved.push(seg.to_string());
            if last {
                return Err(format!("--set {full}: cannot replace a whole table"));
            }
            return set_in(t, &segs[1..], value, full, resolved);
        }
        if let Some(arr) = item.as_array_mut() {
            let n = arr.len();
            let slot = arr
                .get_mut(idx)
                .ok_or_else(|| format!("--set {full}: index {idx} out of range ({n} entries)"))?;
            resolved.push(seg.to_string());
            if last {
                *slot = value;
                return Ok(());
            }
            let t = slot
                .as_inline_table_mut()
                .ok_or_else(|| format!("--set {full}: element {idx} is not a table"))?;
            return set_in(t, &segs[1..], value, full, resolved);
        }
    }
    let t = item
        .as_table_like_mut()
        .ok_or_else(|| format!("--set {full}: {seg} is not inside a table"))?;
    set_in(t, segs, value, full, resolved)
}

fn set_in(
    t: &mut dyn toml_edit::TableLike,
    segs: &[&str],
    value: toml_edit::Value,
    full: &str,
    resolved: &mut Vec<String>,
) -> Result<(), String> {
    resolved.push(segs[0].to_string());
    if segs.len() == 1 {
        t.insert(segs[0], toml_edit::Item::Value(value));
        return Ok(());
    }
    if !t.contains_key(segs[0]) {
        t.insert(
            segs[0],
            toml_edit::Item::Value(toml_edit::Value::InlineTable(toml_edit::InlineTable::new())),
        );
    }
    let child = t.get_mut(segs[0]).expect("present");
    set_path(child, &segs[1..], value, full, resolved)
}

/// Parses and validates scenario text with the mechanism families of `registry`.
/// `file` names it in messages; trace files are resolved relative to `base_dir`.
/// (`qossim::parse` reads with every family of this crate.)
pub fn parse(
    registry: &Registry,
    text: &str,
    file: &str,
    base_dir: &Path,
    overrides: &[(String, String)],
) -> Result<Scenario, Vec<Diagnostic>> {
    let (merged, resolved, origin) = match apply_overrides_traced(text, overrides) {
        Ok(t) => t,
        Err(e) => {
            let path = e
                .strip_prefix("--set ")
                .and_then(|r| r.split_once(": "))
                .map(|(p, r)| (p.to_string(), r.to_string()));
            // A `count` that cannot be expanded names its entry in the file.
            let in_file = e
                .starts_with("traffic.")
                .then(|| e.split_once(": "))
                .flatten()
                .map(|(p, r)| (p.to_string(), r.to_string()));
            let (file, path, reason) = match (path, in_file) {
                (Some((p, r)), _) => ("--set".to_string(), p, r),
                (None, Some((p, r))) => (file.to_string(), p, r),
                (None, None) => (file.to_string(), String::new(), e.clone()),
            };
            return Err(vec![Diagnostic {
                file: if path.is_empty() {
                    file.to_string()
                } else {
                    "--set".into()
                },
                // The override that failed: its place among the overrides.
                line: overrides
                    .iter()
                    .position(|(k, _)| *k == path)
                    .map_or(1, |i| i + 1),
                path: walk::shown_max(&path, 512),
                reason: walk::shown_max(&reason, walk::SHOWN_REASON_CHARS),
            }]);
        }
    };
    let doc = match ImDocument::parse(merged.clone()) {
        Ok(d) => d,
        Err(e) => {
            let cx = Cx::new(file, &merged, vec![]);
            let line = e.span().map(|s| cx.line_of(s.start)).unwrap_or(1);
            let msg = e.message().trim().to_string();
            return Err(vec![Diagnostic {
                file: file.to_string(),
                line,
                path: "(syntax)".into(),
                reason: format!("invalid TOML: {msg}"),
            }]);
        }
    };
    let mut cx = Cx::new(file, &merged, resolved);
    if let Some(origin) = origin {
        cx.set_expansion(expand::line_anchors(text, &merged, &origin), origin);
    }
    let root = Tbl::new(doc.as_table(), "", 1);
    let sc = read(registry, &cx, &root, file, base_dir);
    let mut known = vec!["run", "topology", "links", "traffic", "metric", "trace"];
    known.extend(registry.sections());
    root.finish(&cx, &known);
    if let (Some(sc), false) = (&sc, cx.has_errors()) {
        budget::check(&cx, doc.as_table(), sc, budget::memory_budget());
    }
    if cx.has_errors() {
        return Err(cx.into_diagnostics());
    }
    let mut sc = sc.expect("no errors means a scenario");
    sc.hash = format!("{:016x}", fnv1a64(merged.as_bytes()));
    Ok(sc)
}

/// Reads and validates a scenario file with the mechanism families of `registry`
/// (`qossim::load` reads with every family of this crate).
pub fn load(
    registry: &Registry,
    path: &Path,
    overrides: &[(String, String)],
) -> Result<Scenario, Vec<Diagnostic>> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![Diagnostic {
            file: file.clone(),
            line: 0,
            path: "(file)".into(),
            reason: format!("cannot read scenario: {e}"),
        }]
    })?;
    let base = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    parse(registry, &text, &file, &base, overrides)
}

fn read(registry: &Registry, cx: &Cx, root: &Tbl, file: &str, base: &Path) -> Option<Scenario> {
    let run = read_run(cx, root);
    let topology = match root.table(cx, "topology") {
        Some(t) => {
            let kind = if t.has("kind") {
                t.str(cx, "kind")
            } else {
                None
            };
            match kind.as_deref().and_then(|k| registry.topology_family(k)) {
                Some(f) => f.read_topology(cx, &t, root),
                None => topology::read(cx, &t, root, registry),
            }
        }
        None => {
            cx.error(1, "topology", "missing (required): describe the network");
            None
        }
    };
    let Some(topo) = topology else {
        // Keep the other sections from being reported as unknown.
        for k in ["traffic", "metric", "links", "trace"]
            .into_iter()
            .chain(registry.sections())
        {
            root.has(k);
        }
        return None;
    };
    let entries = root.tables(cx, "traffic");
    let read: Vec<(usize, TrafficSpec)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, t)| read_traffic(cx, t, &topo, base).map(|s| (i, s)))
        .collect();
    let mut names = std::collections::HashMap::new();
    for (i, t) in &read {
        let line = entries[*i].line_of(cx, "name");
        if let Some(first) = names.insert(t.name.clone(), line) {
            names.insert(t.name.clone(), first);
            cx.error(
                line,
                &format!("traffic.{i}.name"),
                format!(
                    "duplicate traffic name {:?} (first given on line {first})",
                    t.name
                ),
            );
        }
    }
    let traffic: Vec<TrafficSpec> = read.into_iter().map(|(_, t)| t).collect();
    let metric_tables = root.tables(cx, "metric");
    let mut metrics: Vec<MetricSpec> = Vec::new();
    let mut series_names = std::collections::HashMap::new();
    for (i, m) in metric_tables.iter().enumerate() {
        let Some(spec) = read_metric(registry, cx, m, &topo, &traffic) else {
            continue;
        };
        let line = if m.has("name") {
            m.line_of(cx, "name")
        } else {
            m.line()
        };
        if let Some(&first) = series_names.get(&spec.name) {
            cx.error(
                line,
                &format!("metric.{i}.name"),
                format!(
                    "a second series named {:?} (the first is on line {first}); give one a \
                     `name` of its own",
                    spec.name
                ),
            );
            continue;
        }
        series_names.insert(spec.name.clone(), line);
        metrics.push(spec);
    }
    let traces = trace::read(cx, root, &topo);
    let mut run = run;
    if let Some(RunSpec {
        link_metrics: LinkMetrics::Only(links),
        ..
    }) = run.as_mut()
    {
        *links = read_link_metrics(cx, root, &topo);
    }
    let core = Core {
        run: run.as_ref(),
        topology: &topo,
        traffic: &traffic,
        base_dir: base,
    };
    let mut mechanisms = Vec::new();
    let mut ok = true;
    for f in registry.families() {
        match f.read(cx, root, &core) {
            Some(Some(m)) => mechanisms.push(m),
            Some(None) => {}
            None => ok = false,
        }
    }
    if !ok {
        return None;
    }
    Some(Scenario {
        file: file.to_string(),
        run: run?,
        mechanisms,
        topology: topo,
        traffic,
        metrics,
        traces: traces?,
        hash: String::new(),
    })
}

impl Scenario {
    /// The validated part of this scenario that belongs to a family, by its type
    /// (`sc.mechanism::<PcnSpec>()`), if the scenario uses it.
    pub fn mechanism<T: Mechanism>(&self) -> Option<&T> {
        self.mechanisms
            .iter()
            .find_map(|m| (&**m as &dyn std::any::Any).downcast_ref::<T>())
    }
}

/// The links named by `run.link_metrics` (a list), each checked against the topology.
fn read_link_metrics(cx: &Cx, root: &Tbl, topo: &Topology) -> Vec<usize> {
    let Some(t) = root.table(cx, "run") else {
        return Vec::new();
    };
    let Some(items) = t.array(cx, "link_metrics") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (j, (v, line)) in items.into_iter().enumerate() {
        let path = format!("run.link_metrics.{j}");
        match v.as_str().map(|n| (n, topo.link(n))) {
            Some((_, Some(i))) => out.push(i),
            Some((n, None)) => cx.error(
                line,
                &path,
                format!("unknown link {n:?}; links are: {}", topo.link_list()),
            ),
            None => cx.error(line, &path, "expected a link name"),
        }
    }
    out
}

fn read_run(cx: &Cx, root: &Tbl) -> Option<RunSpec> {
    let Some(t) = root.table(cx, "run") else {
        cx.error(1, "run", "missing (required): give at least run.duration");
        return None;
    };
    // The scalar keys, read through their declaration (sections::RUN): absent ones take
    // the declared default; a zero duration is out of its declared bounds.
    let duration = if t.has("duration") {
        declared::read_key(cx, &t, &sections::RUN, "duration")
            .map(|v| v.expect("present").as_time())
    } else {
        cx.error(t.line(), "run.duration", "missing (required)");
        None
    };
    let declared = |key: &str| {
        declared::key_or_default(cx, &t, &sections::RUN, key)
            .map(|v| v.unwrap_or_else(|| panic!("run.{key} has a fixed default")))
    };
    let warmup = declared("warmup").map(|v| v.as_time());
    let seed = declared("seed").map(|v| v.as_u64());
    let link_metrics = if t.has("link_metrics") {
        match t.raw(cx, "link_metrics") {
            Some((item, _)) if item.as_str() == Some("all") => Some(LinkMetrics::All),
            Some((item, _)) if item.as_str() == Some("none") => Some(LinkMetrics::None),
            // A list of names: checked against the topology once it is read.
            Some((item, _)) if item.as_array().is_some() => Some(LinkMetrics::Only(Vec::new())),
            _ => {
                t.error(
                    cx,
                    "link_metrics",
                    "expected \"all\", \"none\" or a list of link names",
                );
                None
            }
        }
    } else {
        Some(LinkMetrics::All)
    };
    t.finish(cx, &sections::RUN.keys());
    let (d, w) = (duration?, warmup?);
    if w >= d {
        t.error(cx, "warmup", "must be shorter than run.duration");
        return None;
    }
    Some(RunSpec {
        duration: d,
        warmup: w,
        seed: seed?,
        link_metrics: link_metrics?,
    })
}

fn read_metric(
    registry: &Registry,
    cx: &Cx,
    m: &Tbl,
    topo: &Topology,
    traffic: &[TrafficSpec],
) -> Option<MetricSpec> {
    use sections::METRIC;
    // The kind and the interval, read through their declaration (sections::METRIC).
    let kind = if m.has("kind") {
        declared::read_key(cx, m, &METRIC, "kind").map(|v| v.expect("present").as_str().to_string())
    } else {
        cx.error(m.line(), &m.key_path("kind"), "missing (required)");
        None
    };
    let interval = declared::key_or_default(cx, m, &METRIC, "interval")
        .map(|v| v.expect("a fixed default").as_time());
    let name = if m.has("name") {
        m.name(cx, "name")
    } else {
        Some(String::new())
    };
    let link = |cx: &Cx| -> Option<usize> {
        let l = m.req_str(cx, "link")?;
        match topo.link(&l) {
            Some(i) => Some(i),
            None => {
                m.error(
                    cx,
                    "link",
                    format!("unknown link {l:?}; links are: {}", topo.link_list()),
                );
                None
            }
        }
    };
    let k = match kind.as_deref() {
        Some("link_throughput") => {
            let l = link(cx);
            let class =
                declared::read_key(cx, m, &METRIC, "class").map(|c| c.map(|v| v.as_u64() as u8));
            let marked = if m.has("marked") {
                m.str(cx, "marked").and_then(|name| {
                    let all = registry.marks();
                    match all.iter().find(|(n, _)| *n == name) {
                        Some(&nm) => Some(Some(nm)),
                        None => {
                            let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
                            m.error(
                                cx,
                                "marked",
                                format!(
                                    "unknown mark {name:?}; the marks are: {}",
                                    names.join(", ")
                                ),
                            );
                            None
                        }
                    }
                })
            } else {
                Some(None)
            };
            Some(MetricKind::LinkThroughput {
                link: l?,
                class: class?,
                marked: marked?,
            })
        }
        Some("queue_length") => link(cx).map(|l| MetricKind::QueueLength { link: l }),
        Some("group_throughput") => {
            let g = m.req_str(cx, "traffic")?;
            match traffic.iter().position(|t| t.name == g) {
                Some(i) => Some(MetricKind::GroupThroughput { traffic: i }),
                None => {
                    if !cx.has_error_under("traffic") {
                        m.error(cx, "traffic", format!("unknown traffic entry {g:?}"));
                    }
                    None
                }
            }
        }
        Some("tcp_window") => {
            let g = m.req_str(cx, "traffic")?;
            match traffic.iter().position(|t| t.name == g) {
                Some(i) if matches!(traffic[i].model, TrafficModel::Tcp(_)) => {
                    Some(MetricKind::TcpWindow { traffic: i })
                }
                Some(_) => {
                    m.error(cx, "traffic", format!("traffic entry {g:?} is not TCP"));
                    None
                }
                None => {
                    if !cx.has_error_under("traffic") {
                        m.error(cx, "traffic", format!("unknown traffic entry {g:?}"));
                    }
                    None
                }
            }
        }
        Some("queue_average") => {
            let l = link(cx);
            let which = declared::key_or_default(cx, m, &METRIC, "which")
                .map(|v| v.expect("a fixed default").as_str().to_string());
            match (l, which.as_deref()) {
                (Some(l), Some(w)) => {
                    let q = &topo.links[l].queue;
                    match (w, q) {
                        ("total", QueueSpec::Red(_) | QueueSpec::Rio(_)) => {
                            Some(MetricKind::QueueAverage {
                                link: l,
                                in_only: false,
                            })
                        }
                        ("in", QueueSpec::Rio(_)) => Some(MetricKind::QueueAverage {
                            link: l,
                            in_only: true,
                        }),
                        ("total" | "in", _)
                            if cx.has_error_under(&format!("links.{}", topo.links[l].name))
                                || cx.has_error_under("topology.queue") =>
                        {
                            // The queue was not read: its kind is not known.
                            None
                        }
                        ("total" | "in", _) => {
                            let need = if w == "in" { "a rio" } else { "a red or rio" };
                            m.error(
                                cx,
                                "link",
                                format!(
                                    "link {:?} has a {} queue; queue_average {w:?} needs \
                                     {need} queue",
                                    topo.links[l].name,
                                    q.kind()
                                ),
                            );
                            None
                        }
                        (other, _) => unreachable!("which = {other:?} is not declared"),
                    }
                }
                _ => None,
            }
        }
        Some(other) => unreachable!("metric kind {other:?} is not declared"),
        None => None,
    };
    m.finish(cx, &METRIC.keys());
    let interval = interval?;
    let k = k?;
    let name = match name? {
        n if !n.is_empty() => n,
        _ => match &k {
            MetricKind::LinkThroughput { link, .. } => {
                format!("{}.throughput", topo.links[*link].name)
            }
            MetricKind::QueueLength { link } => format!("{}.queue", topo.links[*link].name),
            MetricKind::GroupThroughput { traffic: t } => {
                format!("{}.throughput", traffic[*t].name)
            }
            MetricKind::TcpWindow { traffic: t } => format!("tcp.{}", traffic[*t].name),
            MetricKind::QueueAverage { link, in_only } => format!(
                "{}.{}",
                topo.links[*link].name,
                if *in_only {
                    "queue_avg_in"
                } else {
                    "queue_avg"
                }
            ),
        },
    };
    Some(MetricSpec {
        name,
        kind: k,
        interval,
    })
}

/// Checks that `ends.0` and `ends.1` are different nodes and that the topology leads from
/// the first to the second; otherwise reports under `key` of `t` (with `same` as the
/// message when they coincide) and returns false.
pub fn check_reachable(
    cx: &Cx,
    t: &Tbl,
    key: &str,
    topo: &Topology,
    ends: (usize, usize),
    same: &str,
) -> bool {
    let (from, to) = ends;
    if from == to {
        t.error(cx, key, same);
        return false;
    }
    if !topo.connected(from, to) {
        t.error(
            cx,
            key,
            format!(
                "no route from {} to {}: the topology does not connect them",
                topo.nodes[from], topo.nodes[to]
            ),
        );
        return false;
    }
    true
}
