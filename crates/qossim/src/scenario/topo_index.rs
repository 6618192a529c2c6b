//! Look-ups into a [`Topology`](super::Topology) by name, by end nodes and by
//! reachability, in constant time each, so that reading a scenario stays linear in its
//! nodes, links and traffic entries.
//!
//! The index is a cache beside the topology's public vectors. Topologies only ever grow
//! (nodes and links are appended while they are read; later changes touch a link's rate,
//! delay, queue or meters, never its name or ends), so the index follows them by taking
//! in what was appended since it last looked: each node and link is indexed once.

use std::collections::HashMap;
use std::sync::Mutex;

/// What the index knows, for the first `nodes` nodes and `links` links.
#[derive(Default)]
struct State {
    /// Nodes indexed so far.
    nodes: usize,
    /// Links indexed so far.
    links: usize,
    /// Node name -> the first node of that name.
    node: HashMap<String, usize>,
    /// Link name -> the first link of that name.
    link: HashMap<String, usize>,
    /// (from, to) -> the first link between them.
    between: HashMap<(usize, usize), usize>,
    /// Reachability, for the sizes it was computed at (`None` once stale).
    reach: Option<Reach>,
}

/// Reachability between nodes.
struct Reach {
    /// Node and link counts it was computed for.
    at: (usize, usize),
    /// Per node, its weakly connected component, when every link has a link back (then
    /// a node reaches exactly the nodes of its component); `None` otherwise.
    component: Option<Vec<u32>>,
}

/// The index of a topology (see the module's documentation). It compares equal to any
/// other and clones empty: it is a cache, not part of the topology's value.
#[derive(Default)]
pub struct TopoIndex(Mutex<State>);

impl Clone for TopoIndex {
    fn clone(&self) -> Self {
        TopoIndex::default()
    }
}

impl PartialEq for TopoIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for TopoIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TopoIndex")
    }
}

/// A link's identity as the index needs it: its name and its ends.
pub trait LinkEnds {
    /// The link's name.
    fn name(&self) -> &str;
    /// (from, to) node indices.
    fn ends(&self) -> (usize, usize);
}

impl TopoIndex {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while the lock was held can only have left a partly filled cache: start
        // it again.
        match self.0.lock() {
            Ok(g) => g,
            Err(p) => {
                let mut g = p.into_inner();
                *g = State::default();
                g
            }
        }
    }

    /// Brings the index up to `nodes` and `links` (rebuilding it if they shrank).
    fn update<L: LinkEnds>(s: &mut State, nodes: &[String], links: &[L]) {
        if nodes.len() < s.nodes || links.len() < s.links {
            *s = State::default();
        }
        for (i, n) in nodes.iter().enumerate().skip(s.nodes) {
            s.node.entry(n.clone()).or_insert(i);
        }
        s.nodes = nodes.len();
        for (i, l) in links.iter().enumerate().skip(s.links) {
            s.link.entry(l.name().to_string()).or_insert(i);
            s.between.entry(l.ends()).or_insert(i);
        }
        s.links = links.len();
    }

    /// The first node called `name`.
    pub fn node<L: LinkEnds>(&self, nodes: &[String], links: &[L], name: &str) -> Option<usize> {
        let mut s = self.state();
        Self::update(&mut s, nodes, links);
        s.node.get(name).copied()
    }

    /// The first link called `name`.
    pub fn link<L: LinkEnds>(&self, nodes: &[String], links: &[L], name: &str) -> Option<usize> {
        let mut s = self.state();
        Self::update(&mut s, nodes, links);
        s.link.get(name).copied()
    }

    /// The first link from `a` to `b`.
    pub fn between<L: LinkEnds>(
        &self,
        nodes: &[String],
        links: &[L],
        a: usize,
        b: usize,
    ) -> Option<usize> {
        let mut s = self.state();
        Self::update(&mut s, nodes, links);
        s.between.get(&(a, b)).copied()
    }

    /// Whether `b` is reachable from `a` when the answer comes from components (every
    /// link has a link back); `None` when the topology is not symmetric and the caller
    /// has to search.
    pub fn reachable<L: LinkEnds>(
        &self,
        nodes: &[String],
        links: &[L],
        a: usize,
        b: usize,
    ) -> Option<bool> {
        let mut s = self.state();
        Self::update(&mut s, nodes, links);
        let at = (nodes.len(), links.len());
        if s.reach.as_ref().is_none_or(|r| r.at != at) {
            let component = components(nodes.len(), links, &s.between);
            s.reach = Some(Reach { at, component });
        }
        let c = s.reach.as_ref().and_then(|r| r.component.as_ref())?;
        Some(c[a] == c[b])
    }
}

/// Weakly connected components of the nodes, when every link `a -> b` has a link
/// `b -> a` (else `None`).
fn components<L: LinkEnds>(
    n: usize,
    links: &[L],
    between: &HashMap<(usize, usize), usize>,
) -> Option<Vec<u32>> {
    if links
        .iter()
        .any(|l| !between.contains_key(&(l.ends().1, l.ends().0)))
    {
        return None;
    }
    // Union-find with path halving and union by size.
    let mut parent: Vec<usize> = (0..n).collect();
    let mut size = vec![1u32; n];
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for l in links {
        let (a, b) = l.ends();
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            let (big, small) = if size[ra] >= size[rb] {
                (ra, rb)
            } else {
                (rb, ra)
            };
            parent[small] = big;
            size[big] += size[small];
        }
    }
    Some((0..n).map(|x| find(&mut parent, x) as u32).collect())
}
