//! The core topology kinds declared once ([`crate::decl`]): for each `[topology] kind =
//! "..."` of the language's core, the keys its table takes besides `kind`, each with its
//! type, unit, default (scenario notation), bounds and one line, and the keys of a graph's
//! `[[topology.link]]` entry.
//!
//! The reader (`topology.rs`) accepts exactly the keys declared here and reads every
//! scalar one through its declaration ([`super::declared::read_key`]), so the bounds of a
//! count (`hosts` within 1..100000) and the fixed defaults (a merging topology's T1
//! bottleneck) are stated only here; what relates keys to each other (one access delay per
//! host, a tree of at most a million leaves) stays an explicit rule of the reader.
//! `qossim describe topology.NAME` prints them and the reference tables of
//! `docs/scenarios.md` are made from them. The topology kinds of families (`pcn_*`,
//! `rpr_ring`) are read by their families.

use crate::decl::{Absent, Bounds, Param, Section, Type};

/// The most hosts, leaves, links of a chain or nodes of a ring a topology may have.
const MAX_NODES: f64 = 100_000.0;

/// `rate`: the rate of every link, with the kind's default.
const fn rate(default: Absent) -> Param {
    Param::new("rate", Type::Rate, default, "the rate of every link")
        .unit("bit/s")
        .bounds(Bounds::Positive)
}

/// `delay`: the propagation delay of every link.
const DELAY: Param = Param::new(
    "delay",
    Type::Time,
    Absent::Is("1ms"),
    "the propagation delay of every link",
)
.unit("s");

/// `queue`: the output queue of every link.
const QUEUE: Param = Param::new(
    "queue",
    Type::Table("queue"),
    Absent::Derived("drop-tail, 1000 packets"),
    "the output queue of every link: { kind = ..., ... }",
);

/// A rate with unit and bounds.
const fn a_rate(key: &'static str, default: Absent, doc: &'static str) -> Param {
    Param::new(key, Type::Rate, default, doc)
        .unit("bit/s")
        .bounds(Bounds::Positive)
}

/// A time with its unit.
const fn a_time(key: &'static str, default: Absent, doc: &'static str) -> Param {
    Param::new(key, Type::Time, default, doc).unit("s")
}

/// A required count within `[lo, hi]`.
const fn a_count(key: &'static str, lo: f64, hi: f64, doc: &'static str) -> Param {
    Param::new(key, Type::Integer, Absent::Required, doc).bounds(Bounds::Between(lo, hi))
}

/// Two nodes `a` and `b` joined by one duplex link.
pub const SINGLE_LINK: Section = Section {
    name: "single_link",
    written: "kind = \"single_link\"",
    title: "single link",
    doc: "Two nodes, a and b, joined by one duplex link.",
    params: &[rate(Absent::Required), DELAY, QUEUE],
};

/// Hosts on each side of one bottleneck.
pub const DUMBBELL: Section = Section {
    name: "dumbbell",
    written: "kind = \"dumbbell\"",
    title: "dumbbell",
    doc: "Senders s0.. into router r0, the bottleneck r0-r1, and router r1 out to as many receivers d0..",
    params: &[
        a_count("hosts", 1.0, MAX_NODES, "senders, and as many receivers"),
        rate(Absent::Derived("none: give the two rates")),
        DELAY,
        QUEUE,
        a_rate(
            "access_rate",
            Absent::Derived("rate; required without it"),
            "the rate of the hosts' links",
        ),
        a_time(
            "access_delay",
            Absent::Derived("delay"),
            "the delay of every host's links",
        ),
        Param::new(
            "access_delays",
            Type::Structured("list of times"),
            Absent::Derived("access_delay for every host"),
            "one delay per host, on all four of its links",
        ),
        a_rate(
            "bottleneck_rate",
            Absent::Derived("rate; required without it"),
            "the rate of r0-r1",
        ),
        a_time(
            "bottleneck_delay",
            Absent::Derived("delay"),
            "the delay of r0-r1",
        ),
    ],
};

/// Eight senders merging in stages onto one bottleneck.
pub const MERGING: Section = Section {
    name: "merging",
    written: "kind = \"merging\"",
    title: "merging",
    doc: "Senders h0..h7 merging over edge, merge and core routers onto the bottleneck r6-r7, receivers h8..h15.",
    params: &[
        a_time(
            "delay",
            Absent::Is("1ms"),
            "the delay of the hosts' links unless access_delay is given",
        ),
        QUEUE,
        a_rate(
            "access_rate",
            Absent::Is("100Mbps"),
            "the rate of the hosts' links",
        ),
        a_time(
            "access_delay",
            Absent::Derived("delay"),
            "the delay of the hosts' links",
        ),
        a_rate(
            "merge_rate",
            Absent::Is("10Mbps"),
            "the rate of the edge routers' links to r4 and r5",
        ),
        a_time(
            "merge_delay",
            Absent::Is("3ms"),
            "the delay of the edge routers' links to r4 and r5",
        ),
        a_rate(
            "core_rate",
            Absent::Is("10Mbps"),
            "the rate of r4-r6 and r5-r6",
        ),
        a_time(
            "core_delay",
            Absent::Is("3ms"),
            "the delay of r4-r6 and r5-r6",
        ),
        a_rate("bottleneck_rate", Absent::Is("T1"), "the rate of r6-r7"),
        a_time("bottleneck_delay", Absent::Is("4ms"), "the delay of r6-r7"),
    ],
};

/// Leaves around a hub.
pub const STAR: Section = Section {
    name: "star",
    written: "kind = \"star\"",
    title: "star",
    doc: "Leaves leaf0.. each joined to the hub, and optionally a trunk node beyond it.",
    params: &[
        a_count("leaves", 1.0, MAX_NODES, "leaves around the hub"),
        rate(Absent::Required),
        DELAY,
        Param::new(
            "delays",
            Type::Structured("list of times"),
            Absent::Derived("delay for every leaf"),
            "one delay per leaf's link",
        ),
        QUEUE,
        a_rate(
            "trunk_rate",
            Absent::Derived("no trunk"),
            "the rate of the link from the hub to a node trunk",
        ),
        a_time(
            "trunk_delay",
            Absent::Derived("delay"),
            "the delay of hub-trunk (with trunk_rate)",
        ),
    ],
};

/// A line of bottlenecks crossed by one long flow and one short flow each.
pub const PARKING_LOT: Section = Section {
    name: "parking_lot",
    written: "kind = \"parking_lot\"",
    title: "parking lot",
    doc: "Routers r0..rN in a line; long_src to r0 and rN to long_dst, and s{i} to r{i}, r{i+1} to d{i}.",
    params: &[
        a_count("bottlenecks", 1.0, 1000.0, "links between routers (N)"),
        rate(Absent::Required),
        DELAY,
        QUEUE,
        a_rate(
            "access_rate",
            Absent::Derived("10 x rate"),
            "the rate of the hosts' links",
        ),
        a_time(
            "access_delay",
            Absent::Derived("delay"),
            "the delay of the hosts' links",
        ),
    ],
};

/// Nodes in a line.
pub const CHAIN: Section = Section {
    name: "chain",
    written: "kind = \"chain\"",
    title: "chain",
    doc: "Nodes n0..nN in a line.",
    params: &[
        a_count("length", 1.0, MAX_NODES, "links in the line (N)"),
        rate(Absent::Required),
        DELAY,
        QUEUE,
    ],
};

/// A complete tree.
pub const TREE: Section = Section {
    name: "tree",
    written: "kind = \"tree\"",
    title: "tree",
    doc: "A complete tree: root t, children t.0, t.1, grandchildren t.0.0, ...; at most a million leaves.",
    params: &[
        a_count("depth", 1.0, 20.0, "levels below the root"),
        a_count("fanout", 1.0, 1000.0, "children of every inner node"),
        rate(Absent::Required),
        DELAY,
        QUEUE,
    ],
};

/// Nodes in a ring.
pub const RING: Section = Section {
    name: "ring",
    written: "kind = \"ring\"",
    title: "ring",
    doc: "Nodes n0..n{N-1} in a ring, each joined to the next.",
    params: &[
        a_count("nodes", 3.0, MAX_NODES, "nodes in the ring (N)"),
        rate(Absent::Required),
        DELAY,
        QUEUE,
    ],
};

/// An explicit graph.
pub const GRAPH: Section = Section {
    name: "graph",
    written: "kind = \"graph\"",
    title: "graph",
    doc: "Nodes as named, joined by the links of [[topology.link]] entries.",
    params: &[
        Param::new(
            "nodes",
            Type::Names,
            Absent::Required,
            "the names of the graph's nodes",
        ),
        rate(Absent::Derived("none: each link gives its own")),
        DELAY,
        QUEUE,
        Param::new(
            "link",
            Type::Table("topology.graph.link"),
            Absent::Derived("none"),
            "the links: [[topology.link]] entries",
        ),
    ],
};

/// The keys of a graph's link, `[[topology.link]]`.
pub const GRAPH_LINK: Section = Section {
    name: "graph.link",
    written: "[[topology.link]]",
    title: "graph link",
    doc: "One link of a graph (both directions unless duplex = false), named FROM-TO.",
    params: &[
        Param::new(
            "from",
            Type::Text,
            Absent::Required,
            "the node it starts at",
        ),
        Param::new("to", Type::Text, Absent::Required, "the node it ends at"),
        a_rate(
            "rate",
            Absent::Derived("the topology's rate; required without it"),
            "the link's rate",
        ),
        a_time(
            "delay",
            Absent::Derived("the topology's delay"),
            "the link's propagation delay",
        ),
        Param::new(
            "queue",
            Type::Table("queue"),
            Absent::Derived("the topology's queue"),
            "the link's output queue: { kind = ..., ... }",
        ),
        Param::new(
            "duplex",
            Type::Bool,
            Absent::Is("true"),
            "false: one link, from `from` to `to`, only",
        ),
    ],
};

/// The topology kinds of the language's core, in the order the documentation gives them.
pub const KINDS: &[&Section] = &[
    &SINGLE_LINK,
    &DUMBBELL,
    &MERGING,
    &STAR,
    &PARKING_LOT,
    &CHAIN,
    &TREE,
    &RING,
    &GRAPH,
];

/// The core topology kind `name`, if there is one.
pub fn kind(name: &str) -> Option<&'static Section> {
    KINDS.iter().copied().find(|k| k.name == name)
}

/// The core topology kinds, then a graph's link, as `qossim describe` lists them
/// (`topology.NAME`).
pub fn describe() -> Vec<serde_json::Value> {
    KINDS
        .iter()
        .copied()
        .chain(std::iter::once(&GRAPH_LINK))
        .map(|s| {
            crate::decl::describe_written(
                "topology",
                s.name,
                &[],
                s.title,
                s.doc,
                s.params,
                s.written,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixed_default_reads_and_is_in_bounds() {
        for s in KINDS.iter().copied().chain([&GRAPH_LINK]) {
            for p in s.params {
                if let Some(v) = p.default_value() {
                    assert_eq!(p.check(&v), None, "{}.{}", s.name, p.key);
                }
            }
        }
    }

    #[test]
    fn each_kind_is_declared_once_with_distinct_keys() {
        let mut names: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KINDS.len());
        for k in KINDS {
            let mut keys = k.keys();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), k.params.len(), "{}", k.name);
            assert!(!keys.contains(&"kind"), "{}", k.name);
        }
    }
}
