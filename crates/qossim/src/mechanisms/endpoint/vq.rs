//! The marking design's virtual queue: a drop-tail queue served at a fraction of the
//! link rate, run beside the real one; a packet the virtual queue would have dropped is
//! marked (and forwarded if the real queue has room).
//!
//! Two forms: one FIFO counter for every packet, or one counter per priority level
//! (service class), served in strict priority like the real queue: the highest level's
//! virtual packets are served first, and a packet is marked when its own level already
//! holds more than the limit.

use crate::net::{PortHook, PortInfo};
use crate::packet::{marks, Packet};
use crate::time::Time;
use std::collections::VecDeque;

/// A virtual queue on a port: `limit` packets served at `fraction` of the port's rate.
pub struct VirtualQueue {
    fraction: f64,
    limit: usize,
    /// Virtual departure times of the packets in the virtual queue (in service first).
    done: VecDeque<Time>,
    /// Per priority level (index = class), the bits still to serve of each virtual
    /// packet, head first; `None`: one FIFO counter.
    levels: Option<Vec<VecDeque<f64>>>,
    /// Per-level form: the levels share the limit (a higher level pushes out the most
    /// recent lower-level packet when the virtual buffer is full).
    shared: bool,
    /// When the per-level virtual service was last brought up to date.
    served_to: Time,
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
            served_to: 0,
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

    /// Offers a packet of `bytes` and service class `class` at `now` on a link of
    /// `rate_bps`; true if the virtual queue drops it (the packet is to be marked).
    pub fn offer_class(&mut self, bytes: u32, class: u8, now: Time, rate_bps: u64) -> bool {
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
                if *head <= budget {
                    budget -= *head;
                    level.pop_front();
                } else {
                    *head -= budget;
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
                        lower.pop_back();
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
        levels[c].push_back(bytes as f64 * 8.0);
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
        let bits = bytes as f64 * 8.0;
        let service = (bits * 1e12 / (rate_bps as f64 * self.fraction)).ceil() as Time;
        self.done.push_back(start + service);
        false
    }
}

impl PortHook for VirtualQueue {
    fn on_arrival(&mut self, pkt: &mut Packet, now: Time, port: &PortInfo) -> bool {
        if self.offer_class(pkt.size, pkt.class, now, port.rate_bps) {
            pkt.set(marks::ECN_CE);
        }
        true
    }
    fn wants_departures(&self) -> bool {
        false
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
}
