//! The `[[trace]]` section: which packets' events a run records (see [`crate::trace`]).
//!
//! ```toml
//! [[trace]]
//! name = "voice-7"                 # output name (default "trace", then "trace-2", ...)
//! links = ["n1-n2"]                # links whose port and arrival events are kept
//! nodes = ["n2"]                   # and/or nodes: links leaving or entering them, deliveries
//! flows = [7]                      # flow ids (default: every flow)
//! events = ["enqueue", "drop", "transmit", "deliver"]   # default: every event
//! pcap = true                      # also write traces/NAME.pcap
//! ```

use super::topology::Topology;
use super::walk::{Cx, Tbl};
use crate::trace::{TraceEvent, TraceSpec};

const KEYS: [&str; 6] = ["name", "links", "nodes", "flows", "events", "pcap"];

/// Reads every `[[trace]]` entry; `None` when one has an error (already reported).
pub fn read(cx: &Cx, root: &Tbl, topo: &Topology) -> Option<Vec<TraceSpec>> {
    let mut out = Vec::new();
    let mut ok = true;
    for (i, t) in root.tables(cx, "trace").iter().enumerate() {
        match read_one(cx, t, i, topo) {
            Some(spec) => {
                if out.iter().any(|s: &TraceSpec| s.name == spec.name) {
                    t.error(
                        cx,
                        "name",
                        format!(
                            "duplicate trace name {:?}; give each [[trace]] its own",
                            spec.name
                        ),
                    );
                    ok = false;
                } else {
                    out.push(spec);
                }
            }
            None => ok = false,
        }
        t.finish(cx, &KEYS);
    }
    ok.then_some(out)
}

fn names(
    cx: &Cx,
    t: &Tbl,
    key: &str,
    what: &str,
    find: impl Fn(&str) -> Option<usize>,
    list: impl Fn() -> String,
) -> Option<Vec<usize>> {
    if !t.has(key) {
        return Some(Vec::new());
    }
    let items = t.array(cx, key)?;
    let mut out = Vec::new();
    let mut ok = true;
    for (j, (v, line)) in items.into_iter().enumerate() {
        let path = format!("{}.{j}", t.key_path(key));
        match v.as_str() {
            Some(name) => match find(name) {
                Some(i) => out.push(i),
                None => {
                    cx.error(
                        line,
                        &path,
                        format!("unknown {what} {name:?}; {what}s are: {}", list()),
                    );
                    ok = false;
                }
            },
            None => {
                cx.error(
                    line,
                    &path,
                    format!("expected a {what} name, found {}", v.type_name()),
                );
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

fn read_one(cx: &Cx, t: &Tbl, index: usize, topo: &Topology) -> Option<TraceSpec> {
    let name = if t.has("name") {
        t.str(cx, "name").and_then(|n| {
            let good = !n.is_empty()
                && n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if good {
                Some(n)
            } else {
                t.error(
                    cx,
                    "name",
                    format!("{n:?}: use 1-64 letters, digits, '-' or '_' (it names a file)"),
                );
                None
            }
        })
    } else if index == 0 {
        Some("trace".to_string())
    } else {
        Some(format!("trace-{}", index + 1))
    };
    let links = names(
        cx,
        t,
        "links",
        "link",
        |n| topo.link(n),
        || topo.link_list(),
    );
    let nodes = names(
        cx,
        t,
        "nodes",
        "node",
        |n| topo.node(n),
        || topo.node_list(),
    );
    let flows = if t.has("flows") {
        t.array(cx, "flows").and_then(|items| {
            let mut out = Vec::new();
            let mut ok = true;
            for (j, (v, line)) in items.into_iter().enumerate() {
                match v.as_integer() {
                    Some(f) if (0..u32::MAX as i64).contains(&f) => out.push(f as u32),
                    _ => {
                        cx.error(
                            line,
                            &format!("{}.{j}", t.key_path("flows")),
                            format!(
                                "expected a flow id (an integer >= 0), found {}",
                                v.to_string().trim()
                            ),
                        );
                        ok = false;
                    }
                }
            }
            ok.then_some(out)
        })
    } else {
        Some(Vec::new())
    };
    let events = if t.has("events") {
        t.array(cx, "events").and_then(|items| {
            let mut out: Vec<TraceEvent> = Vec::new();
            let mut ok = true;
            for (j, (v, line)) in items.into_iter().enumerate() {
                match v.as_str().and_then(TraceEvent::from_name) {
                    Some(e) => {
                        if !out.contains(&e) {
                            out.push(e)
                        }
                    }
                    None => {
                        let all: Vec<&str> = TraceEvent::ALL.iter().map(|e| e.name()).collect();
                        cx.error(
                            line,
                            &format!("{}.{j}", t.key_path("events")),
                            format!(
                                "unknown event {}; the events are: {}",
                                v.to_string().trim(),
                                all.join(", ")
                            ),
                        );
                        ok = false;
                    }
                }
            }
            if ok && out.is_empty() {
                t.error(cx, "events", "empty: name at least one event");
                ok = false;
            }
            ok.then_some(out)
        })
    } else {
        Some(TraceEvent::ALL.to_vec())
    };
    let pcap = if t.has("pcap") {
        t.bool(cx, "pcap")
    } else {
        Some(false)
    };
    Some(TraceSpec {
        name: name?,
        links: links?,
        nodes: nodes?,
        flows: flows?,
        events: events?,
        pcap: pcap?,
    })
}
