//! Strict priority over N classes, with an optional rate limit on the top class and
//! push-out of lower-class packets when the shared buffer is full.

use super::{Dequeue, DropCause, DropLog, QueueDisc, QueueKind};
use crate::decl::{Absent, Bounds, Param, Problem, Type, Values};
use crate::packet::Packet;
use crate::scenario::QueueSpec;
use crate::time::{drain_time, Time};
use std::collections::VecDeque;

/// Strict priority as scenarios name it (`kind = "priority"`).
pub static PRIORITY: QueueKind = QueueKind {
    name: "priority",
    aliases: &[],
    title: "priority",
    doc: "Strict priority over classes sharing one buffer, with optional push-out and a rate limit on the top class.",
    params: &[
        Param::new("classes", Type::Integer, Absent::Is("2"), "Number of classes; classes at or above it share the top band.")
            .bounds(Bounds::Between(1.0, 8.0)),
        Param::new("limit", Type::PacketLimit, Absent::Is("1000p"), "Buffer shared by all classes.")
            .unit("p"),
        Param::new("push_out", Type::Bool, Absent::Is("false"), "A full buffer evicts the newest packet of the lowest lower class."),
        Param::new("top_rate", Type::Rate, Absent::Derived("none (no limit)"), "Token rate limiting the top class (give top_depth with it).")
            .unit("bit/s"),
        Param::new("top_depth", Type::Size, Absent::Derived("none (no limit)"), "Token bucket depth of the top class's limit.")
            .unit("B"),
    ],
    rules: priority_rules,
    spec: |v| QueueSpec::Priority {
        classes: v.count("classes"),
        limit: v.count("limit"),
        push_out: v.bool("push_out"),
        top: v
            .get("top_rate")
            .is_some()
            .then(|| (v.count("top_rate"), v.count("top_depth"))),
    },
    stats: &[],
    build: |q, _| match q {
        QueueSpec::Priority {
            classes,
            limit,
            push_out,
            top,
        } => Box::new(Priority::new(
            *classes as usize,
            *limit as usize,
            *push_out,
            top.map(|(rate_bps, depth_bytes)| TopClassLimit {
                rate_bps,
                depth_bytes,
            }),
        )),
        q => unreachable!("priority asked to build {q:?}"),
    },
};

/// The top class's rate limit needs both its rate and its depth.
fn priority_rules(v: &Values) -> Vec<Problem> {
    if v.get("top_rate").is_some() != v.get("top_depth").is_some() {
        return vec![(
            "top_rate",
            "give both top_rate and top_depth to rate-limit the top class".into(),
        )];
    }
    Vec::new()
}

/// A token-bucket rate limit on the highest class.
#[derive(Clone, Copy, Debug)]
pub struct TopClassLimit {
    /// Token rate, bits per second.
    pub rate_bps: u64,
    /// Bucket depth, bytes.
    pub depth_bytes: u64,
}

/// Strict priority: the higher a packet's class, the sooner it is sent (classes at or
/// above `n - 1` share the top band). One buffer of `limit` packets is shared by all
/// classes; with push-out, an arrival that finds it full evicts the most recently queued
/// packet of the lowest non-empty class below its own, if any.
pub struct Priority {
    bands: Vec<VecDeque<Packet>>,
    limit: usize,
    len: usize,
    bytes: u64,
    push_out: bool,
    top: Option<TopClassLimit>,
    tokens: f64,
    last: Time,
}

impl Priority {
    /// `n` classes sharing a buffer of `limit` packets.
    pub fn new(n: usize, limit: usize, push_out: bool, top: Option<TopClassLimit>) -> Self {
        assert!(n >= 1);
        Priority {
            bands: (0..n).map(|_| VecDeque::new()).collect(),
            limit,
            len: 0,
            bytes: 0,
            push_out,
            top,
            tokens: top.map(|t| t.depth_bytes as f64).unwrap_or(0.0),
            last: 0,
        }
    }

    fn band(&self, pkt: &Packet) -> usize {
        (pkt.class as usize).min(self.bands.len() - 1)
    }

    fn refill(&mut self, now: Time) {
        if let Some(t) = self.top {
            let add = t.rate_bps as f64 * (now - self.last) as f64 / 8e12;
            self.tokens = (self.tokens + add).min(t.depth_bytes as f64);
            self.last = now;
        }
    }

    /// Packets queued in class band `b`.
    pub fn band_len(&self, b: usize) -> usize {
        self.bands[b].len()
    }
}

impl QueueDisc for Priority {
    fn enqueue(&mut self, pkt: Packet, _now: Time, drops: &mut DropLog) {
        let b = self.band(&pkt);
        if self.len >= self.limit {
            let victim = if self.push_out {
                (0..b).find(|&lb| !self.bands[lb].is_empty())
            } else {
                None
            };
            match victim {
                Some(lb) => {
                    let v = self.bands[lb].pop_back().expect("non-empty band");
                    self.len -= 1;
                    self.bytes -= v.size as u64;
                    drops.record(&v, DropCause::PushedOut);
                }
                None => {
                    drops.record(&pkt, DropCause::Overflow);
                    return;
                }
            }
        }
        self.len += 1;
        self.bytes += pkt.size as u64;
        self.bands[b].push_back(pkt);
    }

    fn dequeue(&mut self, now: Time) -> Dequeue {
        let top = self.bands.len() - 1;
        let mut wait = None;
        for b in (0..=top).rev() {
            let Some(head_size) = self.bands[b].front().map(|p| p.size) else {
                continue;
            };
            if b == top {
                if let Some(t) = self.top {
                    self.refill(now);
                    let need = head_size as f64;
                    if self.tokens < need {
                        let missing = (need - self.tokens).ceil() as u64;
                        wait = Some(now + drain_time(missing, t.rate_bps).max(1));
                        continue;
                    }
                    self.tokens -= need;
                }
            }
            let p = self.bands[b].pop_front().expect("head exists");
            self.len -= 1;
            self.bytes -= p.size as u64;
            return Dequeue::Packet(p);
        }
        match wait {
            Some(t) => Dequeue::Until(t),
            None => Dequeue::Empty,
        }
    }

    fn len(&self) -> usize {
        self.len
    }
    fn class_len(&self, class: u8) -> Option<usize> {
        let b = (class as usize).min(self.bands.len() - 1);
        Some(self.bands[b].len())
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet)) {
        self.bands.iter().flatten().for_each(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(class: u8, seq: u64) -> Packet {
        Packet {
            size: 100,
            class,
            seq,
            ..Default::default()
        }
    }

    #[test]
    fn strict_order_and_push_out() {
        let mut d = DropLog::default();
        let mut q = Priority::new(2, 3, true, None);
        q.enqueue(pkt(0, 1), 0, &mut d);
        q.enqueue(pkt(0, 2), 0, &mut d);
        q.enqueue(pkt(1, 3), 0, &mut d);
        q.enqueue(pkt(1, 4), 0, &mut d); // full: pushes out seq 2
        assert_eq!(d.pushed_out[0], 1);
        q.enqueue(pkt(0, 5), 0, &mut d); // full, nothing lower: dropped
        assert_eq!(d.overflow[0], 1);
        let order: Vec<u64> = std::iter::from_fn(|| match q.dequeue(0) {
            Dequeue::Packet(p) => Some(p.seq),
            _ => None,
        })
        .collect();
        assert_eq!(order, vec![3, 4, 1]);
    }

    #[test]
    fn top_class_rate_limit_waits_for_tokens() {
        let mut d = DropLog::default();
        // 800 kb/s = 100 bytes per ms, bucket 100 bytes.
        let lim = TopClassLimit {
            rate_bps: 800_000,
            depth_bytes: 100,
        };
        let mut q = Priority::new(2, 10, false, Some(lim));
        q.enqueue(pkt(1, 1), 0, &mut d);
        q.enqueue(pkt(1, 2), 0, &mut d);
        q.enqueue(pkt(0, 3), 0, &mut d);
        assert!(matches!(q.dequeue(0), Dequeue::Packet(p) if p.seq == 1));
        // No tokens for the second top packet: the lower class goes first.
        assert!(matches!(q.dequeue(0), Dequeue::Packet(p) if p.seq == 3));
        match q.dequeue(0) {
            Dequeue::Until(t) => assert_eq!(t, crate::time::PS_PER_MS),
            other => panic!("expected a wait, got {other:?}"),
        }
        assert!(matches!(q.dequeue(crate::time::PS_PER_MS), Dequeue::Packet(p) if p.seq == 2));
    }
}
