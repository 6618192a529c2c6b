//! The FIFO fast path: a specialisation of the general port path (`port`) for a port
//! whose discipline is a plain tail-drop FIFO and whose hooks act on arrivals only.
//!
//! There a packet's transmission start is known when it arrives (when everything before
//! it has been sent), so the port needs no event per transmission: an accepted packet
//! goes on the wire at once, with its arrival time at the far end, and is entered in the
//! port's ledger ([`Departure`]: start, size, class, marks). Readers of the port's
//! counters first [`Link::settle`] it up to the current event, which accounts the
//! transmissions started by then, in order, as the general path's transmission-end
//! events would have: same counters, same queue average, same drops (the tail-drop limit
//! is applied to the packets waiting when the packet arrives, as the FIFO would).
//!
//! The transit hand-off goes one step further: a packet whose next port is fed by this
//! link alone, has no taps, hooks or elements and takes the fast path is entered in that
//! port's ledger at once, marked as not arrived yet, instead of arriving there by an
//! event. If a packet from elsewhere (an agent at that node) reaches the port before the
//! handed-off ones arrive, they are taken back and entered again after it, so the order
//! is the one the events would give.
//!
//! Both are shortcuts only: the results are those of the general path, which
//! [`Network::disable_fast_paths`] forces and the shortcut tests compare against on every
//! shipped scenario.

use super::port::transmitted;
use super::{arrival_key, count_start, Landing, Link, LinkId, Network, Packet, NONE};
use crate::engine::Scheduler;
use crate::queue::{DropCause, Limit};
use crate::time::{tx_time, Time};
use crate::trace::SharedTracer;

/// A packet accepted by a fast-path FIFO port: when its transmission starts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Departure {
    /// When its transmission starts.
    pub(super) start: Time,
    /// Its size, bytes.
    pub(super) size: u32,
    /// Its class.
    pub(super) class: u8,
    /// Its marks.
    pub(super) marks: u16,
    /// When it reaches the port (handed-off packets are entered before they arrive).
    pub(super) arrive: Time,
    /// Its packet's tie.
    pub(super) tie: u64,
    /// For a handed-off packet: when the port was free before it was entered.
    pub(super) before: Time,
}

impl Link {
    /// True when this port takes the FIFO fast path (see [`Network::disable_fast_paths`]).
    pub fn uses_fast_path(&self) -> bool {
        self.fast.is_some()
    }

    /// Accounts, in time order, every fast-path packet whose transmission started by
    /// `now`, and every handed-off packet whose arrival key is below `key`: counters,
    /// queue average. On the general path, ends the transmission under way if it left
    /// the queue empty and its end (which then has no event) comes before `key`. Cheap
    /// when there is nothing to do.
    #[inline(always)]
    pub fn settle(&mut self, now: Time, key: u128) {
        if let Some((t, s)) = self.lazy_end {
            if arrival_key(t, s) < key {
                self.end_idle(t);
            }
        }
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

    /// The end at `t` of a transmission that left the queue empty and has no event (see
    /// `Network::transmit`): what its event would have done then — the port
    /// idle, the discipline's dequeue of an empty queue at `t`, the queue average set.
    #[cold]
    #[inline(never)]
    pub(super) fn end_idle(&mut self, t: Time) {
        self.lazy_end = None;
        self.busy = false;
        match self.qdisc.dequeue_with_drops(t, &mut self.stats.drops) {
            crate::queue::Dequeue::Empty => self.stats.queue_avg.set(t, self.qdisc.len() as f64),
            _ => unreachable!("a queue left empty gave a packet"),
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
                count_start(&self.counted, st, d.size, d.class, d.marks);
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
                    count_start(&self.counted, st, size, class, marks);
                }
            }
        }
    }
}

/// How many packets a hand-off enters in a port's ledger between two settlings of it
/// (see [`Network::hand_off`]).
const SETTLE_EVERY: u32 = 16;

impl Network {
    /// [`Network::offer`] at a port with handed-off packets on their way: those that have
    /// not arrived by now come after this packet.
    #[cold]
    #[inline(never)]
    pub(super) fn offer_before_handed<Q: crate::engine::EventQueue>(
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

    /// FIFO fast path: the packet's transmission starts when everything before it has
    /// been sent, so its start, end and arrival times are known now.
    #[inline]
    pub(super) fn fast_enqueue<Q: crate::engine::EventQueue, const TRACE: bool>(
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
            count_start(&l.counted, st, d.size, d.class, d.marks);
        }
        let arrive = done + l.delay;
        if l.hands_off && arrive > now && pkt.dst != l.to && l.in_flight.is_empty() {
            // No packet of this link is on its way the usual way: hand this one on.
            return Some(arrive);
        }
        land.put_on_wire(l, id, arrive, tx, pkt, sched);
        None
    }

    /// Hands a packet sent on `l1`, arriving at its far end at `a1`, to its next port
    /// (when that port is a plain FIFO it alone feeds and the packet would not be
    /// dropped there); else puts it on `l1`'s in-flight list as usual.
    pub(super) fn hand_off<Q: crate::engine::EventQueue>(
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
        l.lazy_ok = !self.no_fast_path && l.fast.is_none() && !l.timed;
    }
}
