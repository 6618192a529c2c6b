//! Pending-event sets behind one narrow interface.
//!
//! Entries are ordered by `(time, seq)`: `seq` is a run-wide insertion counter, so events
//! at the same time fire first-in first-out and the order never depends on the
//! implementation. Two implementations are provided; `bench` measures both and the faster
//! one is [`DefaultQueue`].

use super::Event;
use crate::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// When the event fires.
    pub time: Time,
    /// Insertion sequence number, unique within a run; breaks ties first-in first-out.
    pub seq: u64,
    /// What happens.
    pub event: Event,
}

impl Entry {
    #[inline]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

/// A priority queue of events, smallest `(time, seq)` first.
pub trait EventQueue {
    /// Inserts an entry. Its key must not be smaller than the key of the last entry popped
    /// (simulated time never goes backwards); implementations may rely on this.
    fn push(&mut self, e: Entry);
    /// Removes and returns the entry with the smallest key.
    fn pop(&mut self) -> Option<Entry>;
    /// The time of the next entry, if any.
    fn peek_time(&mut self) -> Option<Time>;
    /// Number of pending entries.
    fn len(&self) -> usize;
    /// True when nothing is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct HeapItem(Entry);

impl Ord for HeapItem {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.key().cmp(&self.0.key())
    }
}
impl PartialOrd for HeapItem {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The standard library's binary heap, ordered by `(time, seq)`.
#[derive(Default)]
pub struct BinaryHeapQueue {
    heap: BinaryHeap<HeapItem>,
}

impl BinaryHeapQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }
}

impl EventQueue for BinaryHeapQueue {
    #[inline]
    fn push(&mut self, e: Entry) {
        self.heap.push(HeapItem(e));
    }
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        self.heap.pop().map(|h| h.0)
    }
    #[inline]
    fn peek_time(&mut self) -> Option<Time> {
        self.heap.peek().map(|h| h.0.time)
    }
    fn len(&self) -> usize {
        self.heap.len()
    }
}

/// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan) on the event time.
///
/// It exploits the monotonicity of a discrete-event simulation: every time pushed is at
/// least the last time popped. Bucket `i > 0` holds entries whose time differs from the
/// last popped time first in bit `i - 1`; entries at exactly that time wait in a FIFO
/// deque in sequence order, so ties fire first-in first-out. A bitmask of non-empty buckets
/// finds the next bucket in O(1); each entry is moved at most 64 times and usually a few.
pub struct RadixHeapQueue {
    /// Entries at exactly `last`, in decreasing seq order: the next one is at the end.
    b0: Vec<Entry>,
    /// Entries pushed at exactly `last` after `b0` was filled, in increasing seq order
    /// (all later than `b0`'s); moved into `b0` when it runs dry.
    b0_new: Vec<Entry>,
    /// Buckets 1..=64 (index 0 unused).
    buckets: Vec<Vec<Entry>>,
    last: Time,
    len: usize,
    /// Bit i set when bucket i (i >= 1) is non-empty.
    mask: u128,
}

impl Default for RadixHeapQueue {
    fn default() -> Self {
        RadixHeapQueue {
            b0: Vec::new(),
            b0_new: Vec::new(),
            buckets: (0..65).map(|_| Vec::new()).collect(),
            last: 0,
            len: 0,
            mask: 0,
        }
    }
}

impl RadixHeapQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    fn bucket_of(&self, t: Time) -> usize {
        (64 - (t ^ self.last).leading_zeros()) as usize
    }

    #[inline]
    fn drain_new_or_refill(&mut self) {
        if self.b0_new.is_empty() {
            self.refill();
        } else {
            std::mem::swap(&mut self.b0, &mut self.b0_new);
            self.b0.reverse();
        }
    }

    /// Refills the minimum bucket from the lowest non-empty bucket.
    #[inline]
    fn refill(&mut self) {
        let i = self.mask.trailing_zeros() as usize;
        let mut bucket = std::mem::take(&mut self.buckets[i]);
        self.mask &= !(1u128 << i);
        let min = bucket
            .iter()
            .map(|e| e.time)
            .min()
            .expect("non-empty bucket");
        self.last = min;
        let mut at_min = std::mem::take(&mut self.b0);
        for e in bucket.drain(..) {
            let b = self.bucket_of(e.time);
            if b == 0 {
                at_min.push(e);
            } else {
                self.buckets[b].push(e);
                self.mask |= 1u128 << b;
            }
        }
        // Keep the allocation of the drained bucket for reuse.
        if self.buckets[i].is_empty() {
            self.buckets[i] = bucket;
        }
        if at_min.len() > 1 {
            at_min.sort_unstable_by_key(|e| std::cmp::Reverse(e.seq));
        }
        self.b0 = at_min;
    }
}

impl EventQueue for RadixHeapQueue {
    #[inline]
    fn push(&mut self, e: Entry) {
        debug_assert!(e.time >= self.last, "event scheduled in the past");
        let b = self.bucket_of(e.time);
        if b == 0 {
            // New entries have the largest seq so far and queue behind everything at this
            // time; an entry pushed back after a pop (see `Scheduler::next_until`) has the
            // smallest and goes next.
            match self.b0.last() {
                Some(x) if x.seq > e.seq => self.b0.push(e),
                None if self.b0_new.first().is_none_or(|x| x.seq > e.seq) => self.b0.push(e),
                _ => self.b0_new.push(e),
            }
        } else {
            self.buckets[b].push(e);
            self.mask |= 1u128 << b;
        }
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        if self.len == 0 {
            return None;
        }
        if self.b0.is_empty() {
            self.drain_new_or_refill();
        }
        self.len -= 1;
        self.b0.pop()
    }

    fn peek_time(&mut self) -> Option<Time> {
        if self.len == 0 {
            return None;
        }
        if self.b0.is_empty() {
            self.drain_new_or_refill();
        }
        self.b0.last().map(|e| e.time)
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// The event queue used by [`crate::engine::Scheduler`] unless another is chosen;
/// picked by `bench` (see `bench/README.md`).
pub type DefaultQueue = RadixHeapQueue;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Event, Target};
    use crate::rng::Rng;

    fn drain<Q: EventQueue>(q: &mut Q, ops: &[(bool, u64)]) -> Vec<(Time, u64)> {
        // ops: (push?, delay) ; time advances with each pop
        let mut out = vec![];
        let mut seq = 0;
        let mut now = 0;
        for &(push, d) in ops {
            if push {
                q.push(Entry {
                    time: now + d,
                    seq,
                    event: Event::new(Target::Agent(0), 0),
                });
                seq += 1;
            } else if let Some(e) = q.pop() {
                assert!(e.time >= now);
                now = e.time;
                out.push((e.time, e.seq));
            }
        }
        while let Some(e) = q.pop() {
            out.push((e.time, e.seq));
        }
        out
    }

    #[test]
    fn implementations_agree_and_are_fifo_on_ties() {
        let mut r = Rng::from_seed(3);
        let ops: Vec<(bool, u64)> = (0..20_000)
            .map(|_| (r.uniform() < 0.55, r.below(5) * 1000))
            .collect();
        let a = drain(&mut BinaryHeapQueue::new(), &ops);
        let b = drain(&mut RadixHeapQueue::new(), &ops);
        assert_eq!(a, b);
        for w in a.windows(2) {
            assert!(
                (w[0].0, w[0].1) < (w[1].0, w[1].1),
                "not ordered by (time, seq)"
            );
        }
    }
}
