//! The network: nodes, unidirectional links with an output port each, and forwarding.
//!
//! A link's output port holds a [`QueueDisc`] and a chain of
//! [`PortHook`]s (markers, meters, policers) applied to every packet arriving at the port.
//! A link transmits one packet at a time (store and forward); a transmitted packet joins
//! the link's in-flight list, which is FIFO because the propagation delay is constant, so
//! only the head needs an event.
//!
//! The module is in four parts:
//! - this file: the network's shape (nodes, links, their counters and hooks), routing
//!   and forwarding;
//! - `port`: the port data path, the general case every port can run (hooks, queue
//!   discipline, one event per transmission end and per arrival);
//! - `fast_path`: the FIFO fast path and the transit hand-off, a specialisation of the
//!   general path for plain FIFO ports that computes the same transmissions without
//!   their events (see [`Network::disable_fast_paths`]);
//! - `landing`: deliveries to plain sinks counted without an arrival event ([`Landing`]).

pub use crate::packet::{
    marks, AgentId, FlowId, HeaderFields, LinkId, NodeId, Packet, PacketKind, NONE,
};

use crate::metrics::TimeAverage;
use crate::queue::{DropLog, Limit, QueueDisc};
use crate::time::{tx_time, Time};
use crate::trace::{SharedTracer, TraceDrops};
use std::collections::VecDeque;

mod fast_path;
mod landing;
mod port;
mod tree;
use fast_path::Departure;
pub(crate) use landing::arrival_key;
pub use landing::Landing;
use tree::TreeRoutes;

/// How packets without an explicit route find their next hop.
#[derive(Debug, Default)]
enum Routing {
    /// Not decided since the last node or link was added.
    #[default]
    Unknown,
    /// The links form a forest: next hops from its shape ([`tree`]).
    Tree(Box<TreeRoutes>),
    /// Shortest paths per destination, in `fib`.
    General,
}

/// What a hook sees of the port it sits on.
#[derive(Clone, Copy, Debug)]
pub struct PortInfo {
    /// Link rate, bits per second.
    pub rate_bps: u64,
    /// Packets in the queue discipline.
    pub queue_pkts: usize,
    /// Bytes in the queue discipline.
    pub queue_bytes: u64,
}

/// A marker, meter, policer or observer attached to an output port.
///
/// `on_arrival` runs for every packet offered to the port before the queue discipline
/// sees it; it may change the packet's marks or class, and returns `false` to discard it.
/// `on_departure` runs when a packet starts transmission.
pub trait PortHook: std::any::Any {
    /// A packet arrives at the port.
    fn on_arrival(&mut self, pkt: &mut Packet, now: Time, port: &PortInfo) -> bool;
    /// A packet starts transmission. Only called if [`PortHook::wants_departures`].
    /// The hook may mark the packet (set its mark bits) before it leaves.
    fn on_departure(&mut self, _pkt: &mut Packet, _now: Time) {}
    /// True if this hook needs [`PortHook::on_departure`] calls (it then keeps the port on
    /// the general path, with one event per transmission). Hooks that only act on
    /// arrivals should return false so FIFO ports can skip the end-of-transmission event.
    fn wants_departures(&self) -> bool {
        true
    }
    /// Appends this hook's counters (name, value) to `out` for the run summary.
    fn report(&self, _out: &mut Vec<(String, f64)>) {}
    /// The warm-up ends at `now`: counters that are measured after it start again.
    fn on_warmup(&mut self, _now: Time) {}
}

/// A typed handle on a hook: its link, its place in the link's chain and its type, as
/// [`Network::add_hook`] returned it. [`Network::hook_mut`] gives the hook back as a `T`
/// (to read it after a run or reconfigure it during one) without a type test where it is
/// used.
pub struct HookHandle<T> {
    link: LinkId,
    index: usize,
    hook: std::marker::PhantomData<fn() -> T>,
}

impl<T> HookHandle<T> {
    /// The link whose port the hook sits on.
    pub fn link(self) -> LinkId {
        self.link
    }
}

impl<T> Clone for HookHandle<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for HookHandle<T> {}

impl<T> PartialEq for HookHandle<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.link, self.index) == (other.link, other.index)
    }
}

impl<T> Eq for HookHandle<T> {}

impl<T> std::fmt::Debug for HookHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HookHandle(link {}, #{})", self.link, self.index)
    }
}

/// Per-link counters.
#[derive(Debug, Default)]
pub struct LinkStats {
    /// Packets offered to the port.
    pub arrivals: u64,
    /// Bytes offered to the port.
    pub arrival_bytes: u64,
    /// Packets that started transmission.
    pub tx_pkts: u64,
    /// Bytes that started transmission.
    pub tx_bytes: u64,
    /// Bytes that started transmission, per class (classes >= 7 count in slot 7).
    pub tx_bytes_by_class: [u64; 8],
    /// Bytes that started transmission carrying all bits of each counted mark (see
    /// [`Network::count_marked`]), per counter slot.
    pub tx_bytes_marked: [u64; MARK_COUNTERS],
    /// Drops, by cause and class.
    pub drops: DropLog,
    /// Time-weighted number of packets queued (excluding the one in transmission).
    pub queue_avg: TimeAverage,
    /// Largest queue seen, packets.
    pub queue_max: usize,
    /// Class slot (0..=7) of the packet whose transmission started last.
    pub last_class: u8,
    /// Marks of the packet whose transmission started last.
    pub last_marks: u16,
}

/// How many marks a link can count bytes of.
pub const MARK_COUNTERS: usize = 2;

/// Counts a packet whose transmission starts: packets, bytes, bytes of its class and of
/// the counted marks it carries; remembers its class and marks, which the part of it
/// still on its way to the wire belongs to (see [`Link::bits_sent_by_class`]).
#[inline(always)]
fn count_start(
    counted: &[(&'static str, u16); MARK_COUNTERS],
    st: &mut LinkStats,
    size: u32,
    class: u8,
    marks: u16,
) {
    let c = (class as usize).min(7);
    st.tx_pkts += 1;
    st.tx_bytes += size as u64;
    st.tx_bytes_by_class[c] += size as u64;
    st.last_class = c as u8;
    st.last_marks = marks;
    count_marked(counted, st, marks, size);
}

/// Adds `size` to every counter slot whose mask is fully set in `marks`.
#[inline]
fn count_marked(
    counted: &[(&'static str, u16); MARK_COUNTERS],
    st: &mut LinkStats,
    marks: u16,
    size: u32,
) {
    // Slots are taken in order and never given back: an unused first slot means none.
    if counted[0].1 == 0 {
        return;
    }
    for (i, &(_, m)) in counted.iter().enumerate() {
        if m != 0 && marks & m == m {
            st.tx_bytes_marked[i] += size as u64;
        }
    }
}

/// A unidirectional link and its output port.
pub struct Link {
    /// Name, unique in the network.
    pub name: String,
    /// Upstream node (where the output port is).
    pub from: NodeId,
    /// Downstream node.
    pub to: NodeId,
    /// Rate, bits per second.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: Time,
    /// The queue discipline of the output port.
    pub qdisc: Box<dyn QueueDisc>,
    /// Markers, meters and policers, applied in order to arriving packets.
    pub hooks: Vec<Box<dyn PortHook>>,
    /// Counters.
    pub stats: LinkStats,
    /// Port elements: agents that see (and may change or consume) every packet offered
    /// to this port before its hooks and queue discipline (see `World::attach_port`).
    pub elements: Vec<AgentId>,
    /// The marks whose bytes are counted in [`LinkStats::tx_bytes_marked`] (name and
    /// mask per slot; an empty mask is an unused slot).
    counted: [(&'static str, u16); MARK_COUNTERS],
    busy: bool,
    wake_pending: bool,
    /// The discipline runs a timer ([`QueueDisc::timer`]).
    timed: bool,
    /// When the discipline's timer event is scheduled (`Time::MAX`: none).
    timer_at: Time,
    in_flight: VecDeque<(Time, Packet)>,
    /// Packets on the wire to a plain sink at the far end, counted as delivered when the
    /// run passes their arrival, without an event (see [`Landing`]); in arrival order.
    pub(crate) landing: VecDeque<(Time, Packet)>,
    /// Packets for a plain sink at the far end may land without an event: the far end
    /// has no taps and the shortcuts are on.
    lands: bool,
    /// FIFO fast path: the tail-drop limit, when the discipline is a plain FIFO and no
    /// hook needs departure calls.
    fast: Option<Limit>,
    /// Number of hooks when `fast` was last decided (hooks may be pushed directly).
    hooks_seen: usize,
    /// When the transmitter is next free (the end of the transmission under way, on
    /// either path).
    busy_until: Time,
    /// FIFO fast path: accepted packets whose transmission has not been accounted yet,
    /// in start order.
    ledger: VecDeque<Departure>,
    /// FIFO fast path: bytes in the ledger that have not started transmission.
    waiting_bytes: u64,
    /// Handed-off packets at the end of the ledger that have not reached the port yet.
    unarrived: usize,
    /// The far end only passes packets on: one link leads there and it has no taps, so
    /// a packet sent here may be handed to its next port at once (see
    /// [`Network::hand_off`]).
    hands_off: bool,
    /// Count of in-flight heads withdrawn after their arrival event was scheduled; an
    /// arrival event carries the count it was scheduled under, and is ignored if the
    /// count has moved on.
    pub(crate) gen: u32,
    /// The link packets are handed off from (the one link into this port's node).
    via: LinkId,
    /// Packets handed off to this port since a hand-off last settled its ledger.
    handed: u32,
    /// General path: a transmission that leaves the queue empty ends without an event
    /// (see [`Link::settle`]); off when the shortcuts are, and for timed disciplines.
    lazy_ok: bool,
    /// The end of the transmission under way when it has no event: its time and the
    /// sequence number its event would have had.
    lazy_end: Option<(Time, u64)>,
}

/// Packets and bytes of data per flow: the conservation check's counts of packets lost
/// (taken out of the network without being delivered: dropped at a port, unroutable,
/// discarded by an agent) and of packets still held (`World::check_invariants`).
pub type FlowCounts = std::collections::HashMap<FlowId, (u64, u64)>;

/// The loss counts, shared by the flow table, the network and the ports' drop observers.
pub type SharedLedger = std::rc::Rc<std::cell::RefCell<FlowCounts>>;

/// Counts a data packet (not an acknowledgement) under its flow.
pub fn tally(counts: &mut FlowCounts, pkt: &Packet) {
    if pkt.kind == PacketKind::Data {
        let e = counts.entry(pkt.flow).or_default();
        e.0 += 1;
        e.1 += pkt.size as u64;
    }
}

/// Counts a data packet (not an acknowledgement) in a loss ledger.
pub fn ledger_add(ledger: &SharedLedger, pkt: &Packet) {
    tally(&mut ledger.borrow_mut(), pkt);
}

/// Tells a loss ledger of every drop a port records (attach with `DropLog::observe`).
pub struct LedgerObserver(pub SharedLedger);

impl crate::queue::DropObserver for LedgerObserver {
    fn on_drop(&mut self, pkt: &Packet, _cause: crate::queue::DropCause) {
        ledger_add(&self.0, pkt);
    }
}

impl Link {
    /// The marks counted on this link: (slot, name, mask) of each counter in use.
    pub fn counted_marks(&self) -> impl Iterator<Item = (usize, &'static str, u16)> + '_ {
        self.counted
            .iter()
            .enumerate()
            .filter(|(_, (_, m))| *m != 0)
            .map(|(i, &(n, m))| (i, n, m))
    }
}

/// A node: a router or a host. Agents attach to nodes through the world.
#[derive(Debug, Clone)]
pub struct Node {
    /// Name, unique in the network.
    pub name: String,
    /// Agents that observe every packet arriving at this node from a link
    /// (egress controllers, measurement points).
    pub taps: Vec<AgentId>,
}

/// Nodes, links and forwarding state.
#[derive(Default)]
pub struct Network {
    /// Node arena.
    pub nodes: Vec<Node>,
    /// Link arena.
    pub links: Vec<Link>,
    /// Explicit routes: sequences of links.
    pub routes: Vec<Vec<LinkId>>,
    /// Next hops, `fib[dst][node]` = outgoing link or [`NONE`]; a column is computed the
    /// first time a destination is used, so memory grows with the destinations in use.
    fib: Vec<Vec<LinkId>>,
    /// Forest next hops when the links form one, else `fib` (decided on first use).
    routing: Routing,
    /// Packets dropped at a node for lack of a route.
    pub unroutable: u64,
    /// Per-flow losses, kept while run invariants are checked.
    ledger: Option<SharedLedger>,
    /// Every port takes the general path (see [`Network::disable_fast_paths`]).
    no_fast_path: bool,
    /// Packets forwarded to ports with elements, waiting for the world to show them to
    /// the elements (in forwarding order) before they are enqueued.
    pub deferred: VecDeque<(LinkId, Packet)>,
    /// The run's packet tracer, when the scenario has `[[trace]]` entries.
    tracer: Option<SharedTracer>,
    /// Per link: the tracer, when it may want the port's events (empty when nothing is
    /// traced, so the ports' only cost is one test of `traced`).
    port_tracers: Vec<Option<SharedTracer>>,
    /// True when some port is traced.
    traced: bool,
    /// Deliveries to plain sinks made without an event.
    pub(crate) landing: Landing,
    /// Per node: the links that lead into it, in id order.
    in_links: Vec<Vec<LinkId>>,
}

impl Network {
    /// An empty network.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts, from now on, packets dropped for lack of a route in `ledger`.
    pub fn set_ledger(&mut self, ledger: SharedLedger) {
        self.ledger = Some(ledger);
    }

    /// Adds a node and returns its id.
    pub fn add_node(&mut self, name: &str) -> NodeId {
        self.nodes.push(Node {
            name: name.to_string(),
            taps: Vec::new(),
        });
        self.routing = Routing::Unknown;
        (self.nodes.len() - 1) as NodeId
    }

    /// Looks a node up by name.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as NodeId)
    }

    /// Adds a unidirectional link with its output port and returns its id.
    pub fn add_link(
        &mut self,
        name: &str,
        from: NodeId,
        to: NodeId,
        rate_bps: u64,
        delay: Time,
        qdisc: Box<dyn QueueDisc>,
    ) -> LinkId {
        assert!(rate_bps > 0, "link {name}: rate must be positive");
        let timed = qdisc.timer().is_some();
        self.links.push(Link {
            name: name.to_string(),
            from,
            to,
            rate_bps,
            delay,
            qdisc,
            hooks: Vec::new(),
            stats: LinkStats::default(),
            elements: Vec::new(),
            counted: [("", 0); MARK_COUNTERS],
            busy: false,
            wake_pending: false,
            timed,
            timer_at: Time::MAX,
            in_flight: VecDeque::new(),
            landing: VecDeque::new(),
            lands: !self.no_fast_path && self.nodes[to as usize].taps.is_empty(),
            fast: None,
            hooks_seen: 0,
            busy_until: 0,
            ledger: VecDeque::new(),
            waiting_bytes: 0,
            unarrived: 0,
            hands_off: false,
            gen: 0,
            via: NONE,
            handed: 0,
            lazy_ok: false,
            lazy_end: None,
        });
        if self.in_links.len() < self.nodes.len() {
            self.in_links.resize_with(self.nodes.len(), Vec::new);
        }
        let id = self.links.len() - 1;
        let ins = &mut self.in_links[to as usize];
        ins.push(id as LinkId);
        if ins.len() == 1 {
            self.links[id].hands_off =
                !self.no_fast_path && self.nodes[to as usize].taps.is_empty();
        } else if ins.len() == 2 {
            // A second way in: nothing is handed off there any more (the new link starts
            // without; later ones find the first cleared already).
            let first = ins[0];
            self.links[first as usize].hands_off = false;
        }
        self.refresh_fast_path(self.links.len() as LinkId - 1);
        self.fib.clear();
        self.routing = Routing::Unknown;
        (self.links.len() - 1) as LinkId
    }

    /// Adds a duplex link between `a` and `b`: two unidirectional links named `A-B` and
    /// `B-A` with the same rate and delay, each with its own queue from `qdisc()`.
    /// Returns the ids (a to b, b to a).
    pub fn add_duplex(
        &mut self,
        a: NodeId,
        b: NodeId,
        rate_bps: u64,
        delay: Time,
        mut qdisc: impl FnMut() -> Box<dyn QueueDisc>,
    ) -> (LinkId, LinkId) {
        let name = |x: NodeId, y: NodeId, n: &Network| {
            format!("{}-{}", n.nodes[x as usize].name, n.nodes[y as usize].name)
        };
        let ab = name(a, b, self);
        let ba = name(b, a, self);
        let l1 = self.add_link(&ab, a, b, rate_bps, delay, qdisc());
        let l2 = self.add_link(&ba, b, a, rate_bps, delay, qdisc());
        (l1, l2)
    }

    /// Attaches a packet tracer: every port it may want events of is traced (call after
    /// the links are built).
    pub fn attach_tracer(&mut self, tracer: SharedTracer) {
        self.port_tracers = vec![None; self.links.len()];
        for (i, l) in self.links.iter_mut().enumerate() {
            let id = i as LinkId;
            if tracer.borrow().wants_link(id, l.from, l.to) {
                self.port_tracers[i] = Some(tracer.clone());
                self.traced = true;
                l.stats.drops.observe(Box::new(TraceDrops {
                    link: id,
                    node: l.from,
                    tracer: tracer.clone(),
                }));
            }
        }
        self.tracer = Some(tracer);
    }

    /// The run's tracer, if any.
    pub fn tracer(&self) -> Option<&SharedTracer> {
        self.tracer.as_ref()
    }

    /// Sends every port, now and later, through the general path (queue discipline and a
    /// transmission-end event per packet) instead of the FIFO fast path, and gives every
    /// transmission its end event (also those that leave the queue empty, which otherwise
    /// end without one, see [`Link::settle`]). Results are the
    /// same either way — only the number of events differs — which the test suite checks
    /// on every shipped scenario; call before the run starts.
    pub fn disable_fast_paths(&mut self) {
        self.no_fast_path = true;
        for l in 0..self.links.len() {
            self.refresh_fast_path(l as LinkId);
            self.links[l].lands = false;
            self.links[l].hands_off = false;
        }
    }

    /// Stops packets from landing without an event at `node` (it gained a tap).
    pub(crate) fn tapped(&mut self, node: NodeId) {
        for &l in self.in_links.get(node as usize).map_or(&[][..], |v| &v[..]) {
            let l = &mut self.links[l as usize];
            l.lands = false;
            l.hands_off = false;
        }
    }

    /// The link `pkt` leaves `node` by ([`NONE`] if there is none): the next one of its
    /// explicit route (the caller advances its hop), else the shortest path's.
    #[inline(always)]
    fn link_out(&mut self, node: NodeId, pkt: &Packet) -> LinkId {
        if pkt.route != NONE {
            let r = &self.routes[pkt.route as usize];
            r.get(pkt.hop as usize).copied().unwrap_or(NONE)
        } else {
            // A column first (the only thing to test on networks routed by columns), then
            // the forest (whose columns are only made for `routes_to`'s callers).
            match self.fib.get(pkt.dst as usize) {
                Some(col) if col.len() == self.nodes.len() => col[node as usize],
                _ => match &self.routing {
                    Routing::Tree(t) => t.next(node, pkt.dst),
                    _ => self.next_hop_general(node, pkt.dst),
                },
            }
        }
    }

    /// The next hop from `node` towards `dst` when the routing is not (yet) known to be a
    /// forest's.
    #[inline(never)]
    fn next_hop_general(&mut self, node: NodeId, dst: NodeId) -> LinkId {
        if let Routing::Unknown = self.routing {
            self.decide_routing();
            if let Routing::Tree(t) = &self.routing {
                return t.next(node, dst);
            }
        }
        match self.fib.get(dst as usize) {
            Some(col) if col.len() == self.nodes.len() => col[node as usize],
            _ => self.routes_to(dst)[node as usize],
        }
    }

    /// Decides how next hops are found: from the forest's shape if the links form one,
    /// else by shortest paths per destination.
    fn decide_routing(&mut self) {
        let ends: Vec<(NodeId, NodeId)> = self.links.iter().map(|l| (l.from, l.to)).collect();
        self.routing = match TreeRoutes::new(self.nodes.len(), &ends) {
            Some(t) => Routing::Tree(Box::new(t)),
            None => Routing::General,
        };
    }

    /// Counts, on `link`, the bytes of packets carrying all bits of `mask` (from now on),
    /// under `name`: the summary then reports `link.NAME.{name}_throughput_bps` and
    /// samplers may select them. Returns the counter slot (the same slot if the mask is
    /// counted already), or an error when the link's slots are all taken.
    pub fn count_marked(
        &mut self,
        link: LinkId,
        name: &'static str,
        mask: u16,
    ) -> Result<usize, String> {
        assert!(mask != 0, "count_marked needs a nonzero mask");
        let l = &mut self.links[link as usize];
        if let Some(i) = l.counted.iter().position(|&(_, m)| m == mask) {
            return Ok(i);
        }
        let Some(i) = l.counted.iter().position(|&(_, m)| m == 0) else {
            return Err(format!(
                "link {}: more than {MARK_COUNTERS} marks counted",
                l.name
            ));
        };
        l.counted[i] = (name, mask);
        Ok(i)
    }

    /// Attaches a hook to a link's output port (after those it has); returns its typed
    /// handle.
    pub fn add_hook<T: PortHook>(&mut self, link: LinkId, hook: Box<T>) -> HookHandle<T> {
        let hooks = &mut self.links[link as usize].hooks;
        hooks.push(hook);
        let index = hooks.len() - 1;
        self.refresh_fast_path(link);
        HookHandle {
            link,
            index,
            hook: std::marker::PhantomData,
        }
    }

    /// The hook `h` (panics if the link's hook chain was changed other than by
    /// [`Network::add_hook`]).
    pub fn hook_mut<T: PortHook>(&mut self, h: HookHandle<T>) -> &mut T {
        let hook: &mut dyn std::any::Any = self.links[h.link as usize].hooks[h.index].as_mut();
        hook.downcast_mut::<T>()
            .expect("the hook chain was changed")
    }

    /// Looks a link up by name.
    pub fn link_id(&self, name: &str) -> Option<LinkId> {
        self.links
            .iter()
            .position(|l| l.name == name)
            .map(|i| i as LinkId)
    }

    /// The link from `a` to `b`, if there is one.
    pub fn link_between(&self, a: NodeId, b: NodeId) -> Option<LinkId> {
        self.links
            .iter()
            .position(|l| l.from == a && l.to == b)
            .map(|i| i as LinkId)
    }

    /// Adds an explicit route (a connected sequence of links) and returns its id.
    pub fn add_route(&mut self, links: Vec<LinkId>) -> Result<u32, String> {
        for w in links.windows(2) {
            let (a, b) = (&self.links[w[0] as usize], &self.links[w[1] as usize]);
            if a.to != b.from {
                return Err(format!(
                    "route does not connect: link {} ends at {} but link {} starts at {}",
                    a.name,
                    self.nodes[a.to as usize].name,
                    b.name,
                    self.nodes[b.from as usize].name
                ));
            }
        }
        self.routes.push(links);
        Ok((self.routes.len() - 1) as u32)
    }

    /// Computes shortest-path next hops towards `dst` from every node, unless already
    /// known. Paths minimise total propagation delay, then hop count; remaining ties go to
    /// the lower link id, so forwarding is deterministic.
    pub fn routes_to(&mut self, dst: NodeId) -> &[LinkId] {
        let n = self.nodes.len();
        if self.fib.len() < n {
            self.fib.resize_with(n, Vec::new);
        }
        if self.fib[dst as usize].len() != n {
            if let Routing::Unknown = self.routing {
                self.decide_routing();
            }
            let col = match &self.routing {
                Routing::Tree(t) => (0..n as NodeId).map(|u| t.next(u, dst)).collect(),
                _ => self.shortest_paths_to(dst),
            };
            self.fib[dst as usize] = col;
        }
        &self.fib[dst as usize]
    }

    fn shortest_paths_to(&self, dst: NodeId) -> Vec<LinkId> {
        use std::cmp::Reverse;
        let n = self.nodes.len();
        let no_links: Vec<LinkId> = Vec::new();
        let incoming = |v: usize| self.in_links.get(v).unwrap_or(&no_links);
        let inf = (u128::MAX, u32::MAX);
        let mut dist = vec![inf; n];
        dist[dst as usize] = (0u128, 0u32);
        let mut heap = std::collections::BinaryHeap::new();
        heap.push(Reverse(((0u128, 0u32), dst)));
        while let Some(Reverse((d, v))) = heap.pop() {
            if d > dist[v as usize] {
                continue;
            }
            for &li in incoming(v as usize) {
                let l = &self.links[li as usize];
                let nd = (d.0 + l.delay as u128, d.1 + 1);
                if nd < dist[l.from as usize] {
                    dist[l.from as usize] = nd;
                    heap.push(Reverse((nd, l.from)));
                }
            }
        }
        let mut col = vec![NONE; n];
        let mut best = vec![inf; n];
        for (i, l) in self.links.iter().enumerate() {
            let (u, v) = (l.from as usize, l.to as usize);
            if u == dst as usize || dist[v] == inf {
                continue;
            }
            let cand = (dist[v].0 + l.delay as u128, dist[v].1 + 1);
            if cand < best[u] {
                best[u] = cand;
                col[u] = i as LinkId;
            }
        }
        col
    }

    /// The outgoing link from `node` towards `dst` under shortest-path forwarding.
    pub fn next_hop(&mut self, node: NodeId, dst: NodeId) -> Option<LinkId> {
        let l = match &self.routing {
            Routing::Tree(t) => t.next(node, dst),
            _ => self.next_hop_general(node, dst),
        };
        (l != NONE).then_some(l)
    }

    /// The links a packet from `src` to `dst` crosses under shortest-path forwarding,
    /// or an error naming where the path breaks.
    pub fn path(&mut self, src: NodeId, dst: NodeId) -> Result<Vec<LinkId>, String> {
        let mut path = Vec::new();
        let mut at = src;
        while at != dst {
            match self.next_hop(at, dst) {
                Some(l) => {
                    path.push(l);
                    at = self.links[l as usize].to;
                    if path.len() > self.nodes.len() {
                        return Err("routing loop".into());
                    }
                }
                None => {
                    return Err(format!(
                        "no route from {} to {}",
                        self.nodes[src as usize].name, self.nodes[dst as usize].name
                    ))
                }
            }
        }
        Ok(path)
    }

    /// One-way propagation delay plus the transmission time of `bytes` on every link of
    /// `path` (the signalling delay of a packet that meets no queue).
    pub fn path_delay(&self, path: &[LinkId], bytes: u32) -> Time {
        path.iter()
            .map(|&l| {
                let l = &self.links[l as usize];
                l.delay + tx_time(bytes, l.rate_bps)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{DropTail, Limit};

    fn fifo() -> Box<dyn QueueDisc> {
        Box::new(DropTail::new(Limit::Packets(10)))
    }

    #[test]
    fn duplex_links_and_shortest_paths() {
        let mut n = Network::new();
        let a = n.add_node("a");
        let b = n.add_node("b");
        let c = n.add_node("c");
        let (ab, ba) = n.add_duplex(a, b, 1_000_000, 5, fifo);
        let (bc, _) = n.add_duplex(b, c, 1_000_000, 5, fifo);
        // A direct a-c link with a longer delay loses to the two-hop path.
        let (ac, _) = n.add_duplex(a, c, 1_000_000, 20, fifo);
        assert_eq!(n.links[ab as usize].name, "a-b");
        assert_eq!(n.links[ba as usize].name, "b-a");
        assert_eq!(n.path(a, c).unwrap(), vec![ab, bc]);
        assert_eq!(n.path_delay(&[ac], 0), 20);
        let d = n.add_node("d");
        assert!(n.path(a, d).unwrap_err().contains("no route from a to d"));
    }
}
