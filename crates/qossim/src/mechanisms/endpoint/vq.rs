//! The marking design's virtual queue: a drop-tail queue served at a fraction of the
//! link rate, run beside the real one; a packet the virtual queue would have dropped is
//! marked (and forwarded if the real queue has room).

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
    /// Packets marked.
    pub marked: u64,
    /// Packets seen.
    pub seen: u64,
}

impl VirtualQueue {
    /// A virtual queue of `limit` packets at `fraction` of the link rate.
    pub fn new(fraction: f64, limit: usize) -> Self {
        VirtualQueue {
            fraction,
            limit,
            done: VecDeque::new(),
            marked: 0,
            seen: 0,
        }
    }

    /// Offers a packet of `bytes` at `now` on a link of `rate_bps`; true if the virtual
    /// queue drops it (the packet is to be marked).
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
        if self.offer(pkt.size, now, port.rate_bps) {
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
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
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
}
