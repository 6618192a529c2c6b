//! Named topologies and explicit graphs.
//!
//! Every named topology builds duplex links (one unidirectional link per direction, each
//! with its own output queue) named `FROM-TO` after their end nodes.

use super::units::{self, QueueLimit};
use super::walk::{Cx, Tbl};
use crate::time::{millis, Time};

/// A queue discipline as configured.
#[derive(Clone, Debug, PartialEq)]
pub enum QueueSpec {
    /// FIFO with tail drop.
    DropTail {
        /// Limit.
        limit: QueueLimit,
    },
    /// Strict priority over `classes` classes sharing `limit` packets.
    Priority {
        /// Number of classes.
        classes: u64,
        /// Shared limit, packets.
        limit: u64,
        /// Push out lower classes when full.
        push_out: bool,
        /// Rate limit on the top class (bits/s, depth bytes).
        top: Option<(u64, u64)>,
    },
}

impl Default for QueueSpec {
    fn default() -> Self {
        QueueSpec::DropTail {
            limit: QueueLimit::Packets(1000),
        }
    }
}

/// One unidirectional link.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// Name (`FROM-TO` for named topologies).
    pub name: String,
    /// Upstream node index.
    pub from: usize,
    /// Downstream node index.
    pub to: usize,
    /// Rate, bits per second.
    pub rate: u64,
    /// Propagation delay.
    pub delay: Time,
    /// Queue discipline of its output port.
    pub queue: QueueSpec,
}

/// Nodes and links.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Topology {
    /// Which named topology (or `graph`).
    pub kind: String,
    /// Node names.
    pub nodes: Vec<String>,
    /// Links.
    pub links: Vec<LinkSpec>,
}

impl Topology {
    /// Index of the node called `name`.
    pub fn node(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n == name)
    }
    /// Index of the link called `name`.
    pub fn link(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }
    /// The link from `a` to `b`.
    pub fn link_between(&self, a: usize, b: usize) -> Option<usize> {
        self.links.iter().position(|l| l.from == a && l.to == b)
    }
    /// True if `b` can be reached from `a` along links.
    pub fn connected(&self, a: usize, b: usize) -> bool {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![a];
        seen[a] = true;
        while let Some(u) = stack.pop() {
            if u == b {
                return true;
            }
            for l in self.links.iter().filter(|l| l.from == u) {
                if !seen[l.to] {
                    seen[l.to] = true;
                    stack.push(l.to);
                }
            }
        }
        false
    }
    fn list(names: impl Iterator<Item = String>) -> String {
        let v: Vec<String> = names.collect();
        if v.len() > 12 {
            format!("{}, ... ({} in all)", v[..12].join(", "), v.len())
        } else {
            v.join(", ")
        }
    }
    /// Node names for messages.
    pub fn node_list(&self) -> String {
        Self::list(self.nodes.iter().cloned())
    }
    /// Link names for messages.
    pub fn link_list(&self) -> String {
        Self::list(self.links.iter().map(|l| l.name.clone()))
    }

    fn add_node(&mut self, name: String) -> usize {
        self.nodes.push(name);
        self.nodes.len() - 1
    }

    fn duplex(&mut self, a: usize, b: usize, rate: u64, delay: Time, q: &QueueSpec) {
        for (x, y) in [(a, b), (b, a)] {
            self.links.push(LinkSpec {
                name: format!("{}-{}", self.nodes[x], self.nodes[y]),
                from: x,
                to: y,
                rate,
                delay,
                queue: q.clone(),
            });
        }
    }
}

pub(super) fn read_queue(cx: &Cx, t: &Tbl) -> Option<QueueSpec> {
    let kind = if t.has("kind") {
        t.str(cx, "kind")
    } else {
        Some("droptail".into())
    };
    let q = match kind.as_deref() {
        Some("droptail") | Some("fifo") => {
            let limit = if t.has("limit") {
                t.parsed(cx, "limit", units::parse_limit)
            } else {
                Some(QueueLimit::Packets(1000))
            };
            limit.map(|limit| QueueSpec::DropTail { limit })
        }
        Some("priority") => {
            let classes = if t.has("classes") {
                t.uint(cx, "classes")
            } else {
                Some(2)
            };
            let limit = if t.has("limit") {
                t.parsed(cx, "limit", units::parse_limit)
                    .and_then(|l| match l {
                        QueueLimit::Packets(p) => Some(p),
                        QueueLimit::Bytes(_) => {
                            t.error(
                                cx,
                                "limit",
                                "priority queues are limited in packets, e.g. \"100p\"",
                            );
                            None
                        }
                    })
            } else {
                Some(1000)
            };
            let push_out = if t.has("push_out") {
                t.bool(cx, "push_out")
            } else {
                Some(false)
            };
            let top = match (t.has("top_rate"), t.has("top_depth")) {
                (false, false) => Some(None),
                (true, true) => match (t.rate(cx, "top_rate"), t.size(cx, "top_depth")) {
                    (Some(r), Some(d)) => Some(Some((r, d))),
                    _ => None,
                },
                _ => {
                    t.error(
                        cx,
                        "top_rate",
                        "give both top_rate and top_depth to rate-limit the top class",
                    );
                    None
                }
            };
            let c = classes?;
            if !(1..=8).contains(&c) {
                t.error(cx, "classes", format!("must be between 1 and 8, got {c}"));
                return None;
            }
            Some(QueueSpec::Priority {
                classes: c,
                limit: limit?,
                push_out: push_out?,
                top: top?,
            })
        }
        Some(other) => {
            t.error(
                cx,
                "kind",
                format!("unknown queue kind {other:?}; use droptail or priority"),
            );
            None
        }
        None => None,
    };
    t.finish(
        cx,
        &[
            "kind",
            "limit",
            "classes",
            "push_out",
            "top_rate",
            "top_depth",
        ],
    );
    q
}

fn rate_or(cx: &Cx, t: &Tbl, key: &str, default: Option<u64>) -> Option<u64> {
    if t.has(key) {
        t.rate(cx, key)
    } else if default.is_some() {
        default
    } else {
        cx.error(t.line(), &t.key_path(key), "missing (required)");
        None
    }
}

fn time_or(cx: &Cx, t: &Tbl, key: &str, default: Option<Time>) -> Option<Time> {
    if t.has(key) {
        t.time(cx, key)
    } else if default.is_some() {
        default
    } else {
        cx.error(t.line(), &t.key_path(key), "missing (required)");
        None
    }
}

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

/// Reads `[topology]` and the per-link `[links."NAME"]` overrides.
pub(super) fn read(cx: &Cx, t: &Tbl, root: &Tbl) -> Option<Topology> {
    let kind = t.req_str(cx, "kind")?;
    let rate = if t.has("rate") {
        t.rate(cx, "rate")
    } else {
        None
    };
    let delay = if t.has("delay") {
        t.time(cx, "delay")
    } else {
        Some(millis(1.0))
    };
    let queue = if t.has("queue") {
        t.table(cx, "queue").and_then(|q| read_queue(cx, &q))
    } else {
        Some(QueueSpec::default())
    };
    let known: &[&str] = match kind.as_str() {
        "single_link" => &["kind", "rate", "delay", "queue"],
        "dumbbell" => &[
            "kind",
            "rate",
            "delay",
            "queue",
            "hosts",
            "access_rate",
            "access_delay",
            "bottleneck_rate",
            "bottleneck_delay",
        ],
        "star" => &[
            "kind",
            "rate",
            "delay",
            "delays",
            "queue",
            "leaves",
            "trunk_rate",
            "trunk_delay",
        ],
        "parking_lot" => &[
            "kind",
            "rate",
            "delay",
            "queue",
            "bottlenecks",
            "access_rate",
            "access_delay",
        ],
        "chain" => &["kind", "rate", "delay", "queue", "length"],
        "tree" => &["kind", "rate", "delay", "queue", "depth", "fanout"],
        "ring" => &["kind", "rate", "delay", "queue", "nodes"],
        "graph" => &["kind", "rate", "delay", "queue", "nodes", "link"],
        _ => &["kind", "rate", "delay", "queue"],
    };
    let topo = match (delay, queue) {
        (Some(d), Some(q)) => build_named(cx, t, &kind, rate, d, &q),
        _ => None,
    };
    t.finish(cx, known);
    let mut topo = topo?;
    let _ = &mut topo;
    finish_links(cx, root, topo)
}

fn build_named(
    cx: &Cx,
    t: &Tbl,
    kind: &str,
    rate: Option<u64>,
    delay: Time,
    queue: &QueueSpec,
) -> Option<Topology> {
    let queue = queue.clone();
    let mut topo = Topology {
        kind: kind.to_string(),
        ..Default::default()
    };
    match kind {
        "single_link" => {
            let r = rate_or(cx, t, "rate", None)?;
            let a = topo.add_node("a".into());
            let b = topo.add_node("b".into());
            topo.duplex(a, b, r, delay, &queue);
        }
        "dumbbell" => {
            let n = count(cx, t, "hosts", 1, 100_000);
            let ar = rate_or(cx, t, "access_rate", rate);
            let ad = time_or(cx, t, "access_delay", Some(delay));
            let br = rate_or(cx, t, "bottleneck_rate", rate);
            let bd = time_or(cx, t, "bottleneck_delay", Some(delay));
            let (n, ar, ad, br, bd) = (n?, ar?, ad?, br?, bd?);
            let srcs: Vec<usize> = (0..n).map(|i| topo.add_node(format!("s{i}"))).collect();
            let r0 = topo.add_node("r0".into());
            let r1 = topo.add_node("r1".into());
            let dsts: Vec<usize> = (0..n).map(|i| topo.add_node(format!("d{i}"))).collect();
            for &s in &srcs {
                topo.duplex(s, r0, ar, ad, &queue);
            }
            topo.duplex(r0, r1, br, bd, &queue);
            for &d in &dsts {
                topo.duplex(r1, d, ar, ad, &queue);
            }
        }
        "star" => {
            let n = count(cx, t, "leaves", 1, 100_000)?;
            let r = rate_or(cx, t, "rate", None)?;
            let delays: Vec<Time> = if t.has("delays") {
                let arr = t.array(cx, "delays")?;
                let mut v = Vec::new();
                for (x, line) in arr {
                    match x.as_str().map(units::parse_time) {
                        Some(Ok(d)) => v.push(d),
                        Some(Err(e)) => cx.error(line, &t.key_path("delays"), e),
                        None => cx.error(
                            line,
                            &t.key_path("delays"),
                            "expected times such as \"10ms\"",
                        ),
                    }
                }
                if v.len() as u64 != n {
                    t.error(
                        cx,
                        "delays",
                        format!("has {} entries but there are {n} leaves", v.len()),
                    );
                    return None;
                }
                v
            } else {
                vec![delay; n as usize]
            };
            let hub = topo.add_node("hub".into());
            for (i, d) in delays.iter().enumerate() {
                let leaf = topo.add_node(format!("leaf{i}"));
                topo.duplex(leaf, hub, r, *d, &queue);
            }
            if t.has("trunk_rate") {
                let tr = t.rate(cx, "trunk_rate")?;
                let td = time_or(cx, t, "trunk_delay", Some(delay))?;
                let trunk = topo.add_node("trunk".into());
                topo.duplex(hub, trunk, tr, td, &queue);
            }
        }
        "parking_lot" => {
            let n = count(cx, t, "bottlenecks", 1, 1000)?;
            let r = rate_or(cx, t, "rate", None)?;
            let ar = rate_or(cx, t, "access_rate", Some(r.saturating_mul(10)))?;
            let ad = time_or(cx, t, "access_delay", Some(delay))?;
            let routers: Vec<usize> = (0..=n).map(|i| topo.add_node(format!("r{i}"))).collect();
            for w in routers.windows(2) {
                topo.duplex(w[0], w[1], r, delay, &queue);
            }
            let ls = topo.add_node("long_src".into());
            let ld = topo.add_node("long_dst".into());
            topo.duplex(ls, routers[0], ar, ad, &queue);
            topo.duplex(routers[n as usize], ld, ar, ad, &queue);
            for i in 0..n as usize {
                let s = topo.add_node(format!("s{i}"));
                let d = topo.add_node(format!("d{i}"));
                topo.duplex(s, routers[i], ar, ad, &queue);
                topo.duplex(routers[i + 1], d, ar, ad, &queue);
            }
        }
        "chain" => {
            let n = count(cx, t, "length", 1, 100_000)?;
            let r = rate_or(cx, t, "rate", None)?;
            let nodes: Vec<usize> = (0..=n).map(|i| topo.add_node(format!("n{i}"))).collect();
            for w in nodes.windows(2) {
                topo.duplex(w[0], w[1], r, delay, &queue);
            }
        }
        "tree" => {
            let depth = count(cx, t, "depth", 1, 20)?;
            let fanout = count(cx, t, "fanout", 1, 1000)?;
            let r = rate_or(cx, t, "rate", None)?;
            if fanout
                .checked_pow(depth as u32)
                .is_none_or(|x| x > 1_000_000)
            {
                t.error(cx, "depth", "tree too large (more than a million leaves)");
                return None;
            }
            let root_id = topo.add_node("t".into());
            let mut level = vec![root_id];
            for _ in 0..depth {
                let mut next = Vec::new();
                for &p in &level {
                    for k in 0..fanout {
                        let c = topo.add_node(format!("{}.{k}", topo.nodes[p]));
                        topo.duplex(p, c, r, delay, &queue);
                        next.push(c);
                    }
                }
                level = next;
            }
        }
        "ring" => {
            let n = count(cx, t, "nodes", 3, 100_000)?;
            let r = rate_or(cx, t, "rate", None)?;
            let nodes: Vec<usize> = (0..n).map(|i| topo.add_node(format!("n{i}"))).collect();
            for i in 0..nodes.len() {
                topo.duplex(nodes[i], nodes[(i + 1) % nodes.len()], r, delay, &queue);
            }
        }
        "graph" => {
            let arr = t.array(cx, "nodes")?;
            for (v, line) in arr {
                match v.as_str() {
                    Some(n) if topo.node(n).is_some() => {
                        cx.error(line, &t.key_path("nodes"), format!("duplicate node {n:?}"))
                    }
                    Some(n) if !n.is_empty() && !n.contains(['.', ' ']) => {
                        topo.add_node(n.to_string());
                    }
                    _ => cx.error(
                        line,
                        &t.key_path("nodes"),
                        format!("node names are non-empty strings without dots or spaces, got {v}"),
                    ),
                }
            }
            for l in t.tables(cx, "link") {
                let name_of = |key: &str| -> Option<usize> {
                    let n = l.req_str(cx, key)?;
                    let i = topo.node(&n);
                    if i.is_none() {
                        l.error(
                            cx,
                            key,
                            format!("unknown node {n:?}; nodes are: {}", topo.node_list()),
                        );
                    }
                    i
                };
                let (a, b) = (name_of("from"), name_of("to"));
                let lr = rate_or(cx, &l, "rate", rate);
                let ld = time_or(cx, &l, "delay", Some(delay));
                let lq = if l.has("queue") {
                    l.table(cx, "queue").and_then(|q| read_queue(cx, &q))
                } else {
                    Some(queue.clone())
                };
                let dup = if l.has("duplex") {
                    l.bool(cx, "duplex")
                } else {
                    Some(true)
                };
                l.finish(cx, &["from", "to", "rate", "delay", "queue", "duplex"]);
                if let (Some(a), Some(b), Some(r), Some(d), Some(q), Some(dup)) =
                    (a, b, lr, ld, lq, dup)
                {
                    if a == b {
                        l.error(cx, "to", "a link must join two different nodes");
                        continue;
                    }
                    if dup {
                        topo.duplex(a, b, r, d, &q);
                    } else {
                        topo.links.push(LinkSpec {
                            name: format!("{}-{}", topo.nodes[a], topo.nodes[b]),
                            from: a,
                            to: b,
                            rate: r,
                            delay: d,
                            queue: q,
                        });
                    }
                }
            }
        }
        other => {
            t.error(
                cx,
                "kind",
                format!("unknown topology {other:?}; use single_link, dumbbell, star, parking_lot, chain, tree, ring or graph"),
            );
            return None;
        }
    }
    Some(topo)
}

fn finish_links(cx: &Cx, root: &Tbl, mut topo: Topology) -> Option<Topology> {
    let t = root;
    // Duplicate link names (e.g. two graph links between the same nodes).
    for (i, l) in topo.links.iter().enumerate() {
        if topo.links[..i].iter().any(|m| m.name == l.name) {
            cx.error(
                t.line(),
                "topology.link",
                format!("two links named {:?}", l.name),
            );
            return None;
        }
    }
    // Per-link overrides.
    if root.has("links") {
        if let Some(lt) = root.table(cx, "links") {
            for name in lt.keys() {
                let Some(o) = lt.table(cx, &name) else {
                    continue;
                };
                let Some(i) = topo.link(&name) else {
                    lt.error(
                        cx,
                        &name,
                        format!("unknown link {name:?}; links are: {}", topo.link_list()),
                    );
                    continue;
                };
                if o.has("rate") {
                    if let Some(r) = o.rate(cx, "rate") {
                        topo.links[i].rate = r;
                    }
                }
                if o.has("delay") {
                    if let Some(d) = o.time(cx, "delay") {
                        topo.links[i].delay = d;
                    }
                }
                if o.has("queue") {
                    if let Some(q) = o.table(cx, "queue").and_then(|q| read_queue(cx, &q)) {
                        topo.links[i].queue = q;
                    }
                }
                o.finish(cx, &["rate", "delay", "queue"]);
            }
        }
    }
    Some(topo)
}
