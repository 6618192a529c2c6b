//! Named topologies and explicit graphs.
//!
//! Every named topology builds duplex links (one unidirectional link per direction, each
//! with its own output queue) named `FROM-TO` after their end nodes.

use super::meters::{read_meter, MeterSpec};
use super::sections::LINKS;
use super::topo_index::{LinkEnds, TopoIndex};
use super::topology_kinds::{self, GRAPH_LINK, KINDS};
use super::units::{self, QueueLimit};
use super::walk::{Cx, Tbl};
use crate::decl::{Section, Value, Values};
use crate::queue::{CodelParams, RedParams, RioParams};
use crate::time::Time;

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
    /// RED (optionally gentle, byte mode). The link rate for the idle-time correction is
    /// filled in when the world is built.
    Red(RedParams),
    /// RIO, coupled or decoupled. The link rate is filled in when the world is built.
    Rio(RioParams),
    /// CoDel (RFC 8289).
    Codel(CodelParams),
    /// A discipline known only through its declaration in the registry
    /// ([`crate::queue::DISCIPLINES`]): its kind and its parameters' values.
    Declared {
        /// The kind's name in the registry.
        kind: &'static str,
        /// Every parameter with a value (defaults filled in).
        values: Values,
    },
}

impl QueueSpec {
    /// The kind as written in scenarios.
    pub fn kind(&self) -> &'static str {
        match self {
            QueueSpec::DropTail { .. } => "droptail",
            QueueSpec::Priority { .. } => "priority",
            QueueSpec::Red(_) => "red",
            QueueSpec::Rio(_) => "rio",
            QueueSpec::Codel(_) => "codel",
            QueueSpec::Declared { kind, .. } => kind,
        }
    }
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
    /// Meters, markers and policers on its output port, applied in order.
    pub meters: Vec<MeterSpec>,
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
    /// Look-ups by name, by ends and by reachability (a cache: nodes and links may only be
    /// appended, and a link's name and ends never change once it is in).
    pub index: TopoIndex,
}

impl LinkEnds for LinkSpec {
    fn name(&self) -> &str {
        &self.name
    }
    fn ends(&self) -> (usize, usize) {
        (self.from, self.to)
    }
}

impl Topology {
    /// Index of the node called `name`.
    pub fn node(&self, name: &str) -> Option<usize> {
        self.index.node(&self.nodes, &self.links, name)
    }
    /// Index of the link called `name`.
    pub fn link(&self, name: &str) -> Option<usize> {
        self.index.link(&self.nodes, &self.links, name)
    }
    /// The link from `a` to `b`.
    pub fn link_between(&self, a: usize, b: usize) -> Option<usize> {
        self.index.between(&self.nodes, &self.links, a, b)
    }
    /// True if `b` can be reached from `a` along links: constant time when every link has
    /// a link back (from the nodes' components), else a search linear in the topology.
    pub fn connected(&self, a: usize, b: usize) -> bool {
        if let Some(r) = self.index.reachable(&self.nodes, &self.links, a, b) {
            return r;
        }
        // Out-links of every node, as a compressed adjacency list.
        let n = self.nodes.len();
        let mut start = vec![0usize; n + 1];
        for l in &self.links {
            start[l.from + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut to = vec![0usize; self.links.len()];
        for l in &self.links {
            to[fill[l.from]] = l.to;
            fill[l.from] += 1;
        }
        let mut seen = vec![false; n];
        let mut stack = vec![a];
        seen[a] = true;
        while let Some(u) = stack.pop() {
            if u == b {
                return true;
            }
            for &v in &to[start[u]..start[u + 1]] {
                if !seen[v] {
                    seen[v] = true;
                    stack.push(v);
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
                meters: Vec::new(),
            });
        }
    }
}

/// Reads a queue discipline table (`{ kind = "red", ... }`) with the declaration of its
/// kind in the registry ([`crate::queue::DISCIPLINES`]); `kind` defaults to drop-tail.
pub fn read_queue(cx: &Cx, t: &Tbl) -> Option<QueueSpec> {
    let kind = if t.has("kind") {
        t.str(cx, "kind")?
    } else {
        "droptail".into()
    };
    let Some(k) = crate::queue::discipline(&kind) else {
        let names: Vec<&str> = crate::queue::DISCIPLINES.iter().map(|k| k.name).collect();
        let all: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        t.error(
            cx,
            "kind",
            format!(
                "unknown queue kind {kind:?}{}; use {}",
                super::walk::did_you_mean(&kind, &names),
                crate::decl::or_list(&all)
            ),
        );
        // The kind is unknown: its other keys cannot be judged.
        return None;
    };
    super::declared::read_kind(cx, t, k.title, k.params, k.rules, k.spec)
}

/// The declared key `key` of the kind `k`: its value, or its fixed default when `t` lacks
/// it; `Some(None)` when it is absent without a fixed default, `None` when it is there but
/// wrong (reported).
fn declared(cx: &Cx, t: &Tbl, k: &Section, key: &str) -> Option<Option<Value>> {
    super::declared::key_or_default(cx, t, k, key)
}

/// Reports `key` of `k` missing from `t`.
fn missing(cx: &Cx, t: &Tbl, k: &Section, key: &str) {
    cx.error(
        t.line(),
        &t.key_path(key),
        format!("missing (required: {})", k.param(key).doc),
    );
}

/// The rate `key` of `k`: as given, else its fixed default, else `fallback`, else
/// reported missing.
fn rate_of(cx: &Cx, t: &Tbl, k: &Section, key: &str, fallback: Option<u64>) -> Option<u64> {
    match declared(cx, t, k, key)? {
        Some(v) => Some(v.as_u64()),
        None if fallback.is_some() => fallback,
        None => {
            missing(cx, t, k, key);
            None
        }
    }
}

/// The time `key` of `k`: as given, else its fixed default, else `fallback`.
fn time_of(cx: &Cx, t: &Tbl, k: &Section, key: &str, fallback: Time) -> Option<Time> {
    Some(declared(cx, t, k, key)?.map_or(fallback, |v| v.as_time()))
}

/// The required count `key` of `k`, within its declared bounds.
fn count_of(cx: &Cx, t: &Tbl, k: &Section, key: &str) -> Option<u64> {
    match declared(cx, t, k, key)? {
        Some(v) => Some(v.as_u64()),
        None => {
            missing(cx, t, k, key);
            None
        }
    }
}

/// An array of exactly `n` times (one per `what`).
fn times(cx: &Cx, t: &Tbl, key: &str, n: u64, what: &str) -> Option<Vec<Time>> {
    let arr = t.array(cx, key)?;
    let mut v = Vec::new();
    let mut ok = true;
    for (x, line) in arr {
        match x.as_str().map(units::parse_time) {
            Some(Ok(d)) => v.push(d),
            Some(Err(e)) => {
                ok = false;
                cx.error(line, &t.key_path(key), e)
            }
            None => {
                ok = false;
                cx.error(
                    line,
                    &t.key_path(key),
                    format!("expected times such as \"10ms\", found {x}"),
                )
            }
        }
    }
    if !ok {
        return None;
    }
    if v.len() as u64 != n {
        t.error(
            cx,
            key,
            format!("has {} entries but there are {n} {what}", v.len()),
        );
        return None;
    }
    Some(v)
}

/// Reads `[topology]` of a core kind ([`KINDS`]) and the per-link `[links."NAME"]`
/// overrides; an unknown kind is reported with the core's and the families' kinds.
pub(super) fn read(cx: &Cx, t: &Tbl, root: &Tbl, registry: &super::Registry) -> Option<Topology> {
    let kind = t.req_str(cx, "kind")?;
    let Some(k) = topology_kinds::kind(&kind) else {
        t.error(cx, "kind", {
            let mut kinds: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
            for f in registry.families() {
                kinds.extend(f.topology_kinds());
            }
            let hint = super::walk::did_you_mean(&kind, &kinds);
            let (last, rest) = kinds.split_last().expect("core kinds");
            format!(
                "unknown topology {kind:?}{hint}; use {} or {last}",
                rest.join(", ")
            )
        });
        // The kind is unknown: its other keys cannot be judged.
        t.skip_rest();
        return None;
    };
    let mut known = vec!["kind"];
    known.extend(k.keys());
    // The defaults for every link: a rate only where the kind takes one.
    let rate = if k.params.iter().any(|p| p.key == "rate") {
        declared(cx, t, k, "rate").map(|r| r.map(|v| v.as_u64()))
    } else {
        Some(None)
    };
    let delay = declared(cx, t, k, "delay").map(|d| d.expect("a fixed default").as_time());
    let queue = if t.has("queue") {
        t.table(cx, "queue").and_then(|q| read_queue(cx, &q))
    } else {
        Some(QueueSpec::default())
    };
    let topo = match (rate, delay, queue) {
        (Some(r), Some(d), Some(q)) => build_named(cx, t, k, r, d, &q),
        _ => {
            // The kind's own keys were not read: they are not unknown for that.
            for key in &known {
                t.has(key);
            }
            None
        }
    };
    t.finish(cx, &known);
    finish_links(cx, root, topo?)
}

/// Builds the topology of the core kind `sec` from `t`; `rate`, `delay` and `queue` are
/// the defaults for every link, already read.
fn build_named(
    cx: &Cx,
    t: &Tbl,
    sec: &Section,
    rate: Option<u64>,
    delay: Time,
    queue: &QueueSpec,
) -> Option<Topology> {
    let queue = queue.clone();
    let mut topo = Topology {
        kind: sec.name.to_string(),
        ..Default::default()
    };
    match sec.name {
        "single_link" => {
            let r = rate_of(cx, t, sec, "rate", rate)?;
            let a = topo.add_node("a".into());
            let b = topo.add_node("b".into());
            topo.duplex(a, b, r, delay, &queue);
        }
        "dumbbell" => {
            let n = count_of(cx, t, sec, "hosts");
            let ar = rate_of(cx, t, sec, "access_rate", rate);
            let ad = time_of(cx, t, sec, "access_delay", delay);
            let br = rate_of(cx, t, sec, "bottleneck_rate", rate);
            let bd = time_of(cx, t, sec, "bottleneck_delay", delay);
            let (n, ar, ad, br, bd) = (n?, ar?, ad?, br?, bd?);
            let delays = if t.has("access_delays") {
                times(cx, t, "access_delays", n, "hosts")?
            } else {
                vec![ad; n as usize]
            };
            let srcs: Vec<usize> = (0..n).map(|i| topo.add_node(format!("s{i}"))).collect();
            let r0 = topo.add_node("r0".into());
            let r1 = topo.add_node("r1".into());
            let dsts: Vec<usize> = (0..n).map(|i| topo.add_node(format!("d{i}"))).collect();
            for (&s, &d) in srcs.iter().zip(&delays) {
                topo.duplex(s, r0, ar, d, &queue);
            }
            topo.duplex(r0, r1, br, bd, &queue);
            for (&h, &d) in dsts.iter().zip(&delays) {
                topo.duplex(r1, h, ar, d, &queue);
            }
        }
        "merging" => {
            let ar = rate_of(cx, t, sec, "access_rate", None);
            let ad = time_of(cx, t, sec, "access_delay", delay);
            let mr = rate_of(cx, t, sec, "merge_rate", None);
            let md = time_of(cx, t, sec, "merge_delay", delay);
            let cr = rate_of(cx, t, sec, "core_rate", None);
            let cd = time_of(cx, t, sec, "core_delay", delay);
            let br = rate_of(cx, t, sec, "bottleneck_rate", None);
            let bd = time_of(cx, t, sec, "bottleneck_delay", delay);
            let (ar, ad, mr, md, cr, cd, br, bd) = (ar?, ad?, mr?, md?, cr?, cd?, br?, bd?);
            let hosts: Vec<usize> = (0..16).map(|i| topo.add_node(format!("h{i}"))).collect();
            let r: Vec<usize> = (0..8).map(|i| topo.add_node(format!("r{i}"))).collect();
            for k in 0..4 {
                topo.duplex(hosts[2 * k], r[k], ar, ad, &queue);
                topo.duplex(hosts[2 * k + 1], r[k], ar, ad, &queue);
            }
            for k in 0..4 {
                topo.duplex(r[k], r[4 + k / 2], mr, md, &queue);
            }
            topo.duplex(r[4], r[6], cr, cd, &queue);
            topo.duplex(r[5], r[6], cr, cd, &queue);
            topo.duplex(r[6], r[7], br, bd, &queue);
            for &h in &hosts[8..] {
                topo.duplex(r[7], h, ar, ad, &queue);
            }
        }
        "star" => {
            let n = count_of(cx, t, sec, "leaves")?;
            let r = rate_of(cx, t, sec, "rate", rate)?;
            let delays: Vec<Time> = if t.has("delays") {
                times(cx, t, "delays", n, "leaves")?
            } else {
                vec![delay; n as usize]
            };
            let hub = topo.add_node("hub".into());
            for (i, d) in delays.iter().enumerate() {
                let leaf = topo.add_node(format!("leaf{i}"));
                topo.duplex(leaf, hub, r, *d, &queue);
            }
            if t.has("trunk_rate") {
                let tr = rate_of(cx, t, sec, "trunk_rate", None)?;
                let td = time_of(cx, t, sec, "trunk_delay", delay)?;
                let trunk = topo.add_node("trunk".into());
                topo.duplex(hub, trunk, tr, td, &queue);
            }
        }
        "parking_lot" => {
            let n = count_of(cx, t, sec, "bottlenecks")?;
            let r = rate_of(cx, t, sec, "rate", rate)?;
            let ar = rate_of(cx, t, sec, "access_rate", Some(r.saturating_mul(10)))?;
            let ad = time_of(cx, t, sec, "access_delay", delay)?;
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
            let n = count_of(cx, t, sec, "length")?;
            let r = rate_of(cx, t, sec, "rate", rate)?;
            let nodes: Vec<usize> = (0..=n).map(|i| topo.add_node(format!("n{i}"))).collect();
            for w in nodes.windows(2) {
                topo.duplex(w[0], w[1], r, delay, &queue);
            }
        }
        "tree" => {
            let depth = count_of(cx, t, sec, "depth")?;
            let fanout = count_of(cx, t, sec, "fanout")?;
            let r = rate_of(cx, t, sec, "rate", rate)?;
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
            let n = count_of(cx, t, sec, "nodes")?;
            let r = rate_of(cx, t, sec, "rate", rate)?;
            let nodes: Vec<usize> = (0..n).map(|i| topo.add_node(format!("n{i}"))).collect();
            for i in 0..nodes.len() {
                topo.duplex(nodes[i], nodes[(i + 1) % nodes.len()], r, delay, &queue);
            }
        }
        "graph" => {
            if !t.has("nodes") {
                missing(cx, t, sec, "nodes");
                return None;
            }
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
            // A link that fails to read fails the topology: routes, per-link settings
            // and families would otherwise report its absence again.
            let mut links_ok = true;
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
                let lr = rate_of(cx, &l, &GRAPH_LINK, "rate", rate);
                let ld = time_of(cx, &l, &GRAPH_LINK, "delay", delay);
                let lq = if l.has("queue") {
                    l.table(cx, "queue").and_then(|q| read_queue(cx, &q))
                } else {
                    Some(queue.clone())
                };
                let dup = declared(cx, &l, &GRAPH_LINK, "duplex")
                    .map(|v| v.expect("a fixed default") == Value::Bool(true));
                l.finish(cx, &GRAPH_LINK.keys());
                let (Some(a), Some(b), Some(r), Some(d), Some(q), Some(dup)) =
                    (a, b, lr, ld, lq, dup)
                else {
                    links_ok = false;
                    continue;
                };
                {
                    if a == b {
                        l.error(cx, "to", "a link must join two different nodes");
                        links_ok = false;
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
                            meters: Vec::new(),
                        });
                    }
                }
            }
            if !links_ok {
                return None;
            }
        }
        other => unreachable!("{other} is not a core topology kind"),
    }
    Some(topo)
}

fn finish_links(cx: &Cx, root: &Tbl, mut topo: Topology) -> Option<Topology> {
    let t = root;
    // Duplicate link names (e.g. two graph links between the same nodes).
    let mut names = std::collections::HashSet::with_capacity(topo.links.len());
    for l in &topo.links {
        if !names.insert(l.name.as_str()) {
            cx.error(
                t.line(),
                "topology.link",
                format!("two links named {:?}", l.name),
            );
            return None;
        }
    }
    // Per-link overrides.
    apply_link_overrides(cx, root, &mut topo, true);
    Some(topo)
}

/// Applies `[links."NAME"]` overrides (the keys declared in [`LINKS`]: rate, delay, queue
/// and, where `meters` is true, meters) to the links of `topo`, reporting unknown links
/// and keys.
pub fn apply_link_overrides(cx: &Cx, root: &Tbl, topo: &mut Topology, meters: bool) {
    if !root.has("links") {
        return;
    }
    let Some(lt) = root.table(cx, "links") else {
        return;
    };
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
        // The scalar keys, read through their declaration (sections::LINKS).
        let link = &mut topo.links[i];
        super::declared::key_into(cx, &o, &LINKS, "rate", &mut link.rate, |v| v.as_u64());
        super::declared::key_into(cx, &o, &LINKS, "delay", &mut link.delay, |v| v.as_time());
        if o.has("queue") {
            if let Some(q) = o.table(cx, "queue").and_then(|q| read_queue(cx, &q)) {
                topo.links[i].queue = q;
            }
        }
        if meters && o.has("meters") {
            let ms: Vec<Option<MeterSpec>> = o
                .tables(cx, "meters")
                .iter()
                .map(|m| read_meter(cx, m, true, "on a link"))
                .collect();
            if ms.iter().all(Option::is_some) {
                topo.links[i].meters = ms.into_iter().flatten().collect();
            }
        }
        // A family's own topology takes no meters.
        let known: Vec<&str> = LINKS
            .keys()
            .into_iter()
            .filter(|k| meters || *k != "meters")
            .collect();
        o.finish(cx, &known);
    }
}
