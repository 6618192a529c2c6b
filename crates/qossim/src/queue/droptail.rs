//! First-in first-out with tail drop.

use super::{Dequeue, DropCause, DropLog, QueueDisc, QueueKind};
use crate::decl::{no_rules, Absent, Param, Type, Value};
use crate::packet::Packet;
use crate::scenario::units::QueueLimit;
use crate::scenario::QueueSpec;
use crate::time::Time;
use std::collections::VecDeque;

/// Drop-tail as scenarios name it (`kind = "droptail"`, also `"fifo"`).
pub static DROPTAIL: QueueKind = QueueKind {
    name: "droptail",
    aliases: &["fifo"],
    title: "drop-tail",
    doc: "First in, first out; arrivals that do not fit are dropped.",
    params: &[Param::new(
        "limit",
        Type::Limit,
        Absent::Is("1000p"),
        "Buffer: waiting packets (\"100p\") or bytes (\"64KB\"); zero makes a loss system.",
    )
    .unit("p or B")],
    rules: no_rules,
    spec: |v| QueueSpec::DropTail {
        limit: match v.get("limit") {
            Some(Value::Bytes(b)) => QueueLimit::Bytes(*b),
            _ => QueueLimit::Packets(v.count("limit")),
        },
    },
    stats: &[],
    build: |q, _| match q {
        QueueSpec::DropTail { limit } => Box::new(DropTail::new(match limit {
            QueueLimit::Packets(p) => Limit::Packets(*p as usize),
            QueueLimit::Bytes(b) => Limit::Bytes(*b),
        })),
        q => unreachable!("drop-tail asked to build {q:?}"),
    },
};

/// A queue limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    /// At most this many packets.
    Packets(usize),
    /// At most this many bytes.
    Bytes(u64),
}

/// FIFO that drops arrivals finding the queue full.
pub struct DropTail {
    q: VecDeque<Packet>,
    bytes: u64,
    limit: Limit,
}

impl DropTail {
    /// A drop-tail queue with the given limit.
    pub fn new(limit: Limit) -> Self {
        DropTail {
            q: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }

    /// Would a packet of `size` bytes fit?
    #[inline]
    pub fn fits(&self, size: u32) -> bool {
        match self.limit {
            Limit::Packets(n) => self.q.len() < n,
            Limit::Bytes(b) => self.bytes + size as u64 <= b,
        }
    }
}

impl QueueDisc for DropTail {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, _now: Time, drops: &mut DropLog) {
        if self.fits(pkt.size) {
            self.bytes += pkt.size as u64;
            self.q.push_back(pkt);
        } else {
            drops.record(&pkt, DropCause::Overflow);
        }
    }
    #[inline]
    fn dequeue(&mut self, _now: Time) -> Dequeue {
        match self.q.pop_front() {
            Some(p) => {
                self.bytes -= p.size as u64;
                Dequeue::Packet(p)
            }
            None => Dequeue::Empty,
        }
    }
    fn len(&self) -> usize {
        self.q.len()
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet)) {
        self.q.iter().for_each(f);
    }
    fn fifo_limit(&self) -> Option<Limit> {
        Some(self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_and_byte_limits() {
        let mut d = DropLog::default();
        let mut q = DropTail::new(Limit::Packets(2));
        for _ in 0..3 {
            q.enqueue(Packet::of_size(100), 0, &mut d);
        }
        assert_eq!((q.len(), d.overflow_total()), (2, 1));
        let mut q = DropTail::new(Limit::Bytes(250));
        for s in [100, 100, 100, 50] {
            q.enqueue(Packet::of_size(s), 0, &mut d);
        }
        assert_eq!((q.len(), q.bytes()), (3, 250));
        assert!(matches!(q.dequeue(0), Dequeue::Packet(p) if p.size == 100));
    }
}
