//! Next hops on a network whose links form a forest: every link `a -> b` has exactly one
//! link `b -> a`, no two links join the same ordered pair of nodes, and the links, taken
//! as undirected edges, have no cycle. All named topologies of trees, stars, chains and
//! dumbbells are such forests.
//!
//! In a forest the path between two nodes of one tree is unique, and it is the one the
//! general shortest-path rule picks ([`super::Network::routes_to`]: least total delay,
//! then fewest hops, then the lower link id): leaving a node by any other link costs at
//! least that link's delay and its way back on top of the unique path, and two hops more.
//! So the next hop is found from the tree's shape alone, without a table per destination:
//! the nodes are numbered in depth-first order from a root, each subtree is then a range of
//! numbers, and a packet goes down to the child whose range holds its destination, else
//! up. Memory and building are linear in the nodes and links, where a table per
//! destination grows with their product.

use super::{LinkId, NodeId, NONE};

/// At most this many table entries per child: a node whose subtree is no larger than that
/// finds the child leading to a destination in one look-up, others by a binary search
/// over their children. (This bounds the tables to this many entries per node.)
const TABLE_PER_CHILD: u32 = 16;

/// One node of the forest.
#[derive(Clone, Copy, Debug)]
struct TreeNode {
    /// Its depth-first number.
    num: u32,
    /// The largest number in its subtree.
    last: u32,
    /// The link to its parent ([`NONE`] at a root).
    up: LinkId,
    /// Its tree (the root's number).
    tree: u32,
    /// Its children: `kids[kid0..kid_end]`, in number order.
    kid0: u32,
    kid_end: u32,
    /// Start of its table in `table` ([`NONE`] if it has none): entry `i` is the link to
    /// the child whose subtree holds number `num + 1 + i`.
    table: u32,
}

/// Next hops on a forest (see the module's documentation).
#[derive(Debug)]
pub(crate) struct TreeRoutes {
    nodes: Vec<TreeNode>,
    /// Children of every node: (the child's number, the link down to it).
    kids: Vec<(u32, LinkId)>,
    table: Vec<LinkId>,
}

impl TreeRoutes {
    /// The forest's next hops, or `None` if the links (each `(from, to)`) do not form a
    /// forest as described in the module's documentation.
    pub(crate) fn new(nodes: usize, links: &[(NodeId, NodeId)]) -> Option<TreeRoutes> {
        // Out-links of every node, as a compressed adjacency list, in link id order.
        let mut start = vec![0u32; nodes + 1];
        for &(a, b) in links {
            if a == b {
                return None;
            }
            start[a as usize + 1] += 1;
        }
        for i in 0..nodes {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut out = vec![0 as LinkId; links.len()];
        for (i, &(a, _)) in links.iter().enumerate() {
            out[fill[a as usize] as usize] = i as LinkId;
            fill[a as usize] += 1;
        }
        // Every link has exactly one link back, and no pair is joined twice: within a
        // node's out-links sorted by far end, no far end repeats, and the reverse of each
        // is found in the far end's out-links.
        let far = |l: LinkId| links[l as usize].1;
        let mut sorted = out.clone();
        for a in 0..nodes {
            let s = &mut sorted[start[a] as usize..start[a + 1] as usize];
            s.sort_unstable_by_key(|&l| far(l));
            if s.windows(2).any(|w| far(w[0]) == far(w[1])) {
                return None;
            }
        }
        let back = |l: LinkId| -> Option<LinkId> {
            let (a, b) = links[l as usize];
            let s = &sorted[start[b as usize] as usize..start[b as usize + 1] as usize];
            s.binary_search_by_key(&a, |&m| far(m)).ok().map(|i| s[i])
        };
        for l in 0..links.len() {
            back(l as LinkId)?;
        }
        // The link from every node to its parent, filled as the walk goes down.
        let mut up = vec![NONE; nodes];
        let parent = |up: &[LinkId], u: usize| -> u32 {
            if up[u] == NONE {
                u32::MAX
            } else {
                far(up[u])
            }
        };
        // Depth-first numbering from each unnumbered node in id order, without recursion.
        const UNSEEN: u32 = u32::MAX;
        let mut num = vec![UNSEEN; nodes];
        let mut last = vec![0u32; nodes];
        let mut tree = vec![0u32; nodes];
        let mut next = 0u32;
        // (node, position in its out-links)
        let mut stack: Vec<(u32, u32)> = Vec::new();
        for root in 0..nodes {
            if num[root] != UNSEEN {
                continue;
            }
            let t = next;
            num[root] = next;
            tree[root] = t;
            next += 1;
            stack.push((root as u32, start[root]));
            while let Some(&mut (u, ref mut pos)) = stack.last_mut() {
                if *pos == start[u as usize + 1] {
                    last[u as usize] = next - 1;
                    stack.pop();
                    continue;
                }
                let l = out[*pos as usize];
                *pos += 1;
                let v = far(l) as usize;
                if v as u32 == parent(&up, u as usize) {
                    continue;
                }
                if num[v] != UNSEEN {
                    // Reached again other than by the way it was reached: a cycle.
                    return None;
                }
                num[v] = next;
                tree[v] = t;
                next += 1;
                up[v] = back(l).expect("checked");
                stack.push((v as u32, start[v]));
            }
        }
        // Children, in number order: a node's out-links other than its `up`.
        let mut kids = Vec::with_capacity(links.len() / 2);
        let mut tn = Vec::with_capacity(nodes);
        let mut table = Vec::new();
        for u in 0..nodes {
            let kid0 = kids.len() as u32;
            for &l in &out[start[u] as usize..start[u + 1] as usize] {
                let v = far(l) as usize;
                if v as u32 == parent(&up, u) {
                    continue;
                }
                kids.push((num[v], l));
            }
            let ks = &mut kids[kid0 as usize..];
            ks.sort_unstable_by_key(|&(n, _)| n);
            let kid_end = kids.len() as u32;
            let nk = kid_end - kid0;
            let span = last[u] - num[u];
            let t = if nk >= 2 && span <= TABLE_PER_CHILD * nk {
                let t0 = table.len() as u32;
                for &(n, l) in &kids[kid0 as usize..kid_end as usize] {
                    let end = last[links[l as usize].1 as usize];
                    table.extend(std::iter::repeat_n(l, (end - n + 1) as usize));
                }
                debug_assert_eq!(table.len() as u32 - t0, span);
                t0
            } else {
                NONE
            };
            tn.push(TreeNode {
                num: num[u],
                last: last[u],
                up: up[u],
                tree: tree[u],
                kid0,
                kid_end,
                table: t,
            });
        }
        Some(TreeRoutes {
            nodes: tn,
            kids,
            table,
        })
    }

    /// The link from `node` towards `dst` ([`NONE`] if there is none or they are the same
    /// node).
    #[inline]
    pub(crate) fn next(&self, node: NodeId, dst: NodeId) -> LinkId {
        let u = &self.nodes[node as usize];
        let d = &self.nodes[dst as usize];
        // Where the destination lies in the node's subtree, the node itself excluded (one
        // unsigned comparison: numbers outside wrap to large offsets).
        let off = d.num.wrapping_sub(u.num).wrapping_sub(1);
        if off >= u.last - u.num {
            // Up, unless it is the node itself or in another tree.
            return if d.tree == u.tree && node != dst {
                u.up
            } else {
                NONE
            };
        }
        if u.kid_end - u.kid0 == 1 {
            return self.kids[u.kid0 as usize].1;
        }
        if u.table != NONE {
            return self.table[(u.table + off) as usize];
        }
        let ks = &self.kids[u.kid0 as usize..u.kid_end as usize];
        // The last child numbered at or before the destination holds it.
        let i = ks.partition_point(|&(n, _)| n <= d.num);
        ks[i - 1].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Network;
    use crate::queue::{DropTail, Limit};
    use crate::rng::Rng;

    /// A network of `n` nodes and the given links (from, to, delay in ps), in that order.
    fn network(n: usize, links: &[(u32, u32, u64)]) -> Network {
        let mut net = Network::new();
        for i in 0..n {
            net.add_node(&format!("n{i}"));
        }
        for (i, &(a, b, d)) in links.iter().enumerate() {
            net.add_link(
                &format!("l{i}"),
                a,
                b,
                1_000_000,
                d,
                Box::new(DropTail::new(Limit::Packets(10))),
            );
        }
        net
    }

    fn ends(net: &Network) -> Vec<(NodeId, NodeId)> {
        net.links.iter().map(|l| (l.from, l.to)).collect()
    }

    /// A random forest of `n` nodes: node i joins a random earlier node with probability
    /// 0.9 by a duplex link (delays 0 to 3 units, each direction its own), and the
    /// links are added in a shuffled order.
    fn random_forest(r: &mut Rng, n: usize) -> Vec<(u32, u32, u64)> {
        let mut links = Vec::new();
        for i in 1..n as u32 {
            if r.uniform() < 0.9 {
                let j = r.below(u64::from(i)) as u32;
                links.push((i, j, r.below(4) * 1000));
                links.push((j, i, r.below(4) * 1000));
            }
        }
        for i in (1..links.len()).rev() {
            let j = r.below(i as u64 + 1) as usize;
            links.swap(i, j);
        }
        links
    }

    #[test]
    fn forest_next_hops_are_the_shortest_paths() {
        let mut r = Rng::stream(7, "forest");
        for case in 0..200 {
            let n = 1 + r.below(if case < 150 { 12 } else { 200 }) as usize;
            let net = network(n, &random_forest(&mut r, n));
            let t = TreeRoutes::new(n, &ends(&net)).expect("a forest");
            for dst in 0..n as NodeId {
                let col = net.shortest_paths_to(dst);
                for u in 0..n as NodeId {
                    assert_eq!(t.next(u, dst), col[u as usize], "case {case}: {u} -> {dst}");
                }
            }
        }
    }

    #[test]
    fn a_star_uses_tables_and_a_deep_tree_searches() {
        // A hub with 40 leaves (a table), and a binary tree of depth 8 whose upper nodes'
        // subtrees are too large for a table (a search over two children).
        let mut links = Vec::new();
        for i in 1..=40 {
            links.push((0, i, 1000));
            links.push((i, 0, 1000));
        }
        let n_star = 41;
        let n = n_star + 511;
        for i in 1..511u32 {
            let (c, p) = (n_star as u32 + i, n_star as u32 + (i - 1) / 2);
            links.push((c, p, 5));
            links.push((p, c, 5));
        }
        let net = network(n, &links);
        let t = TreeRoutes::new(n, &ends(&net)).expect("a forest");
        assert!(t.nodes[0].table != NONE, "the hub has a table");
        assert!(t.nodes[n_star].table == NONE, "the binary root searches");
        for dst in 0..n as NodeId {
            let col = net.shortest_paths_to(dst);
            for u in 0..n as NodeId {
                assert_eq!(t.next(u, dst), col[u as usize], "{u} -> {dst}");
            }
        }
    }

    #[test]
    fn other_shapes_are_not_forests() {
        // A ring of three.
        let ring = [
            (0, 1, 1),
            (1, 0, 1),
            (1, 2, 1),
            (2, 1, 1),
            (2, 0, 1),
            (0, 2, 1),
        ];
        // A link without its way back.
        let oneway = [(0, 1, 1), (1, 0, 1), (1, 2, 1)];
        // Two links the same way between one pair.
        let twice = [(0, 1, 1), (1, 0, 1), (0, 1, 2)];
        // A link from a node to itself.
        let own = [(0, 1, 1), (1, 0, 1), (2, 2, 1)];
        for (name, links) in [
            ("ring", &ring[..]),
            ("oneway", &oneway[..]),
            ("twice", &twice[..]),
            ("own", &own[..]),
        ] {
            let e: Vec<(NodeId, NodeId)> = links.iter().map(|&(a, b, _)| (a, b)).collect();
            assert!(TreeRoutes::new(3, &e).is_none(), "{name}");
        }
        // ...and those networks still route by shortest paths.
        let mut net = network(3, &ring);
        assert_eq!(net.next_hop(0, 2), Some(5));
        assert!(matches!(net.routing, super::super::Routing::General));
    }
}
