//! What a scenario costs before it runs: the memory its run needs and the work (events)
//! it implies, estimated from the validated scenario and checked against a budget, so that
//! a scenario that cannot fit is refused at validation with its line and the estimate
//! instead of aborting the process (the allocator) or running for days.
//!
//! The estimates are upper bounds of the parts that grow with the scenario's numbers:
//!
//! - sampled series: `duration / interval` samples per metric, [`BYTES_PER_SAMPLE`] each;
//! - queued packets: at most what all queue limits together admit, and at most what the
//!   sources can send in the run, [`bytes_per_queued_packet`] each;
//! - traffic entries: [`BYTES_PER_ENTRY`] each (a group record with its delay histogram);
//! - static flows and TCP connections: [`BYTES_PER_FLOW`] each, links [`BYTES_PER_LINK`];
//! - flows arriving as calls: the calls active at once (`rate x mean holding`, at most
//!   `max_active`) at [`BYTES_PER_ACTIVE_CALL`], and every call ever started at
//!   [`BYTES_PER_CALL`] (its flow record stays for the summary).
//!
//! The work estimate counts the packets the sources send (at most what the links out of
//! their nodes carry, shared among the entries that start there), the on-off periods
//! they draw and the calls that arrive; a scenario above [`MAX_EVENTS`] is refused (at ten million
//! events a second, more than a day of computing). An on-off source whose mean on period
//! is shorter than [`MIN_ON_FRACTION_OF_SPACING`] of its packet spacing is refused too:
//! it would draw that many on and off periods for each packet it sends.

use super::build::{BYTES_PER_FLOW, BYTES_PER_LINK};
use super::topology::QueueSpec;
use super::units::QueueLimit;
use super::walk::Cx;
use super::{Scenario, TrafficModel};
use crate::time::to_secs;
use crate::traffic::SourceModel;
use toml_edit::{Item, Table};

/// Bytes one sample of a series costs at its peak: two `f64` (time and value) in vectors
/// that may hold twice what they use, the copy handed to the caller, and the two Python
/// floats (with their list slots) it becomes.
pub const BYTES_PER_SAMPLE: u64 = 112;
/// Bytes a traffic entry costs: its group record, whose delay histogram alone holds
/// 7 424 counters (58 KiB), its route and its summary lines.
pub const BYTES_PER_ENTRY: u64 = 64 * 1024;
/// Bytes a call in progress costs: its source, slot, timer and flow record.
pub const BYTES_PER_ACTIVE_CALL: u64 = BYTES_PER_FLOW + 56;
/// Bytes every call ever started keeps until the end of the run (flow record, counters).
pub const BYTES_PER_CALL: u64 = 32;
/// The most events a run may be estimated to need.
pub const MAX_EVENTS: f64 = 1e12;
/// The shortest mean on period of an on-off source, as a fraction of its packet spacing.
pub const MIN_ON_FRACTION_OF_SPACING: f64 = 1e-3;
/// The environment variable that sets the memory budget (a size such as `"4GiB"`)
/// instead of the machine's memory.
pub const BUDGET_ENV: &str = "QOSSIM_MEMORY_BUDGET";

/// Bytes one queued packet costs: the packet in a queue's ring buffer, which may hold
/// twice what it uses.
pub fn bytes_per_queued_packet() -> u64 {
    2 * std::mem::size_of::<crate::packet::Packet>() as u64
}

/// The memory budget: `QOSSIM_MEMORY_BUDGET` if set, else the smallest of the machine's
/// physical memory, the process's address-space and data limits and its control group's
/// memory limit; `None` when none is known.
pub fn memory_budget() -> Option<(u64, String)> {
    if let Ok(v) = std::env::var(BUDGET_ENV) {
        if let Ok(b) = super::units::parse_size(&v) {
            return Some((b, format!("the {BUDGET_ENV} budget")));
        }
    }
    let mut best: Option<(u64, String)> = None;
    let mut take = |b: Option<u64>, what: &str| {
        if let Some(b) = b.filter(|&b| b > 0) {
            if best.as_ref().is_none_or(|(x, _)| b < *x) {
                best = Some((b, what.to_string()));
            }
        }
    };
    take(meminfo("MemTotal:"), "the machine's memory");
    take(
        rlimit("Max address space"),
        "the process's address-space limit",
    );
    take(rlimit("Max data size"), "the process's data-size limit");
    take(cgroup_limit(), "the control group's memory limit");
    best
}

fn meminfo(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A soft resource limit of this process in bytes, from `/proc/self/limits`.
fn rlimit(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

fn cgroup_limit() -> Option<u64> {
    let v2 = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok();
    let v1 = || std::fs::read_to_string("/sys/fs/cgroup/memory/memory.limit_in_bytes").ok();
    v2.or_else(v1)?.trim().parse().ok()
}

/// One part of a scenario's cost, blamed on a key.
#[derive(Clone, Debug)]
pub struct Cost {
    /// Key path it is blamed on (`metric.0.interval`).
    pub path: String,
    /// Estimated bytes.
    pub bytes: f64,
    /// Estimated events.
    pub events: f64,
    /// What it is, for the message.
    pub what: String,
}

/// Seconds as a message shows them (`20 s`, `1e-12 s`).
fn secs_text(s: f64) -> String {
    if s == 0.0 || (1e-3..1e9).contains(&s) {
        format!("{s} s")
    } else {
        format!("{s:e} s")
    }
}

fn gib(b: f64) -> String {
    let g = b / (1u64 << 30) as f64;
    if g >= 1e4 {
        format!("{g:.3e} GiB")
    } else {
        format!("{g:.2} GiB")
    }
}

/// Packets per second one flow of `m` sends at most on average.
fn pps(m: &SourceModel) -> f64 {
    match m {
        SourceModel::Cbr { interval, .. } | SourceModel::OnOff { interval, .. } => {
            1.0 / interval.max(1e-12)
        }
        SourceModel::Trace { .. } => m.mean_bps() / 8.0 / min_size(m).max(1) as f64,
        SourceModel::Poisson { rate, .. } => *rate,
        SourceModel::Mix(ms) => ms.iter().map(pps).fold(0.0, f64::max),
    }
}

/// The smallest packet a flow of `m` sends, bytes.
fn min_size(m: &SourceModel) -> u32 {
    match m {
        SourceModel::Cbr { size, .. }
        | SourceModel::OnOff { size, .. }
        | SourceModel::Trace { size, .. } => *size,
        SourceModel::Poisson { .. } => 1,
        SourceModel::Mix(ms) => ms.iter().map(min_size).min().unwrap_or(1),
    }
}

/// On and off period draws per second of one flow of `m`.
fn cycles(m: &SourceModel) -> f64 {
    match m {
        SourceModel::OnOff { on, off, .. } => 2.0 / (on.mean() + off.mean()).max(1e-12),
        SourceModel::Mix(ms) => ms.iter().map(cycles).fold(0.0, f64::max),
        _ => 0.0,
    }
}

/// The on-off member of `m` whose on period is shortest against its spacing.
fn degenerate_on(m: &SourceModel) -> Option<(f64, f64)> {
    match m {
        SourceModel::OnOff { interval, on, .. } => {
            let mean = on.mean();
            (mean < interval * MIN_ON_FRACTION_OF_SPACING).then_some((mean, *interval))
        }
        SourceModel::Mix(ms) => ms.iter().find_map(degenerate_on),
        _ => None,
    }
}

/// The parts of a scenario's cost, each blamed on a key.
pub fn costs(sc: &Scenario, doc: &Table) -> Vec<Cost> {
    let dur = to_secs(sc.run.duration);
    let mut out = Vec::new();
    for (i, m) in sc.metrics.iter().enumerate() {
        let samples = sc.run.duration as f64 / m.interval.max(1) as f64;
        out.push(Cost {
            path: format!("metric.{i}.interval"),
            bytes: samples * BYTES_PER_SAMPLE as f64,
            events: samples,
            what: format!(
                "{samples:.3e} samples of series {:?} ({} every {})",
                super::walk::shown(&m.name),
                secs_text(dur),
                secs_text(to_secs(m.interval))
            ),
        });
    }
    let mut sent = 0.0f64;
    // Entries that start at one node share its outgoing links: each is bounded by its
    // share of their rate, so that their sum is bounded by the links.
    let mut sharing = vec![0usize; sc.topology.nodes.len()];
    for t in &sc.traffic {
        if let Some(n) = sharing.get_mut(t.from) {
            *n += 1;
        }
    }
    // Each node's outgoing link rates, in link order: gathered once, not per entry (a
    // scan of every link per entry is quadratic on large topologies).
    let mut out_rates: Vec<Vec<f64>> = vec![Vec::new(); sc.topology.nodes.len()];
    for l in &sc.topology.links {
        if let Some(r) = out_rates.get_mut(l.from) {
            r.push(l.rate as f64);
        }
    }
    for (i, t) in sc.traffic.iter().enumerate() {
        let entry = format!("traffic.{i}");
        out.push(Cost {
            path: format!("{entry}.name"),
            bytes: BYTES_PER_ENTRY as f64,
            events: 0.0,
            what: "traffic entries".into(),
        });
        let active = (dur - to_secs(t.start)).max(0.0);
        let active = t
            .stop
            .map(|s| active.min(to_secs(s) - to_secs(t.start)))
            .unwrap_or(active);
        let out_rate: f64 = out_rates
            .get(t.from)
            .map_or(&[][..], |r| &r[..])
            .iter()
            .sum::<f64>()
            / sharing.get(t.from).copied().unwrap_or(1).max(1) as f64;
        // A degenerate on period makes a source's clock spin, with or without calls.
        if let TrafficModel::Source(m) = &t.model {
            if let Some((on, spacing)) = degenerate_on(m) {
                out.push(Cost {
                    path: format!("{entry}.on"),
                    bytes: 0.0,
                    events: f64::INFINITY,
                    what: format!(
                        "an on period of mean {on:e} s against a packet spacing of \
                         {spacing:e} s: the source would draw about {:.1e} on and off \
                         periods for each packet it sends",
                        spacing / on.max(1e-300)
                    ),
                });
            }
        }
        match (&t.model, &t.calls) {
            (TrafficModel::Tcp(tcp), _) => {
                let pkts = (t.flows as f64 * tcp.wnd as f64)
                    .max(out_rate * active / 8.0 / tcp.packet_size as f64);
                sent += pkts.min(out_rate * active / 8.0 / 41.0);
                out.push(Cost {
                    path: format!("{entry}.flows"),
                    bytes: t.flows as f64 * BYTES_PER_FLOW as f64,
                    events: out_rate * active / 8.0 / tcp.packet_size as f64 * 3.0,
                    what: format!("{} TCP connections", t.flows),
                });
            }
            (TrafficModel::Source(m), None) => {
                let f = t.flows as f64;
                let pkts = f * pps(m) * active;
                let cap = out_rate * active / 8.0 / min_size(m).max(1) as f64;
                sent += pkts.min(cap);
                out.push(Cost {
                    path: format!("{entry}.flows"),
                    bytes: f * BYTES_PER_FLOW as f64,
                    events: pkts + f * cycles(m) * active,
                    what: match f * cycles(m) * active {
                        0.0 => format!("{} flows sending {pkts:.3e} packets", t.flows),
                        periods => format!(
                            "{} flows sending {pkts:.3e} packets and drawing {periods:.3e} \
                             on-off periods",
                            t.flows
                        ),
                    },
                });
            }
            (TrafficModel::Source(m), Some(c)) => {
                let rate = c.arrivals.call_rate();
                let arr_time = c
                    .stop
                    .map(|s| (to_secs(s) - to_secs(t.start)).clamp(0.0, active))
                    .unwrap_or(active);
                let calls = rate * arr_time;
                let mut at_once = rate * c.holding.mean();
                if let Some(max) = c.max_active {
                    at_once = at_once.min(max as f64);
                }
                let pkts = at_once * pps(m) * active;
                let cap = out_rate * active / 8.0 / min_size(m).max(1) as f64;
                sent += pkts.min(cap);
                out.push(Cost {
                    path: format!("{entry}.calls.{}", calls_key(doc, i)),
                    bytes: calls * BYTES_PER_CALL as f64 + at_once * BYTES_PER_ACTIVE_CALL as f64,
                    events: 3.0 * calls + pkts + at_once * cycles(m) * active,
                    what: format!(
                        "{calls:.3e} calls ({rate:.3e}/s for {}), {at_once:.3e} at once",
                        secs_text(arr_time)
                    ),
                });
            }
        }
    }
    // Queued packets: no more than the limits admit, nor than the sources send.
    let per = bytes_per_queued_packet() as f64;
    let mut admitted = 0.0f64;
    let mut biggest: Option<(f64, usize)> = None;
    for (li, l) in sc.topology.links.iter().enumerate() {
        let pk = queue_packets(&l.queue);
        admitted += pk;
        if biggest.is_none_or(|(b, _)| pk > b) {
            biggest = Some((pk, li));
        }
    }
    if let Some((pk, li)) = biggest {
        let queued = admitted.min(sent);
        let name = &sc.topology.links[li].name;
        out.push(Cost {
            path: queue_path(doc, name),
            bytes: queued * per,
            events: 0.0,
            what: format!(
                "up to {queued:.3e} queued packets: the queue limits admit {admitted:.3e} \
                 (this link's {pk:.3e}) and the sources can send {sent:.3e}"
            ),
        });
    }
    out.push(Cost {
        path: "topology".into(),
        bytes: sc.topology.links.len() as f64 * BYTES_PER_LINK as f64,
        events: 0.0,
        what: format!("{} links", sc.topology.links.len()),
    });
    out
}

/// The estimated memory of a scenario's run, bytes (the sum of its [`costs`]).
pub fn total_bytes(sc: &Scenario) -> u64 {
    let doc = Table::new();
    costs(sc, &doc)
        .iter()
        .map(|c| c.bytes)
        .sum::<f64>()
        .min(u64::MAX as f64) as u64
}

/// The key of a `[traffic.calls]` table that sets its rate.
fn calls_key(doc: &Table, i: usize) -> &'static str {
    let has_offered = doc
        .get("traffic")
        .and_then(Item::as_array_of_tables)
        .and_then(|a| a.get(i))
        .and_then(|t| t.get("calls"))
        .and_then(|c| c.as_table_like())
        .is_some_and(|c| c.contains_key("offered"));
    if has_offered {
        "offered"
    } else {
        "rate"
    }
}

/// The key that gave a link its queue: its own `links.NAME.queue`, else the topology's.
fn queue_path(doc: &Table, link: &str) -> String {
    let own = doc
        .get("links")
        .and_then(|l| l.as_table_like())
        .and_then(|l| l.get(link))
        .and_then(|l| l.as_table_like())
        .is_some_and(|l| l.contains_key("queue"));
    if own {
        format!("links.{link}.queue")
    } else {
        "topology.queue".into()
    }
}

/// Packets a queue may hold at most (a byte limit counted in 40-byte packets).
fn queue_packets(q: &QueueSpec) -> f64 {
    let bytes = |b: u64| b as f64 / 40.0;
    match q {
        QueueSpec::DropTail { limit } => match *limit {
            QueueLimit::Packets(p) => p as f64,
            QueueLimit::Bytes(b) => bytes(b),
        },
        QueueSpec::Priority { limit, .. } => *limit as f64,
        QueueSpec::Red(p) => p.limit as f64,
        QueueSpec::Rio(p) => p.limit as f64,
        QueueSpec::Codel(p) => match p.limit {
            crate::queue::Limit::Packets(n) => n as f64,
            crate::queue::Limit::Bytes(b) => bytes(b),
        },
        // A declared discipline's buffer is its `limit` (packets or bytes), if it has one.
        QueueSpec::Declared { values, .. } => match values.get("limit") {
            Some(crate::decl::Value::Packets(n)) => *n as f64,
            Some(crate::decl::Value::Bytes(b)) => bytes(*b),
            _ => 0.0,
        },
    }
}

/// The line of a dotted key path in the document (the deepest part of it found).
pub fn line_of_path(cx: &Cx, doc: &Table, path: &str) -> usize {
    let mut line = 1;
    let mut item: Option<&Item> = None;
    let mut table: Option<&dyn toml_edit::TableLike> = Some(doc);
    for seg in path.split('.') {
        if let (Some(Item::ArrayOfTables(a)), Ok(i)) = (item, seg.parse::<usize>()) {
            match a.get(i) {
                Some(t) => {
                    if let Some(s) = t.span() {
                        line = cx.line_of(s.start);
                    }
                    table = Some(t);
                    item = None;
                    continue;
                }
                None => break,
            }
        }
        let Some((k, v)) = table.and_then(|t| t.get_key_value(seg)) else {
            break;
        };
        if let Some(s) = k.span() {
            line = cx.line_of(s.start);
        }
        item = Some(v);
        table = v.as_table_like();
    }
    line
}

/// Checks a scenario's estimated memory and work against `budget` (bytes and what it
/// is); reports each part that alone exceeds it, or the largest part when only their sum
/// does, on its key's line.
pub fn check(cx: &Cx, doc: &Table, sc: &Scenario, budget: Option<(u64, String)>) {
    let parts = costs(sc, doc);
    let b = budget.as_ref().map(|(b, _)| *b as f64);
    // The first of the largest (the first of equal parts is blamed).
    let largest = |parts: &[Cost], key: fn(&Cost) -> f64| -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, c) in parts.iter().enumerate() {
            if best.is_none_or(|j| key(c) > key(&parts[j])) {
                best = Some(i);
            }
        }
        best
    };
    for c in &parts {
        if b.is_some_and(|b| c.bytes > b) && c.what != "traffic entries" {
            break; // reported below, with the budget
        }
        if c.events > MAX_EVENTS {
            let why = if c.events.is_finite() {
                format!(
                    "{}: about {:.1e} events, more than the {MAX_EVENTS:.0e} a run may take \
                     (over a day of computing); shorten the run or lower the rate",
                    c.what, c.events
                )
            } else {
                format!("{}; make the on period longer", c.what)
            };
            cx.error(line_of_path(cx, doc, &c.path), &c.path, why);
            return;
        }
    }
    let total_events: f64 = parts.iter().map(|c| c.events).sum();
    if total_events > MAX_EVENTS && parts.iter().all(|c| b.is_none_or(|b| c.bytes <= b)) {
        if let Some(i) = largest(&parts, |c| c.events) {
            let c = &parts[i];
            cx.error(
                line_of_path(cx, doc, &c.path),
                &c.path,
                format!(
                    "the scenario needs about {total_events:.1e} events, more than the \
                     {MAX_EVENTS:.0e} a run may take (over a day of computing); the largest \
                     part: {}",
                    c.what
                ),
            );
            return;
        }
    }
    let Some((budget, what)) = budget else {
        return;
    };
    let b = budget as f64;
    // Traffic entries are summed (one alone is small).
    let mut merged: Vec<Cost> = Vec::new();
    let entries: Vec<&Cost> = parts
        .iter()
        .filter(|c| c.what == "traffic entries")
        .collect();
    if let Some(first) = entries.first() {
        merged.push(Cost {
            path: "traffic".into(),
            bytes: entries.len() as f64 * BYTES_PER_ENTRY as f64,
            events: 0.0,
            what: format!(
                "{} traffic entries at {} KiB each",
                entries.len(),
                BYTES_PER_ENTRY / 1024
            ),
        });
        debug_assert!(first.bytes > 0.0);
    }
    merged.extend(parts.into_iter().filter(|c| c.what != "traffic entries"));
    for c in &merged {
        if c.bytes > b {
            let path = if c.path == "traffic" {
                // The entry that crosses the budget.
                let n = (b / BYTES_PER_ENTRY as f64).floor() as usize;
                format!("traffic.{n}.name")
            } else {
                c.path.clone()
            };
            cx.error(
                line_of_path(cx, doc, &path),
                &path,
                format!(
                    "{}: about {} of memory, more than the {} of {what}",
                    c.what,
                    gib(c.bytes),
                    gib(b)
                ),
            );
            return;
        }
    }
    let total: f64 = merged.iter().map(|c| c.bytes).sum();
    if total > b {
        if let Some(i) = largest(&merged, |c| c.bytes) {
            let c = &merged[i];
            cx.error(
                line_of_path(cx, doc, &c.path),
                &c.path,
                format!(
                    "the scenario needs about {} of memory, more than the {} of {what}; the \
                     largest part: {} ({})",
                    gib(total),
                    gib(b),
                    c.what,
                    gib(c.bytes)
                ),
            );
        }
    }
}
