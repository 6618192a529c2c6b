//! Deliveries to plain sinks counted without an arrival event (see [`Landing`]).

use super::{AgentId, Link, LinkId, Packet};
use crate::engine::Scheduler;
use crate::time::Time;

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
    pub(super) fn put_on_wire<Q: crate::engine::EventQueue>(
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
