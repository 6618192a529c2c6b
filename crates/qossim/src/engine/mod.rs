//! The discrete-event engine: events, the scheduler and timer cancellation.
//!
//! An event is a small `Copy` value — a [`Target`] (which component) and a `kind` word
//! whose meaning belongs to that component. Packets never travel inside events: links
//! keep their in-flight packets in FIFO order and an event only says "the head arrives".
//! That keeps an event at 16 bytes and the hot path free of allocation.

pub mod queue;

pub use queue::{BinaryHeapQueue, DefaultQueue, Entry, EventQueue, RadixHeapQueue, WheelQueue};

use crate::time::Time;
use std::collections::HashSet;

/// The component an event is addressed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A link's output port: transmission of the current packet ends, or a rate-limited
    /// queue discipline may send again.
    Port(u32),
    /// A link: the packet at the head of its in-flight list reaches the far end.
    LinkArrival(u32),
    /// An agent (source, sink, controller, generator): a timer it set.
    Agent(u32),
    /// A metric sampler's periodic tick.
    Sampler(u32),
    /// A scheduled world action (failure events, rate changes, ...).
    Action(u32),
    /// A signal (a typed control message) reaching its agent; the id is its mailbox slot.
    Signal(u32),
}

/// A scheduled event: a target and a target-specific kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Who receives it.
    pub target: Target,
    /// What it means to the receiver.
    pub kind: u32,
}

impl Event {
    /// An event for `target` with `kind`.
    #[inline]
    pub fn new(target: Target, kind: u32) -> Self {
        Event { target, kind }
    }
}

/// Handle of a scheduled event, usable to cancel it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId(pub u64);

/// The pending-event set plus the clock.
///
/// Generic over the queue implementation so that a benchmark can swap it; the default is
/// [`DefaultQueue`].
pub struct Scheduler<Q: EventQueue = DefaultQueue> {
    queue: Q,
    now: Time,
    seq: u64,
    cancelled: HashSet<u64>,
    processed: u64,
}

impl Default for Scheduler<DefaultQueue> {
    fn default() -> Self {
        Self::with_queue(DefaultQueue::default())
    }
}

impl<Q: EventQueue> Scheduler<Q> {
    /// A scheduler over a given (empty) queue.
    pub fn with_queue(queue: Q) -> Self {
        Scheduler {
            queue,
            now: 0,
            seq: 0,
            cancelled: HashSet::new(),
            processed: 0,
        }
    }

    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events executed so far (cancelled ones excluded).
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Number of pending events (cancelled ones still counted until they surface).
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Schedules `event` at absolute time `at` (clamped to now: never in the past).
    #[inline]
    pub fn at(&mut self, at: Time, event: Event) -> EventId {
        let time = at.max(self.now);
        let seq = self.seq;
        self.seq += 1;
        self.queue.push(Entry { time, seq, event });
        EventId(seq)
    }

    /// Schedules `event` after `delay`.
    #[inline]
    pub fn after(&mut self, delay: Time, event: Event) -> EventId {
        self.at(self.now.saturating_add(delay), event)
    }

    /// Cancels a pending event; it will be skipped when its time comes. Cancelling an event
    /// that already fired is harmless.
    pub fn cancel(&mut self, id: EventId) {
        if id.0 < self.seq {
            self.cancelled.insert(id.0);
        }
    }

    /// Time of the next pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        self.queue.peek_time()
    }

    /// Removes the next live event and advances the clock to it.
    #[inline]
    pub fn pop_next(&mut self) -> Option<Entry> {
        loop {
            let e = self.queue.pop()?;
            if !self.cancelled.is_empty() && self.cancelled.remove(&e.seq) {
                continue;
            }
            debug_assert!(
                e.time >= self.now,
                "time went backwards: {} after {}",
                e.time,
                self.now
            );
            self.now = e.time;
            self.processed += 1;
            return Some(e);
        }
    }

    /// Like [`Scheduler::pop_next`], but leaves events later than `end` pending.
    #[inline]
    pub fn next_until(&mut self, end: Time) -> Option<Entry> {
        loop {
            let e = self.queue.pop()?;
            if e.time > end {
                self.queue.push(e);
                return None;
            }
            if !self.cancelled.is_empty() && self.cancelled.remove(&e.seq) {
                continue;
            }
            debug_assert!(
                e.time >= self.now,
                "time went backwards: {} after {}",
                e.time,
                self.now
            );
            self.now = e.time;
            self.processed += 1;
            return Some(e);
        }
    }

    /// Advances the clock to `t` without executing anything (used when a run stops at a
    /// time with no event exactly there).
    pub fn advance_to(&mut self, t: Time) {
        if t > self.now {
            self.now = t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancellation_skips_event() {
        let mut s = Scheduler::default();
        let a = s.after(10, Event::new(Target::Agent(1), 1));
        s.after(10, Event::new(Target::Agent(2), 2));
        s.after(5, Event::new(Target::Agent(3), 3));
        s.cancel(a);
        let got: Vec<u32> = std::iter::from_fn(|| s.pop_next().map(|e| e.event.kind)).collect();
        assert_eq!(got, vec![3, 2]);
        assert_eq!(s.now(), 10);
    }

    #[test]
    fn ties_fire_in_insertion_order() {
        let mut s = Scheduler::with_queue(BinaryHeapQueue::new());
        for k in 0..100 {
            s.at(7, Event::new(Target::Agent(0), k));
        }
        let got: Vec<u32> = std::iter::from_fn(|| s.pop_next().map(|e| e.event.kind)).collect();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
    }
}
