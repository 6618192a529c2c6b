//! The marking design's virtual queue: a drop-tail queue served at a fraction of the
//! link rate, run beside the real one; a packet the virtual queue would have dropped is
//! marked (and forwarded if the real queue has room).
//!
//! Two forms: one FIFO counter for every packet, or one counter per priority level
//! (service class), served in strict priority like the real queue: the highest level's
//! virtual packets are served first, and a packet is marked when its own level already
//! holds more than the limit.
//!
//! The shared form copies the real priority queue's one buffer: a higher level's packet
//! arriving at a full virtual buffer pushes out the most recent lower-level virtual
//! packet. With `mark_pushed_out` a packet pushed out that way counts as dropped by the
//! virtual queue too: its real copy, if still waiting in the real queue, is marked when
//! it starts transmission.

use crate::net::{PortHook, PortInfo};
use crate::packet::{marks, FlowId, Packet};
use crate::time::Time;
use std::collections::{HashSet, VecDeque};

/// What identifies a packet between its arrival at a port and its departure.
type Key = (FlowId, u64, u64, Time);

/// A virtual packet: bits still to serve, and its real copy's key (shared form only).
type Virtual = (f64, Option<Key>);

fn key_of(pkt: &Packet) -> Key {
    (pkt.flow, pkt.seq, pkt.ack, pkt.created)
}

/// How long a pushed-out packet's key is kept waiting for its real copy's departure
/// (far longer than any packet waits in a real queue; older keys are the copies that
/// had left, or were dropped, before the push-out).
const PUSHED_KEEP: Time = 30 * 1_000_000_000_000;

/// A virtual queue on a port: `limit` packets served at `fraction` of the port's rate.
pub struct VirtualQueue {
    fraction: f64,
    limit: usize,
    /// Virtual departure times of the packets in the virtual queue (in service first).
    done: VecDeque<Time>,
    /// Per priority level (index = class), the bits still to serve of each virtual
    /// packet, head first; `None`: one FIFO counter.
    levels: Option<Vec<VecDeque<Virtual>>>,
    /// Per-level form: the levels share the limit (a higher level pushes out the most
    /// recent lower-level packet when the virtual buffer is full).
    shared: bool,
    /// Shared form: a pushed-out virtual packet marks its real copy at its departure.
    mark_pushed_out: bool,
    /// Keys of pushed-out virtual packets whose real copies are to be marked.
    pushed: HashSet<Key>,
    /// Pushed-out keys since the last pruning of `pushed`.
    since_prune: usize,
    /// When the per-level virtual service was last brought up to date.
    served_to: Time,
    /// FIFO form: the last packet size and link rate seen, and the virtual service time
    /// computed for them (packets of one size on one link repeat it exactly).
    service: (u32, u64, Time),
    /// Packets marked.
    pub marked: u64,
    /// Packets seen.
    pub seen: u64,
}

impl VirtualQueue {
    /// A virtual queue of `limit` packets at `fraction` of the link rate, one FIFO
    /// counter for every packet.
    pub fn new(fraction: f64, limit: usize) -> Self {
        VirtualQueue {
            fraction,
            limit,
            done: VecDeque::new(),
            levels: None,
            shared: false,
            mark_pushed_out: false,
            pushed: HashSet::new(),
            since_prune: 0,
            served_to: 0,
            service: (0, 0, 0),
            marked: 0,
            seen: 0,
        }
    }

    /// A virtual queue with one counter of `limit` packets per priority level: the
    /// levels share `fraction` of the link rate in strict priority (higher class first).
    pub fn per_class(fraction: f64, limit: usize) -> Self {
        VirtualQueue {
            levels: Some(Vec::new()),
            ..Self::new(fraction, limit)
        }
    }

    /// A per-level virtual queue whose levels share one buffer of `limit` packets
    /// waiting, like the real priority queue with push-out: a packet arriving when the
    /// levels together hold more than `limit` pushes out the most recently queued packet
    /// of the lowest lower level that has one, and is marked only if none has.
    pub fn shared(fraction: f64, limit: usize) -> Self {
        VirtualQueue {
            shared: true,
            ..Self::per_class(fraction, limit)
        }
    }

    /// The shared form in which a pushed-out virtual packet counts as dropped: its real
    /// copy is marked when it starts transmission, if it is still queued then.
    pub fn shared_marking_pushed_out(fraction: f64, limit: usize) -> Self {
        VirtualQueue {
            mark_pushed_out: true,
            ..Self::shared(fraction, limit)
        }
    }

    /// Offers a packet of `bytes` and service class `class` at `now` on a link of
    /// `rate_bps`; true if the virtual queue drops it (the packet is to be marked).
    pub fn offer_class(&mut self, bytes: u32, class: u8, now: Time, rate_bps: u64) -> bool {
        self.offer_keyed(bytes, class, None, now, rate_bps)
    }

    /// Whether the real copy of `pkt` is to be marked at its departure (its virtual copy
    /// was pushed out); forgets it.
    pub fn take_pushed_out(&mut self, pkt: &Packet) -> bool {
        !self.pushed.is_empty() && self.pushed.remove(&key_of(pkt))
    }

    fn offer_keyed(
        &mut self,
        bytes: u32,
        class: u8,
        key: Option<Key>,
        now: Time,
        rate_bps: u64,
    ) -> bool {
        let Some(levels) = self.levels.as_mut() else {
            return self.offer(bytes, now, rate_bps);
        };
        // Serve the virtual backlog since the last arrival, highest level first.
        let mut budget =
            now.saturating_sub(self.served_to) as f64 * rate_bps as f64 * self.fraction / 1e12;
        self.served_to = self.served_to.max(now);
        for level in levels.iter_mut().rev() {
            while budget > 0.0 {
                let Some(head) = level.front_mut() else {
                    break;
                };
                if head.0 <= budget {
                    budget -= head.0;
                    level.pop_front();
                } else {
                    head.0 -= budget;
                    budget = 0.0;
                }
            }
        }
        self.seen += 1;
        let c = class as usize;
        if levels.len() <= c {
            levels.resize_with(c + 1, VecDeque::new);
        }
        // As the FIFO form: the packets behind the one in service are counted.
        if self.shared {
            if levels.iter().map(VecDeque::len).sum::<usize>() > self.limit {
                match levels[..c].iter_mut().find(|l| !l.is_empty()) {
                    Some(lower) => {
                        if let Some((_, Some(k))) = lower.pop_back() {
                            if self.mark_pushed_out {
                                self.pushed.insert(k);
                                self.since_prune += 1;
                                if self.since_prune >= 4096 {
                                    self.since_prune = 0;
                                    let horizon = now.saturating_sub(PUSHED_KEEP);
                                    self.pushed.retain(|k| k.3 >= horizon);
                                }
                            }
                        }
                    }
                    None => {
                        self.marked += 1;
                        return true;
                    }
                }
            }
        } else if levels[c].len() > self.limit {
            self.marked += 1;
            return true;
        }
        levels[c].push_back((bytes as f64 * 8.0, key));
        false
    }

    /// Offers a packet of `bytes` at `now` on a link of `rate_bps` to the FIFO counter;
    /// true if the virtual queue drops it (the packet is to be marked).
    pub fn offer(&mut self, bytes: u32, now: Time, rate_bps: u64) -> bool {
        while self.done.front().is_some_and(|&t| t <= now) {
            self.done.pop_front();
        }
        self.seen += 1;
        // Waiting packets are those behind the one in (virtual) service.
        if self.done.len() > self.limit {
            self.marked += 1;
            return true;
        }
        let start = self.done.back().copied().unwrap_or(now).max(now);
        if (self.service.0, self.service.1) != (bytes, rate_bps) {
            let bits = bytes as f64 * 8.0;
            let service = (bits * 1e12 / (rate_bps as f64 * self.fraction)).ceil() as Time;
            self.service = (bytes, rate_bps, service);
        }
        self.done.push_back(start + self.service.2);
        false
    }
}

impl PortHook for VirtualQueue {
    fn on_arrival(&mut self, pkt: &mut Packet, now: Time, port: &PortInfo) -> bool {
        let key = self.mark_pushed_out.then(|| key_of(pkt));
        if self.offer_keyed(pkt.size, pkt.class, key, now, port.rate_bps) {
            pkt.set(marks::ECN_CE);
        }
        true
    }
    fn on_departure(&mut self, pkt: &mut Packet, _now: Time) {
        if self.take_pushed_out(pkt) && !pkt.has(marks::ECN_CE) {
            pkt.set(marks::ECN_CE);
            self.marked += 1;
        }
    }
    fn wants_departures(&self) -> bool {
        self.mark_pushed_out
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        out.push(("vq_marked".into(), self.marked as f64));
        out.push(("vq_seen".into(), self.seen as f64));
    }
    fn on_warmup(&mut self, _now: Time) {
        self.marked = 0;
        self.seen = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Time = 1_000_000;

    #[test]
    fn marks_what_a_slower_drop_tail_queue_would_drop() {
        // 1 Mb/s link, virtual queue at 0.5: a 125-byte packet takes 2 ms virtually.
        // Limit 2 waiting packets: with one in service, the 4th back-to-back is marked.
        let mut vq = VirtualQueue::new(0.5, 2);
        let r = 1_000_000;
        let arrivals = [0, 0, 0, 0, 100 * US, 1_999 * US, 2_000 * US, 2_000 * US];
        let got: Vec<bool> = arrivals.iter().map(|&t| vq.offer(125, t, r)).collect();
        // By hand: 0: in service until 2 ms; 0, 0: waiting (done 4 ms, 6 ms); 0: full ->
        // mark; 0.1 ms: still 3 in -> mark; 1.999 ms: mark; 2 ms: the first left -> 2 in,
        // accepted (done 8 ms); 2 ms: 3 in -> mark.
        assert_eq!(got, [false, false, false, true, true, true, false, true]);
        assert_eq!(vq.marked, 4);
    }

    #[test]
    fn service_time_follows_each_packets_size_and_rate() {
        // Limit 0: a packet is marked while another is in virtual service. At 0.5 of
        // 1 Mb/s, 125 B take 2 ms and 250 B 4 ms; at 0.5 of 2 Mb/s, 125 B take 1 ms.
        let mut vq = VirtualQueue::new(0.5, 0);
        let (r1, r2) = (1_000_000, 2_000_000);
        assert!(!vq.offer(125, 0, r1)); // served until 2 ms
        assert!(vq.offer(250, 1_999 * US, r1));
        assert!(!vq.offer(250, 2_000 * US, r1)); // served until 6 ms, not 4 ms
        assert!(vq.offer(125, 4_000 * US, r1));
        assert!(vq.offer(125, 5_999 * US, r1));
        assert!(!vq.offer(125, 6_000 * US, r2)); // served until 7 ms at the faster rate
        assert!(vq.offer(125, 6_999 * US, r2));
        assert!(!vq.offer(125, 7_000 * US, r1)); // back to 2 ms: until 9 ms
        assert!(vq.offer(125, 8_999 * US, r1));
        assert!(!vq.offer(125, 9_000 * US, r1));
    }

    #[test]
    fn per_class_counters_serve_the_higher_level_first() {
        // 1 Mb/s at 0.5: 2 ms per 125-byte packet; limit 1 (one behind the one served).
        let mut vq = VirtualQueue::per_class(0.5, 1);
        let r = 1_000_000;
        // Two low (class 0) packets at 0: the second waits, a third is marked.
        assert!(!vq.offer_class(125, 0, 0, r));
        assert!(!vq.offer_class(125, 0, 0, r));
        assert!(vq.offer_class(125, 0, 0, r));
        // High (class 1) packets have their own counter: two fit at once.
        assert!(!vq.offer_class(125, 1, 0, r));
        assert!(!vq.offer_class(125, 1, 0, r));
        assert!(vq.offer_class(125, 1, 0, r));
        // By 4 ms the two high packets are served and the low level has not moved: a low
        // packet is still marked, a high one fits.
        assert!(vq.offer_class(125, 0, 4_000 * US, r));
        assert!(!vq.offer_class(125, 1, 4_000 * US, r));
        // By 7 ms the high one (done at 6 ms) and half a low one are served: low holds
        // 1.5 packets, so one more low packet is still refused until the head leaves at 8 ms.
        assert!(vq.offer_class(125, 0, 7_000 * US, r));
        assert!(!vq.offer_class(125, 0, 8_000 * US, r));
        assert_eq!(vq.marked, 4);
        // One class: the per-class form is the FIFO form.
        let arrivals = [0, 0, 0, 0, 100 * US, 1_999 * US, 2_000 * US, 2_000 * US];
        let mut a = VirtualQueue::new(0.5, 2);
        let mut b = VirtualQueue::per_class(0.5, 2);
        for &t in &arrivals {
            assert_eq!(a.offer(125, t, r), b.offer_class(125, 0, t, r), "{t}");
        }
    }

    #[test]
    fn shared_levels_mark_a_low_packet_when_the_buffer_is_full() {
        // 1 Mb/s at 0.5: 2 ms per 125-byte packet; limit 2 waiting, shared by the levels.
        let r = 1_000_000;
        let mut vq = VirtualQueue::shared(0.5, 2);
        // Two high packets at 0 (one in service, one waiting) and one low: three held.
        assert!(!vq.offer_class(125, 1, 0, r));
        assert!(!vq.offer_class(125, 1, 0, r));
        assert!(!vq.offer_class(125, 0, 0, r));
        // Full: a low packet is marked (no lower level to push out) ...
        assert!(vq.offer_class(125, 0, 0, r));
        // ... a high one pushes the low one out and is not marked.
        assert!(!vq.offer_class(125, 1, 0, r));
        // Now three high packets are held: a high one is marked, a low one too.
        assert!(vq.offer_class(125, 1, 0, r));
        assert!(vq.offer_class(125, 0, 0, r));
        assert_eq!(vq.marked, 3);
        // Per-level counters with their own limits would have taken the second low one.
        let mut own = VirtualQueue::per_class(0.5, 2);
        for (class, _) in [(1, 0), (1, 0), (0, 0)] {
            assert!(!own.offer_class(125, class, 0, r));
        }
        assert!(!own.offer_class(125, 0, 0, r));
    }

    #[test]
    fn a_pushed_out_virtual_packet_marks_its_real_copy_at_departure() {
        // 1 Mb/s at 0.5: 2 ms per 125-byte packet; limit 2 waiting, shared by the levels.
        let r = 1_000_000;
        let probe = |seq: u64| {
            let mut p = Packet::of_size(125);
            p.flow = 3;
            p.seq = seq;
            p.class = 0;
            p
        };
        for marking in [false, true] {
            let mut vq = if marking {
                VirtualQueue::shared_marking_pushed_out(0.5, 2)
            } else {
                VirtualQueue::shared(0.5, 2)
            };
            assert_eq!(vq.wants_departures(), marking);
            // Two high packets and a low one (probe 7): three held.
            assert!(!vq.offer_keyed(125, 1, None, 0, r));
            assert!(!vq.offer_keyed(125, 1, None, 0, r));
            assert!(!vq.offer_keyed(125, 0, Some(key_of(&probe(7))), 0, r));
            // A high packet at the full buffer pushes probe 7 out, unmarked at arrival.
            assert!(!vq.offer_keyed(125, 1, None, 0, r));
            // Its real copy leaves later: marked only in the marking form, and only once;
            // another probe is not.
            let mut p = probe(7);
            vq.on_departure(&mut p, 1);
            assert_eq!(p.has(marks::ECN_CE), marking);
            assert_eq!(vq.marked, u64::from(marking));
            let mut again = probe(7);
            vq.on_departure(&mut again, 2);
            assert!(!again.has(marks::ECN_CE));
            let mut other = probe(8);
            vq.on_departure(&mut other, 2);
            assert!(!other.has(marks::ECN_CE));
        }
    }
}
