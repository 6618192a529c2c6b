//! The core sections of the scenario language declared once ([`crate::decl`]): the keys of
//! a `[[traffic]]` entry of its own (its model's keys are declared with the model,
//! [`crate::traffic::MODELS`]), of `[run]`, of a per-link override `[links."NAME"]` and of
//! a `[[metric]]` series, each with its type, unit, default, bounds and one line.
//!
//! The readers (`traffic_read.rs`, `mod.rs`, `topology.rs`) read every scalar key through
//! these declarations (`declared::key_or_default`) and accept exactly the keys
//! declared here; what relates keys to each other or to the network (a route that
//! connects, `stop` after `start`, a warm-up shorter than the run) stays an explicit
//! rule of the reader. `qossim describe core.NAME` prints them and the reference tables of
//! `docs/scenarios.md` are made from them.

use super::expand::MAX_COUNT;
use super::traffic_read::MAX_FLOWS_PER_ENTRY;
use crate::decl::{Absent, Bounds, Param, Section, Type};

/// The highest service class of a packet.
const MAX_CLASS: f64 = 255.0;

/// The keys of a `[[traffic]]` entry of its own.
pub const TRAFFIC: Section = Section {
    name: "traffic",
    written: "[[traffic]]",
    title: "traffic entry",
    doc: "A set of flows from one node to another; the keys of its model are declared with the model (traffic.*).",
    params: &[
        Param::new(
            "name",
            Type::Text,
            Absent::Required,
            "the entry's name, unique: its flows are measured as group.NAME.*",
        ),
        Param::new(
            "count",
            Type::Integer,
            Absent::Is("1"),
            "copies of the entry; every {i} in a string value of copy k reads k",
        )
        .bounds(Bounds::Between(1.0, MAX_COUNT as f64)),
        Param::new("from", Type::Text, Absent::Required, "the node the flows start at"),
        Param::new("to", Type::Text, Absent::Required, "the node the flows end at"),
        Param::new(
            "model",
            Type::Text,
            Absent::Required,
            "what each flow sends: a traffic model (traffic.*)",
        ),
        Param::new(
            "flows",
            Type::Integer,
            Absent::Is("1"),
            "static flows (TCP: connections); arrivals of flows are `calls`",
        )
        .bounds(Bounds::Between(0.0, MAX_FLOWS_PER_ENTRY as f64)),
        Param::new(
            "start",
            Type::Time,
            Absent::Is("0s"),
            "when the flows start",
        )
        .unit("s"),
        Param::new(
            "stop",
            Type::Time,
            Absent::Derived("end of run"),
            "when the flows stop sending; after start (not with TCP)",
        )
        .unit("s"),
        Param::new(
            "jitter",
            Type::Number,
            Absent::Is("0"),
            "each packet delayed by U(0, jitter x spacing) (not with TCP)",
        )
        .bounds(Bounds::Between(0.0, 1.0)),
        Param::new(
            "class",
            Type::Integer,
            Absent::Is("0"),
            "the packets' service class (priority level)",
        )
        .bounds(Bounds::Between(0.0, MAX_CLASS)),
        Param::new(
            "route",
            Type::Names,
            Absent::Derived("shortest path"),
            "the nodes to cross, from `from` to `to`, none twice",
        ),
        Param::new(
            "per_flow",
            Type::Bool,
            Absent::Is("true"),
            "false: the flows share their group's one record (not with TCP or a profile)",
        ),
        Param::new(
            "profile",
            Type::Table("meter"),
            Absent::Derived("none"),
            "a host profile metering each flow: a token_bucket or tsw (not with calls)",
        ),
        Param::new(
            "calls",
            Type::Table("traffic.calls"),
            Absent::Derived("none"),
            "flow arrivals instead of static flows (not with TCP)",
        ),
    ],
};

/// The keys of `[run]`.
pub const RUN: Section = Section {
    name: "run",
    written: "[run]",
    title: "run",
    doc: "How long the run lasts, what it discards and which seed and links it reports.",
    params: &[
        Param::new("duration", Type::Time, Absent::Required, "simulated time")
            .unit("s")
            .bounds(Bounds::Positive),
        Param::new(
            "warmup",
            Type::Time,
            Absent::Is("0s"),
            "statistics before this are discarded; shorter than duration",
        )
        .unit("s"),
        Param::new(
            "seed",
            Type::Integer,
            Absent::Is("1"),
            "the seed when none is given on the command line or in Python",
        ),
        Param::new(
            "link_metrics",
            Type::Names,
            Absent::Derived("\"all\""),
            "links the summary reports: \"all\", \"none\" or a list of link names",
        ),
    ],
};

/// The keys of a per-link override, `[links."NAME"]`.
pub const LINKS: Section = Section {
    name: "links",
    written: "[links.\"NAME\"]",
    title: "per-link override",
    doc: "One link, by name, with its own rate, delay, queue or meters instead of the topology's.",
    params: &[
        Param::new(
            "rate",
            Type::Rate,
            Absent::Derived("the topology's"),
            "the link's rate",
        )
        .unit("bit/s")
        .bounds(Bounds::Positive),
        Param::new(
            "delay",
            Type::Time,
            Absent::Derived("the topology's"),
            "the link's propagation delay",
        )
        .unit("s"),
        Param::new(
            "queue",
            Type::Table("queue"),
            Absent::Derived("the topology's"),
            "the link's output queue: { kind = ..., ... }",
        ),
        Param::new(
            "meters",
            Type::Table("meter"),
            Absent::Derived("none"),
            "meters and markers at the link's entry, in order: [{ kind = ..., ... }, ...]",
        ),
    ],
};

/// The kinds of series a `[[metric]]` samples.
pub const METRIC_KINDS: &[&str] = &[
    "link_throughput",
    "queue_length",
    "queue_average",
    "group_throughput",
    "tcp_window",
];

/// The keys of a sampled time series, `[[metric]]`.
pub const METRIC: Section = Section {
    name: "metric",
    written: "[[metric]]",
    title: "sampled time series",
    doc: "A time series sampled during the run; its post-warm-up mean and confidence half-width go to the summary.",
    params: &[
        Param::new(
            "kind",
            Type::Choice(METRIC_KINDS),
            Absent::Required,
            "what is sampled",
        ),
        Param::new(
            "link",
            Type::Text,
            Absent::Derived("required by link_throughput, queue_length, queue_average"),
            "the link sampled",
        ),
        Param::new(
            "traffic",
            Type::Text,
            Absent::Derived("required by group_throughput, tcp_window"),
            "the traffic entry sampled (tcp_window: a TCP one)",
        ),
        Param::new(
            "class",
            Type::Integer,
            Absent::Derived("every class"),
            "link_throughput: only packets of this class",
        )
        .bounds(Bounds::Between(0.0, MAX_CLASS)),
        Param::new(
            "marked",
            Type::Text,
            Absent::Derived("every packet"),
            "link_throughput: only packets carrying this family's named mark",
        ),
        Param::new(
            "which",
            Type::Choice(&["total", "in"]),
            Absent::Is("total"),
            "queue_average: the whole queue's average, or RIO's average of its IN packets",
        ),
        Param::new(
            "interval",
            Type::Time,
            Absent::Is("50ms"),
            "time between samples",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "name",
            Type::Text,
            Absent::Derived("after the kind"),
            "the series' name (default LINK.throughput, LINK.queue, LINK.queue_avg, LINK.queue_avg_in, ENTRY.throughput or tcp.ENTRY)",
        ),
    ],
};

/// The core sections, in the order the documentation gives them.
pub const CORE: &[&Section] = &[&RUN, &LINKS, &TRAFFIC, &METRIC];

/// The core sections as `qossim describe` lists them (`core.NAME`).
pub fn describe() -> Vec<serde_json::Value> {
    CORE.iter()
        .map(|s| {
            crate::decl::describe_written("core", s.name, &[], s.title, s.doc, s.params, s.written)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixed_default_reads_and_is_in_bounds() {
        for s in CORE {
            for p in s.params {
                if let Some(v) = p.default_value() {
                    assert_eq!(p.check(&v), None, "{}.{}", s.name, p.key);
                }
            }
        }
    }
}
