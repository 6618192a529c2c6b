//! The port data path, general case: what every output port can do, and what it does
//! when the FIFO fast path (`fast_path`) does not apply or is turned off.
//!
//! A packet offered to a port ([`Network::offer`]) is shown to the port's hooks in
//! order (any may discard it), then given to the queue discipline. When the transmitter
//! is free it takes the discipline's next packet
//! ([`crate::queue::QueueDisc::dequeue_with_drops`]), tells the hooks that want
//! departures, and sends it for its transmission time; an event at the end of the
//! transmission frees the transmitter again ([`Network::port_event`]), as do the
//! discipline's wake-up and timer events. The sent packet goes on the wire:
//! into the link's in-flight list, whose head's arrival at the far end is an event
//! ([`Network::link_arrival`]), or into its landing list ([`Landing`]).
//!
//! A traced port runs its own copy of this code (the `TRACE` parameter), so untraced
//! runs pay one test per packet for tracing.

use super::{
    arrival_key, count_start, ledger_add, Landing, Link, LinkId, Network, NodeId, Packet, PortInfo,
    NONE,
};
use crate::engine::{Event, Scheduler, Target};
use crate::queue::{Dequeue, DropLog};
use crate::time::{tx_time, Time, PS_PER_S};
use crate::trace::{SharedTracer, TraceEvent};

impl Link {
    /// Bits put on the wire by `now`: the bytes of every packet whose transmission started
    /// (`tx_bytes`) less the part of the one under way that is not sent yet. Call after
    /// [`Link::settle`] at `now`. A rate measured over an interval from it never exceeds
    /// the link's rate, unlike one counted by transmission starts (a packet starting at
    /// the end of an interval would count whole in it).
    pub fn bits_sent_by(&self, now: Time) -> f64 {
        self.stats.tx_bytes as f64 * 8.0 - self.bits_left(now)
    }

    /// [`Link::bits_sent_by`] for the packets of one class slot (classes >= 7 share
    /// slot 7).
    pub fn bits_sent_by_class(&self, now: Time, class: u8) -> f64 {
        let c = (class as usize).min(7);
        let left = if self.stats.last_class as usize == c {
            self.bits_left(now)
        } else {
            0.0
        };
        self.stats.tx_bytes_by_class[c] as f64 * 8.0 - left
    }

    /// [`Link::bits_sent_by`] for the packets carrying every bit of mark counter
    /// `slot`'s mask (see [`Network::count_marked`]).
    pub fn bits_sent_marked(&self, now: Time, slot: usize) -> f64 {
        let m = self.counted[slot].1;
        let left = if m != 0 && self.stats.last_marks & m == m {
            self.bits_left(now)
        } else {
            0.0
        };
        self.stats.tx_bytes_marked[slot] as f64 * 8.0 - left
    }

    /// Bits of the transmission under way still to go onto the wire at `now` (0 when the
    /// port is idle); they belong to the packet whose transmission started last.
    fn bits_left(&self, now: Time) -> f64 {
        // The end of the transmission under way: packets still in the ledger have not
        // started. A waiting packet starts when the one before it ends; a handed-off one
        // records when the port was free before it was entered.
        let arrived = self.ledger.len() - self.unarrived;
        let end = match self.ledger.front() {
            Some(d) if arrived > 0 => d.start.min(self.busy_until),
            Some(d) => d.before,
            None => self.busy_until,
        };
        end.saturating_sub(now) as f64 * self.rate_bps as f64 / PS_PER_S as f64
    }

    /// True while a packet is being transmitted (as of the last event at this port).
    pub fn busy(&self) -> bool {
        self.busy
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
pub(super) fn transmitted(
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

impl Network {
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

    #[inline]
    pub(super) fn offer_port<Q: crate::engine::EventQueue>(
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
        if let Some((t, s)) = l.lazy_end {
            if arrival_key(t, s) < key {
                // It ended before this packet came.
                l.end_idle(t);
            } else {
                // It ends after: this packet waits for it.
                l.lazy_end = None;
                sched.at_with_seq(t, s, Event::new(Target::Port(link), 0));
            }
        }
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
        count_start(&l.counted, &mut l.stats, pkt.size, pkt.class, pkt.marks);
        let tx = tx_time(pkt.size, l.rate_bps);
        let done = now + tx;
        if TRACE {
            transmitted(tr, now, done + l.delay, &pkt, id, (l.from, l.to));
        }
        l.busy = true;
        l.busy_until = done;
        if l.lazy_ok && l.qdisc.is_empty() {
            // Nothing waits: the end needs an event only if a packet comes before it.
            l.lazy_end = Some((done, sched.draw()));
        } else {
            sched.at(done, Event::new(Target::Port(id), 0));
        }
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
    /// wake-up (`kind` 1) or its timer (`kind` 2, see [`crate::queue::QueueDisc::timer`]).
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
