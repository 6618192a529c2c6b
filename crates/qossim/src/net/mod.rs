//! The network: nodes, unidirectional links with an output port each, and forwarding.
//!
//! A link's output port holds a [`QueueDisc`] and a chain of
//! [`PortHook`]s (markers, meters, policers) applied to every packet arriving at the port.
//! A link transmits one packet at a time (store and forward); a transmitted packet joins
//! the link's in-flight list, which is FIFO because the propagation delay is constant, so
//! only the head needs an event.

pub use crate::packet::{
    marks, AgentId, FlowId, HeaderFields, LinkId, NodeId, Packet, PacketKind, NONE,
};

use crate::engine::{Event, Scheduler, Target};
use crate::metrics::TimeAverage;
use crate::queue::{Dequeue, DropCause, DropLog, Limit, QueueDisc};
use crate::time::{tx_time, Time, PS_PER_S};
use crate::trace::{SharedTracer, TraceDrops, TraceEvent};
use std::collections::VecDeque;

mod tree;
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
pub trait PortHook {
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
    /// Gives access to the concrete type (to reconfigure a hook during a run).
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
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
}

/// How many marks a link can count bytes of.
pub const MARK_COUNTERS: usize = 2;

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

/// A packet accepted by a fast-path FIFO port: when its transmission starts.
#[derive(Clone, Copy, Debug)]
struct Departure {
    start: Time,
    size: u32,
    class: u8,
    marks: u16,
    /// When it reaches the port (handed-off packets are entered before they arrive).
    arrive: Time,
    /// Its packet's tie.
    tie: u64,
    /// For a handed-off packet: when the port was free before it was entered.
    before: Time,
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

    /// True when this port takes the FIFO fast path (see [`Network::disable_fast_paths`]).
    pub fn uses_fast_path(&self) -> bool {
        self.fast.is_some()
    }

    /// Bits put on the wire by `now`: the bytes of every packet whose transmission started
    /// (`tx_bytes`) less the part of the one under way that is not sent yet. Call after
    /// [`Link::settle`] at `now`. A rate measured over an interval from it never exceeds
    /// the link's rate, unlike one counted by transmission starts (a packet starting at
    /// the end of an interval would count whole in it).
    pub fn bits_sent_by(&self, now: Time) -> f64 {
        // The end of the transmission under way: packets still in the ledger have not
        // started. A waiting packet starts when the one before it ends; a handed-off one
        // records when the port was free before it was entered.
        let arrived = self.ledger.len() - self.unarrived;
        let end = match self.ledger.front() {
            Some(d) if arrived > 0 => d.start.min(self.busy_until),
            Some(d) => d.before,
            None => self.busy_until,
        };
        let left = end.saturating_sub(now) as f64 * self.rate_bps as f64 / PS_PER_S as f64;
        self.stats.tx_bytes as f64 * 8.0 - left
    }

    /// True while a packet is being transmitted (as of the last event at this port).
    pub fn busy(&self) -> bool {
        self.busy
    }

    /// Accounts, in time order, every fast-path packet whose transmission started by
    /// `now`, and every handed-off packet whose arrival key is below `key`: counters,
    /// queue average. Cheap when there is nothing to do.
    #[inline(always)]
    pub fn settle(&mut self, now: Time, key: u128) {
        let Some(d) = self.ledger.front() else {
            return;
        };
        let due = if self.unarrived == 0 {
            d.start <= now
        } else {
            (self.unarrived < self.ledger.len() && d.start <= now)
                || self.first_unarrived_key() < key
        };
        if due {
            self.settle_started(now, key);
        }
    }

    fn first_unarrived_key(&self) -> u128 {
        let d = &self.ledger[self.ledger.len() - self.unarrived];
        arrival_key(d.arrive, d.tie)
    }

    /// [`Link::settle`] when something is due (out of line: a port without a queue has
    /// nothing to settle).
    #[inline(never)]
    fn settle_started(&mut self, now: Time, key: u128) {
        loop {
            let arrived = self.ledger.len() - self.unarrived;
            // The next start (of an arrived packet) and the next arrival, if due.
            let start = match self.ledger.front() {
                Some(d) if arrived > 0 && d.start <= now => d.start,
                _ => Time::MAX,
            };
            let arrive = match self.ledger.get(arrived) {
                Some(d) if arrival_key(d.arrive, d.tie) < key => d.arrive,
                _ => Time::MAX,
            };
            if start == Time::MAX && arrive == Time::MAX {
                break;
            }
            // At one instant the departure goes first.
            if start <= arrive {
                let Some(d) = self.ledger.pop_front() else {
                    break;
                };
                self.waiting_bytes -= d.size as u64;
                let st = &mut self.stats;
                st.queue_avg.set(d.start, (arrived - 1) as f64);
                st.tx_pkts += 1;
                st.tx_bytes += d.size as u64;
                st.tx_bytes_by_class[(d.class as usize).min(7)] += d.size as u64;
                count_marked(&self.counted, st, d.marks, d.size);
            } else {
                // What the port did when a handed-off packet arrived.
                self.unarrived -= 1;
                let a = &self.ledger[arrived];
                let (size, class, marks, waits) = (a.size, a.class, a.marks, a.start > a.arrive);
                let st = &mut self.stats;
                st.arrivals += 1;
                st.arrival_bytes += size as u64;
                if waits {
                    self.waiting_bytes += size as u64;
                    let q = arrived + 1;
                    st.queue_avg.set(arrive, q as f64);
                    if q > st.queue_max {
                        st.queue_max = q;
                    }
                } else {
                    // Sent at once: nothing is before it in the ledger.
                    self.ledger.pop_front();
                    st.tx_pkts += 1;
                    st.tx_bytes += size as u64;
                    st.tx_bytes_by_class[(class as usize).min(7)] += size as u64;
                    count_marked(&self.counted, st, marks, size);
                }
            }
        }
    }

    /// Packets waiting in the queue (not counting the one in transmission) at `now`;
    /// call [`Link::settle`] first on the fast path.
    #[inline]
    pub fn queue_len(&self) -> usize {
        if self.fast.is_some() {
            self.ledger.len() - self.unarrived
        } else {
            self.qdisc.len()
        }
    }

    /// Bytes waiting in the queue.
    #[inline]
    pub fn queue_bytes(&self) -> u64 {
        if self.fast.is_some() {
            self.waiting_bytes
        } else {
            self.qdisc.bytes()
        }
    }
    /// Packets currently propagating on the wire.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len() + self.landing.len()
    }

    /// Shows `f` every packet this link holds: waiting in its queue, being sent or
    /// propagating (a fast-path FIFO port keeps its waiting packets with the propagating
    /// ones, each stamped with its arrival time).
    pub fn for_each_held(&self, f: &mut dyn FnMut(&Packet)) {
        if self.fast.is_none() {
            self.qdisc.for_each_queued(f);
        }
        for (_, p) in self.in_flight.iter().chain(&self.landing) {
            f(p);
        }
    }
}

/// Records a packet offered to a traced port, and sets the time drop records will carry.
#[cold]
#[inline(never)]
fn offered(tr: Option<&SharedTracer>, now: Time, pkt: &Packet, link: LinkId, node: NodeId) {
    if let Some(tr) = tr {
        let mut t = tr.borrow_mut();
        t.set_now(now);
        t.record(now, TraceEvent::Enqueue, pkt, link, node, 0);
    }
}

/// Records a change of a packet's marks by a traced port's hooks.
#[cold]
#[inline(never)]
fn marked(tr: Option<&SharedTracer>, now: Time, pkt: &Packet, link: LinkId, node: NodeId) {
    if let Some(tr) = tr {
        tr.borrow_mut()
            .record(now, TraceEvent::Mark, pkt, link, node, 0);
    }
}

/// Records a transmission starting at `start` on a traced link, the packet's arrival at
/// the far end at `arrive` (known now: the delay is constant and the link FIFO) and,
/// when that node is its destination, its delivery there.
#[cold]
#[inline(never)]
fn transmitted(
    tr: Option<&SharedTracer>,
    start: Time,
    arrive: Time,
    pkt: &Packet,
    link: LinkId,
    (from, to): (NodeId, NodeId),
) {
    if let Some(tr) = tr {
        let mut t = tr.borrow_mut();
        t.record(start, TraceEvent::Transmit, pkt, link, from, 0);
        t.record(arrive, TraceEvent::Arrival, pkt, link, to, 0);
        if pkt.dst == to && pkt.dst_agent != NONE {
            t.record(arrive, TraceEvent::Deliver, pkt, NONE, to, 0);
        }
    }
}

/// Tells a tracer the time of the port operation in progress (for drop records).
#[cold]
#[inline(never)]
fn set_now(tr: Option<&SharedTracer>, now: Time) {
    if let Some(tr) = tr {
        tr.borrow_mut().set_now(now);
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

/// Deliveries to plain sinks without an event. A packet that goes on the wire of a link
/// whose far end is its destination, with no taps there, for an agent that only counts
/// what it receives ([`crate::world::Agent::only_counts_deliveries`]), is kept in that
/// link's landing list instead of its in-flight list: no arrival event is scheduled. The
/// world counts it (`Flows::delivered`) before running the first event whose key
/// (time, sequence number) comes after the packet's arrival key (arrival time,
/// [`Packet::tie`]) — where its arrival event would have run — and at the end of a run.
/// Counting a delivery touches only counters that add up in any order, and every
/// reader of them is an event, so the results are exactly those of the arrival events.
pub struct Landing {
    /// Bit `i` set while agent `i` exists and only counts what it receives.
    counting: Vec<u64>,
    /// Links whose landing list is not empty, in no particular order.
    pub(crate) links: Vec<LinkId>,
    /// The smallest arrival key among the landing lists (`u128::MAX` when all are empty).
    pub(crate) next: u128,
}

/// How many packets a hand-off enters in a port's ledger between two settlings of it
/// (see [`Network::hand_off`]).
const SETTLE_EVERY: u32 = 16;

/// The key that orders an arrival at `time` with tie `tie` among events.
#[inline(always)]
pub(crate) fn arrival_key(time: Time, tie: u64) -> u128 {
    (u128::from(time) << 64) | u128::from(tie)
}

impl Default for Landing {
    fn default() -> Self {
        Landing {
            counting: Vec::new(),
            links: Vec::new(),
            next: u128::MAX,
        }
    }
}

impl Landing {
    /// True if `id` is a live agent that only counts the packets it receives.
    #[inline]
    pub fn counts(&self, id: AgentId) -> bool {
        let i = id as usize;
        self.counting
            .get(i >> 6)
            .is_some_and(|w| w >> (i & 63) & 1 == 1)
    }

    /// Records whether agent `id` only counts what it receives (false once stopped).
    pub(crate) fn set_counts(&mut self, id: AgentId, counts: bool) {
        let i = id as usize;
        if counts {
            if self.counting.len() <= i >> 6 {
                self.counting.resize((i >> 6) + 1, 0);
            }
            self.counting[i >> 6] |= 1 << (i & 63);
        } else if let Some(w) = self.counting.get_mut(i >> 6) {
            *w &= !(1 << (i & 63));
        }
    }

    /// True if `pkt`, about to go on `l`'s wire for `tx` of transmission, lands there.
    #[inline(always)]
    fn takes(&self, l: &Link, pkt: &Packet, tx: Time) -> bool {
        // A transmission of zero length could give two packets of the list one arrival
        // time, out of key order.
        l.lands && pkt.dst == l.to && tx > 0 && self.counts(pkt.dst_agent)
    }

    /// Puts `pkt`, arriving at `arrive`, on `l`'s wire: on its landing list if it lands
    /// there (see [`Landing`]), else on its in-flight list, its arrival event scheduled
    /// if it is the head. (One push for both lists, so that it is inlined.)
    #[inline(always)]
    fn put_on_wire<Q: crate::engine::EventQueue>(
        &mut self,
        l: &mut Link,
        id: LinkId,
        arrive: Time,
        tx: Time,
        pkt: &Packet,
        sched: &mut Scheduler<Q>,
    ) {
        let list = if self.takes(l, pkt, tx) {
            if l.landing.is_empty() {
                self.links.push(id);
            }
            let k = arrival_key(arrive, pkt.tie);
            if k < self.next {
                self.next = k;
            }
            &mut l.landing
        } else {
            if l.in_flight.is_empty() {
                sched.arrival_at(arrive, pkt.tie, id, l.gen);
            }
            &mut l.in_flight
        };
        list.push_back((arrive, *pkt));
    }
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
    /// transmission-end event per packet) instead of the FIFO fast path. Results are the
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

    /// Hands a packet sent on `l1`, arriving at its far end at `a1`, to its next port
    /// (when that port is a plain FIFO it alone feeds and the packet would not be
    /// dropped there); else puts it on `l1`'s in-flight list as usual.
    fn hand_off<Q: crate::engine::EventQueue>(
        &mut self,
        l1: LinkId,
        a1: Time,
        pkt: &Packet,
        sched: &mut Scheduler<Q>,
    ) {
        let r = self.links[l1 as usize].to;
        // The next hop, as `forward` finds it at `r`.
        let l2 = self.link_out(r, pkt);
        if l2 != NONE && !(self.traced && self.port_tracers[l2 as usize].is_some()) {
            let l = &mut self.links[l2 as usize];
            // What is due there by now, every so many hand-offs, so that the ledger stays
            // short (readers settle it before they read).
            l.handed += 1;
            if l.handed >= SETTLE_EVERY {
                l.handed = 0;
                l.settle(sched.now(), sched.key());
            }
            if l.hooks.is_empty() && l.hooks_seen == 0 && l.elements.is_empty() {
                l.via = l1;
                let placed = if pkt.route == NONE {
                    self.place(l2, a1, pkt, sched)
                } else {
                    // On an explicit route it leaves `r` one hop further on.
                    let mut p = *pkt;
                    p.hop += 1;
                    self.place(l2, a1, &p, sched)
                };
                if placed {
                    return;
                }
            }
        }
        let l = &mut self.links[l1 as usize];
        if l.in_flight.is_empty() {
            sched.arrival_at(a1, pkt.tie, l1, l.gen);
        }
        l.in_flight.push_back((a1, *pkt));
    }

    /// Enters a packet arriving at `l2`'s port at `a1` in its ledger and on its wire, as
    /// the port will take it then; false (and nothing done) if it would be dropped there.
    /// (Out of line: measured, inlined into [`Network::hand_off`] it costs 16
    /// instructions more per packet.)
    #[inline(never)]
    fn place<Q: crate::engine::EventQueue>(
        &mut self,
        l2: LinkId,
        a1: Time,
        p: &Packet,
        sched: &mut Scheduler<Q>,
    ) -> bool {
        let l = &mut self.links[l2 as usize];
        let Some(Limit::Packets(n)) = l.fast else {
            return false;
        };
        let start = l.busy_until.max(a1);
        // Packets waiting when it arrives: those starting later, at the end (the ledger
        // is in start order; searched only when it could hold n of them, since under
        // overload it is long).
        let fits = start == a1
            || l.ledger.len() < n
            || l.ledger.len() - l.ledger.partition_point(|d| d.start <= a1) < n;
        if !fits {
            return false;
        }
        let before = l.busy_until;
        let tx = tx_time(p.size, l.rate_bps);
        let done = start + tx;
        l.busy_until = done;
        l.ledger.push_back(Departure {
            start,
            size: p.size,
            class: p.class,
            marks: p.marks,
            arrive: a1,
            tie: p.tie,
            before,
        });
        l.unarrived += 1;
        let arrive = done + l.delay;
        self.landing.put_on_wire(l, l2, arrive, tx, p, sched);
        true
    }

    /// A packet from elsewhere reaches `l2` while packets handed off to it have not
    /// arrived yet (an agent at its node sent it): it is first in line, so those packets
    /// are taken back to be handed on again after it ([`Network::hand_back`]).
    #[cold]
    #[inline(never)]
    fn take_back(&mut self, l2: LinkId) -> Vec<(Time, Packet)> {
        let l = &mut self.links[l2 as usize];
        let mut back = Vec::with_capacity(l.unarrived);
        while l.unarrived > 0 {
            l.unarrived -= 1;
            let d = l.ledger.pop_back().expect("handed-off entry");
            // Its packet is the last one put on either wire list.
            let p = if l.in_flight.back().is_some_and(|(_, p)| p.tie == d.tie) {
                let p = l.in_flight.pop_back().expect("in flight").1;
                if l.in_flight.is_empty() {
                    // The head's pending arrival event goes stale.
                    l.gen = l.gen.wrapping_add(1);
                }
                p
            } else {
                l.landing.pop_back().expect("landing").1
            };
            back.push((d.arrive, p));
            l.busy_until = d.before;
        }
        back.reverse();
        back
    }

    /// Hands the packets [`Network::take_back`] took from `l2` on again, in order; from
    /// the first that would be dropped there on, they go back on `l1`'s wire, to arrive
    /// the usual way.
    #[cold]
    #[inline(never)]
    fn hand_back<Q: crate::engine::EventQueue>(
        &mut self,
        l1: LinkId,
        l2: LinkId,
        back: Vec<(Time, Packet)>,
        sched: &mut Scheduler<Q>,
    ) {
        let mut it = back.into_iter();
        for (a1, p) in it.by_ref() {
            if !self.place(l2, a1, &p, sched) {
                let mut rest = vec![(a1, p)];
                rest.extend(it);
                let l = &mut self.links[l1 as usize];
                for (a, mut p) in rest.into_iter().rev() {
                    if p.route != NONE {
                        p.hop -= 1;
                    }
                    l.in_flight.push_front((a, p));
                }
                l.gen = l.gen.wrapping_add(1);
                let (t, p) = l.in_flight.front().expect("just put back");
                sched.arrival_at(*t, p.tie, l1, l.gen);
                return;
            }
        }
    }

    /// Re-decides whether a link may use the FIFO fast path (call after changing its
    /// discipline or hooks before the run starts; [`Network::add_hook`] does it).
    pub fn refresh_fast_path(&mut self, link: LinkId) {
        let l = &mut self.links[link as usize];
        l.hooks_seen = l.hooks.len();
        l.timed = l.qdisc.timer().is_some();
        l.fast = if self.no_fast_path || l.hooks.iter().any(|h| h.wants_departures()) {
            None
        } else {
            l.qdisc.fifo_limit()
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

    /// Attaches a hook to a link's output port.
    pub fn add_hook(&mut self, link: LinkId, hook: Box<dyn PortHook>) {
        self.links[link as usize].hooks.push(hook);
        self.refresh_fast_path(link);
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

    /// Forwards a packet that is at `node` (entering or transiting) to its next link.
    /// Delivery to a local agent is the world's business; this is only called when
    /// `pkt.dst != node`.
    #[inline]
    pub fn forward<Q: crate::engine::EventQueue>(
        &mut self,
        node: NodeId,
        mut pkt: Packet,
        sched: &mut Scheduler<Q>,
    ) {
        let link = self.link_out(node, &pkt);
        if pkt.route != NONE && link != NONE {
            pkt.hop += 1;
        }
        if link == NONE {
            self.unroutable += 1;
            if let Some(l) = &self.ledger {
                ledger_add(l, &pkt);
            }
            return;
        }
        if !self.links[link as usize].elements.is_empty() {
            self.deferred.push_back((link, pkt));
            return;
        }
        self.offer(link, pkt, sched);
    }

    /// Offers a packet entering the network here to a link's output port: it draws the
    /// packet's [`Packet::tie`], then [`Network::offer`]. For agents that put packets
    /// on a link themselves (a ring station's transit and control frames).
    #[inline]
    pub fn enqueue<Q: crate::engine::EventQueue>(
        &mut self,
        link: LinkId,
        mut pkt: Packet,
        sched: &mut Scheduler<Q>,
    ) {
        pkt.tie = sched.draw();
        self.offer(link, pkt, sched);
    }

    /// Offers a packet already in the network (its [`Packet::tie`] drawn) to a link's
    /// output port: hooks, then the queue discipline, then transmission if the link is
    /// idle.
    #[inline]
    pub fn offer<Q: crate::engine::EventQueue>(
        &mut self,
        link: LinkId,
        pkt: Packet,
        sched: &mut Scheduler<Q>,
    ) {
        if self.links[link as usize].unarrived > 0 {
            self.offer_before_handed(link, pkt, sched);
        } else {
            self.offer_port(link, pkt, sched);
        }
    }

    /// [`Network::offer`] at a port with handed-off packets on their way: those that have
    /// not arrived by now come after this packet.
    #[cold]
    #[inline(never)]
    fn offer_before_handed<Q: crate::engine::EventQueue>(
        &mut self,
        link: LinkId,
        pkt: Packet,
        sched: &mut Scheduler<Q>,
    ) {
        let key = sched.key();
        self.links[link as usize].settle(sched.now(), key);
        if self.links[link as usize].unarrived == 0 {
            return self.offer_port(link, pkt, sched);
        }
        let back = self.take_back(link);
        self.offer_port(link, pkt, sched);
        let via = self.links[link as usize].via;
        self.hand_back(via, link, back, sched);
    }

    #[inline]
    fn offer_port<Q: crate::engine::EventQueue>(
        &mut self,
        link: LinkId,
        pkt: Packet,
        sched: &mut Scheduler<Q>,
    ) {
        if self.links[link as usize].hooks.len() != self.links[link as usize].hooks_seen {
            self.refresh_fast_path(link);
        }
        // One test per packet and port; a traced port runs its own copy of the port code.
        if self.traced && self.port_tracers[link as usize].is_some() {
            self.enqueue_traced(link, pkt, sched)
        } else {
            self.enqueue_port::<Q, false>(link, pkt, sched)
        }
    }

    /// [`Network::enqueue`] at a traced port (out of line, so untraced runs keep the
    /// code they had).
    #[cold]
    #[inline(never)]
    fn enqueue_traced<Q: crate::engine::EventQueue>(
        &mut self,
        link: LinkId,
        pkt: Packet,
        sched: &mut Scheduler<Q>,
    ) {
        self.enqueue_port::<Q, true>(link, pkt, sched)
    }

    #[inline]
    fn enqueue_port<Q: crate::engine::EventQueue, const TRACE: bool>(
        &mut self,
        link: LinkId,
        mut pkt: Packet,
        sched: &mut Scheduler<Q>,
    ) {
        let now = sched.now();
        let key = sched.key();
        let l = &mut self.links[link as usize];
        let land = &mut self.landing;
        let tr = if TRACE {
            self.port_tracers[link as usize].as_ref()
        } else {
            None
        };
        if TRACE {
            offered(tr, now, &pkt, link, l.from);
        }
        l.stats.arrivals += 1;
        l.stats.arrival_bytes += pkt.size as u64;
        if l.fast.is_some() {
            l.settle(now, key);
        }
        if !l.hooks.is_empty() {
            let info = PortInfo {
                rate_bps: l.rate_bps,
                queue_pkts: l.queue_len(),
                queue_bytes: l.queue_bytes(),
            };
            let marks_before = pkt.marks;
            for h in l.hooks.iter_mut() {
                if !h.on_arrival(&mut pkt, now, &info) {
                    l.stats.drops.record_policed(&pkt);
                    return;
                }
            }
            if TRACE && pkt.marks != marks_before {
                marked(tr, now, &pkt, link, l.from);
            }
        }
        if let Some(limit) = l.fast {
            if let Some(a1) = Self::fast_enqueue::<Q, TRACE>(l, link, limit, &pkt, sched, tr, land)
            {
                self.hand_off(link, a1, &pkt, sched);
            }
            return;
        }
        if !l.busy && !l.wake_pending && l.qdisc.is_empty() && l.qdisc.fifo_limit().is_some() {
            // A FIFO's limit counts waiting packets: an idle port always takes the packet
            // (the same rule as the fast path, so a zero buffer is a loss system).
            l.qdisc.enqueue(pkt, now, &mut DropLog::default());
            if l.qdisc.is_empty() {
                // The limit is zero: hand the packet over directly.
                Self::transmit::<Q, TRACE>(l, link, pkt, sched, tr, land);
                return;
            }
            Self::start_tx::<Q, TRACE>(l, link, sched, tr, land);
            return;
        }
        l.qdisc.enqueue(pkt, now, &mut l.stats.drops);
        if l.timed {
            Self::arm_timer(l, link, sched);
        }
        let q = l.qdisc.len();
        l.stats.queue_avg.set(now, q as f64);
        // A transmission ending at this very instant starts the next packet now: one of
        // the q will not wait. The fast path serves departures before arrivals at one
        // instant, and the maximum is the same either way.
        let waiting = q - usize::from(q > 0 && l.busy && l.busy_until == now);
        if waiting > l.stats.queue_max {
            l.stats.queue_max = waiting;
        }
        if !l.busy {
            Self::start_tx::<Q, TRACE>(l, link, sched, tr, land);
        }
    }

    /// FIFO fast path: the packet's transmission starts when everything before it has
    /// been sent, so its start, end and arrival times are known now.
    #[inline]
    fn fast_enqueue<Q: crate::engine::EventQueue, const TRACE: bool>(
        l: &mut Link,
        id: LinkId,
        limit: Limit,
        pkt: &Packet,
        sched: &mut Scheduler<Q>,
        tr: Option<&SharedTracer>,
        land: &mut Landing,
    ) -> Option<Time> {
        let now = sched.now();
        let start = l.busy_until.max(now);
        if start > now {
            // It would wait: apply the tail-drop limit to the waiting packets.
            let fits = match limit {
                Limit::Packets(n) => l.ledger.len() < n,
                Limit::Bytes(b) => l.waiting_bytes + pkt.size as u64 <= b,
            };
            if !fits {
                l.stats.drops.record(pkt, DropCause::Overflow);
                return None;
            }
        }
        let tx = tx_time(pkt.size, l.rate_bps);
        let done = start + tx;
        if TRACE {
            transmitted(tr, start, done + l.delay, pkt, id, (l.from, l.to));
        }
        l.busy_until = done;
        let d = Departure {
            start,
            size: pkt.size,
            class: pkt.class,
            marks: pkt.marks,
            arrive: now,
            tie: pkt.tie,
            before: 0,
        };
        if start > now {
            l.waiting_bytes += pkt.size as u64;
            l.ledger.push_back(d);
            let q = l.ledger.len();
            l.stats.queue_avg.set(now, q as f64);
            if q > l.stats.queue_max {
                l.stats.queue_max = q;
            }
        } else {
            let st = &mut l.stats;
            st.tx_pkts += 1;
            st.tx_bytes += d.size as u64;
            st.tx_bytes_by_class[(d.class as usize).min(7)] += d.size as u64;
            count_marked(&l.counted, st, d.marks, d.size);
        }
        let arrive = done + l.delay;
        if l.hands_off && arrive > now && pkt.dst != l.to && l.in_flight.is_empty() {
            // No packet of this link is on its way the usual way: hand this one on.
            return Some(arrive);
        }
        land.put_on_wire(l, id, arrive, tx, pkt, sched);
        None
    }

    #[inline]
    fn start_tx<Q: crate::engine::EventQueue, const TRACE: bool>(
        l: &mut Link,
        id: LinkId,
        sched: &mut Scheduler<Q>,
        tr: Option<&SharedTracer>,
        land: &mut Landing,
    ) {
        let now = sched.now();
        match l.qdisc.dequeue_with_drops(now, &mut l.stats.drops) {
            Dequeue::Packet(pkt) => Self::transmit::<Q, TRACE>(l, id, pkt, sched, tr, land),
            // Head drops may have emptied the queue.
            Dequeue::Empty => l.stats.queue_avg.set(now, l.qdisc.len() as f64),
            Dequeue::Until(t) => {
                if !l.wake_pending {
                    l.wake_pending = true;
                    sched.at(t, Event::new(Target::Port(id), 1));
                }
            }
        }
        if l.timed {
            Self::arm_timer(l, id, sched);
        }
    }

    /// Schedules the discipline's timer event (`kind` 2) if it asks for one earlier than
    /// the one scheduled. An event superseded this way finds, when it runs, a later
    /// `timer_at` and is ignored.
    fn arm_timer<Q: crate::engine::EventQueue>(l: &mut Link, id: LinkId, sched: &mut Scheduler<Q>) {
        if let Some(t) = l.qdisc.timer() {
            if t < l.timer_at {
                l.timer_at = t;
                sched.at(t.max(sched.now()), Event::new(Target::Port(id), 2));
            }
        }
    }

    /// Starts transmitting `pkt` now (general path).
    #[inline]
    fn transmit<Q: crate::engine::EventQueue, const TRACE: bool>(
        l: &mut Link,
        id: LinkId,
        mut pkt: Packet,
        sched: &mut Scheduler<Q>,
        tr: Option<&SharedTracer>,
        land: &mut Landing,
    ) {
        let now = sched.now();
        l.stats.queue_avg.set(now, l.qdisc.len() as f64);
        for h in l.hooks.iter_mut() {
            if h.wants_departures() {
                h.on_departure(&mut pkt, now);
            }
        }
        l.stats.tx_pkts += 1;
        l.stats.tx_bytes += pkt.size as u64;
        l.stats.tx_bytes_by_class[(pkt.class as usize).min(7)] += pkt.size as u64;
        count_marked(&l.counted, &mut l.stats, pkt.marks, pkt.size);
        let tx = tx_time(pkt.size, l.rate_bps);
        let done = now + tx;
        if TRACE {
            transmitted(tr, now, done + l.delay, &pkt, id, (l.from, l.to));
        }
        l.busy = true;
        l.busy_until = done;
        sched.at(done, Event::new(Target::Port(id), 0));
        let arrive = done + l.delay;
        land.put_on_wire(l, id, arrive, tx, &pkt, sched);
    }

    /// [`Network::start_tx`] at a traced port (out of line).
    #[cold]
    #[inline(never)]
    fn start_tx_traced<Q: crate::engine::EventQueue>(
        l: &mut Link,
        id: LinkId,
        sched: &mut Scheduler<Q>,
        tr: Option<&SharedTracer>,
        land: &mut Landing,
    ) {
        set_now(tr, sched.now());
        Self::start_tx::<Q, true>(l, id, sched, tr, land);
    }

    /// Handles a port event: end of a transmission (`kind` 0), a queue discipline's
    /// wake-up (`kind` 1) or its timer (`kind` 2, see [`QueueDisc::timer`]).
    #[inline]
    pub fn port_event<Q: crate::engine::EventQueue>(
        &mut self,
        link: LinkId,
        kind: u32,
        sched: &mut Scheduler<Q>,
    ) {
        let l = &mut self.links[link as usize];
        if kind == 2 {
            // The discipline's timer.
            let now = sched.now();
            if now < l.timer_at {
                return;
            }
            l.timer_at = Time::MAX;
            let before = l.qdisc.len();
            l.qdisc.on_timer(now, &mut l.stats.drops);
            if l.qdisc.len() != before {
                l.stats.queue_avg.set(now, l.qdisc.len() as f64);
            }
            Self::arm_timer(l, link, sched);
            if l.busy || l.wake_pending || l.qdisc.is_empty() {
                return;
            }
        } else if kind == 0 {
            l.busy = false;
        } else {
            l.wake_pending = false;
        }
        if !l.busy {
            if self.traced && self.port_tracers[link as usize].is_some() {
                let tr = self.port_tracers[link as usize].as_ref();
                Self::start_tx_traced(l, link, sched, tr, &mut self.landing);
            } else {
                Self::start_tx::<Q, false>(l, link, sched, None, &mut self.landing);
            }
        }
    }

    /// Handles the arrival of the head in-flight packet at the far end of `link` (the
    /// node [`Network::arriving`] names); returns the packet. (Not as a pair with the
    /// node: measured, the pair's layout made every arrival copy the packet in pieces
    /// that stall when read back.)
    #[inline]
    pub fn link_arrival<Q: crate::engine::EventQueue>(
        &mut self,
        link: LinkId,
        sched: &mut Scheduler<Q>,
    ) -> Packet {
        let l = &mut self.links[link as usize];
        let (_, pkt) = l
            .in_flight
            .pop_front()
            .expect("arrival with nothing in flight");
        if let Some((t, p)) = l.in_flight.front() {
            sched.arrival_at(*t, p.tie, link, l.gen);
        }
        pkt
    }

    /// The packet at the head of `link`'s in-flight list (the next to arrive) and the
    /// node it arrives at, for a look before [`Network::link_arrival`] or
    /// [`Network::drop_arrival`].
    #[inline]
    pub fn arriving(&self, link: LinkId) -> (NodeId, &Packet) {
        let l = &self.links[link as usize];
        let (_, pkt) = l.in_flight.front().expect("arrival with nothing in flight");
        (l.to, pkt)
    }

    /// [`Network::link_arrival`] for a packet whose arrival was fully handled by looking
    /// at it ([`Network::arriving`]): it leaves the list without being moved.
    #[inline]
    pub fn drop_arrival<Q: crate::engine::EventQueue>(
        &mut self,
        link: LinkId,
        sched: &mut Scheduler<Q>,
    ) {
        let l = &mut self.links[link as usize];
        l.in_flight.pop_front();
        if let Some((t, p)) = l.in_flight.front() {
            sched.arrival_at(*t, p.tie, link, l.gen);
        }
    }

    /// Brings every link's counters up to `now` and the event key `key` (before reading
    /// statistics; see [`crate::engine::Scheduler::key`]).
    pub fn settle_all(&mut self, now: Time, key: u128) {
        for l in self.links.iter_mut() {
            l.settle(now, key);
        }
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
