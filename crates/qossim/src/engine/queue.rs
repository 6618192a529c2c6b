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

/// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan) on the 128-bit key `(time << 64) | seq`.
///
/// It exploits the monotonicity of a discrete-event simulation: every key pushed is larger
/// than the last key popped. Bucket `i` holds keys whose highest bit differing from the last
/// popped key is bit `i - 1`; a pop refills bucket 0 by redistributing the smallest
/// non-empty bucket, so each entry moves at most 129 times and usually a handful.
pub struct RadixHeapQueue {
    buckets: Vec<Vec<Entry>>,
    last: u128,
    len: usize,
    /// Lowest bucket index that may be non-empty (a scan hint).
    lowest: usize,
}

impl Default for RadixHeapQueue {
    fn default() -> Self {
        RadixHeapQueue {
            buckets: (0..129).map(|_| Vec::new()).collect(),
            last: 0,
            len: 0,
            lowest: 129,
        }
    }
}

impl RadixHeapQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    fn bucket_of(&self, key: u128) -> usize {
        let x = key ^ self.last;
        if x == 0 {
            0
        } else {
            128 - x.leading_zeros() as usize
        }
    }
}

impl EventQueue for RadixHeapQueue {
    #[inline]
    fn push(&mut self, e: Entry) {
        let k = e.key();
        debug_assert!(k >= self.last, "event scheduled in the past");
        let b = self.bucket_of(k);
        self.buckets[b].push(e);
        self.len += 1;
        if b < self.lowest {
            self.lowest = b;
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        if self.len == 0 {
            return None;
        }
        if self.buckets[0].is_empty() {
            let mut i = self.lowest.max(1);
            while self.buckets[i].is_empty() {
                i += 1;
            }
            let bucket = std::mem::take(&mut self.buckets[i]);
            let min = bucket.iter().map(|e| e.key()).min().expect("non-empty");
            self.last = min;
            let mut low = 129;
            for e in bucket.iter() {
                let b = self.bucket_of(e.key());
                if b < low {
                    low = b;
                }
                self.buckets[b].push(*e);
            }
            // Give the emptied vector's allocation back to bucket i to avoid reallocating.
            let mut bucket = bucket;
            bucket.clear();
            if self.buckets[i].is_empty() {
                self.buckets[i] = bucket;
            }
            self.lowest = low;
        }
        self.len -= 1;
        let e = self.buckets[0].pop();
        if self.buckets[0].is_empty() {
            self.lowest = 1;
        }
        e
    }

    fn peek_time(&mut self) -> Option<Time> {
        if self.len == 0 {
            return None;
        }
        if let Some(e) = self.buckets[0].last() {
            return Some(e.time);
        }
        let mut i = self.lowest.max(1);
        while self.buckets[i].is_empty() {
            i += 1;
        }
        self.buckets[i].iter().map(|e| e.time).min()
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
            assert!((w[0].0, w[0].1) < (w[1].0, w[1].1), "not ordered by (time, seq)");
        }
    }
}
