//! The discrete-event engine: events, the scheduler and timer cancellation.
//!
//! An event is a small `Copy` value — a [`Target`] (which component) and a `kind` word
//! whose meaning belongs to that component. Packets never travel inside events: links
//! keep their in-flight packets in FIFO order and an event only says "the head arrives".
//! That keeps an event at 16 bytes and the hot path free of allocation.

pub mod queue;

pub use queue::{
    set_event_memory_limit, BinaryHeapQueue, DefaultQueue, Entry, EventQueue, RadixHeapQueue,
    WheelQueue,
};

use queue::make_room;

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
    /// A run of same-time events for many agents, kept compactly inside the scheduler
    /// ([`Scheduler::at_agent_in_run`]); never handed out: the scheduler hands out the
    /// run's events one by one, as [`Target::Agent`] events.
    Run(u32),
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
    /// Sequence number of the event being run.
    cur: u64,
    cancelled: HashSet<u64>,
    processed: u64,
    /// Runs of same-time agent events with consecutive sequence numbers; each pending run
    /// has one queue entry, for its next event.
    runs: Vec<Run>,
    /// Link-arrival events held beside the queue (at most [`LANES`]), sorted by
    /// decreasing `(time, seq)`: the next one is last. See [`Scheduler::arrival_at`].
    lanes: Held,
    /// Events whose times came in order, in lists beside the queue (see
    /// [`Scheduler::at`]); each list is sorted by `(time, seq)` by construction.
    fifos: [Ring; FIFOS],
}

/// A first-in first-out list of entries in a ring of power-of-two size.
#[derive(Default)]
struct Ring {
    buf: Vec<Entry>,
    head: usize,
    len: usize,
    /// The time of the last entry pushed.
    last: Time,
    /// Twice as far ahead of the clock as the last entry was when it was pushed.
    reach: Time,
}

impl Ring {
    #[inline]
    fn front(&self) -> Option<&Entry> {
        (self.len > 0).then(|| &self.buf[self.head])
    }

    /// True when an event at `time`, `lead` ahead of the clock, may join as far as order
    /// and distance go: the last event pushed is not later, and the new one is at most
    /// twice as far ahead as that one was (see [`Scheduler::at`]). An emptied ring still
    /// answers for its last event, which does no harm: it may take any event.
    #[inline]
    fn takes(&self, time: Time, lead: Time) -> bool {
        self.last <= time && lead <= self.reach
    }

    /// Appends an entry; drops it when the ring cannot grow (see [`queue::make_room`]).
    #[inline]
    fn push_back(&mut self, time: Time, seq: u64, event: Event, lead: Time) {
        if self.len == self.buf.len() && !self.grow() {
            return;
        }
        // Field by field: an entry built whole on the stack is read back before its parts
        // are stored (a stall per event).
        let i = (self.head + self.len) & (self.buf.len() - 1);
        let x = &mut self.buf[i];
        x.time = time;
        x.seq = seq;
        x.event = event;
        self.len += 1;
        self.last = time;
        self.reach = lead.saturating_mul(2);
    }

    #[inline]
    fn pop_front(&mut self) -> Option<Entry> {
        if self.len == 0 {
            return None;
        }
        let e = self.buf[self.head];
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(e)
    }

    /// Doubles the ring (at least 16 entries), entries in order from index 0; false
    /// (nothing changed) when the memory cannot be had.
    #[cold]
    fn grow(&mut self) -> bool {
        let cap = (2 * self.buf.len()).max(16);
        let mut buf = Vec::new();
        if !make_room(&mut buf, cap, self.len) {
            return false;
        }
        let n = self.buf.len();
        for i in 0..self.len {
            buf.push(self.buf[(self.head + i) & (n - 1)]);
        }
        buf.resize(cap, Held::EMPTY);
        self.buf = buf;
        self.head = 0;
        true
    }
}

/// How many events an in-order list holds at most (2 MiB); further ones go to the queue.
/// The queue keeps the storage it grew once, so with a million timers that all came in
/// order, unbounded lists would hold a second copy of what the queue held at the start
/// (measured: 231 MiB instead of 177 MiB for a million running flows).
pub const RING_MAX: usize = 1 << 16;

/// The most events an in-order list that takes no more gives to the queue to start
/// again with a new one (see [`Scheduler::at`]).
pub const EVICT_MAX: usize = 16;

/// How many in-order lists of events the scheduler keeps beside its queue (see
/// [`Scheduler::at`]). Two: a third cost 1-4 % more instructions on the studies' runs
/// and the reference (measured with callgrind, `bench/README.md`).
pub const FIFOS: usize = 2;

/// Up to [`LANES`] entries sorted by decreasing `(time, seq)`, in place.
struct Held {
    e: [Entry; LANES],
    n: usize,
}

impl Held {
    const EMPTY: Entry = Entry {
        time: 0,
        seq: 0,
        event: Event {
            target: Target::Port(0),
            kind: 0,
        },
    };

    /// The entry with the smallest key.
    #[inline]
    fn last(&self) -> Option<&Entry> {
        self.n.checked_sub(1).map(|i| &self.e[i])
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        let i = self.n.checked_sub(1)?;
        self.n = i;
        Some(self.e[i])
    }

    /// Inserts the arrival of `link`'s head at `time` with `seq` in order; false (and
    /// nothing done) when full.
    #[inline]
    fn insert_arrival(&mut self, time: Time, seq: u64, link: u32, kind: u32) -> bool {
        if self.n >= LANES {
            return false;
        }
        // Shift the entries earlier than the new one up by one.
        let mut i = self.n;
        while i > 0 && (self.e[i - 1].time, self.e[i - 1].seq) < (time, seq) {
            self.e[i] = self.e[i - 1];
            i -= 1;
        }
        // Field by field: an entry built whole on the stack and copied is read back
        // before its parts are stored (measured: a stall on every arrival).
        let x = &mut self.e[i];
        x.time = time;
        x.seq = seq;
        x.event.target = Target::LinkArrival(link);
        x.event.kind = kind;
        self.n += 1;
        true
    }
}

/// How many link-arrival events the scheduler holds beside its queue.
pub const LANES: usize = 16;

/// Events of one kind at one time for a list of agents, with consecutive sequence
/// numbers from `first_seq`: 4 bytes per event instead of a queue entry each.
struct Run {
    time: Time,
    first_seq: u64,
    kind: u32,
    agents: Vec<u32>,
    /// Index of the next event to hand out.
    next: usize,
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
            cur: 0,
            cancelled: HashSet::new(),
            processed: 0,
            runs: Vec::new(),
            lanes: Held {
                e: [Held::EMPTY; LANES],
                n: 0,
            },
            fifos: Default::default(),
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
        self.queue.len() + self.lanes.n + self.fifos.iter().map(|f| f.len).sum::<usize>()
    }

    /// Schedules `event` at absolute time `at` (clamped to now: never in the past).
    ///
    /// An event not earlier than the last one of an in-order list, and at most twice as
    /// far ahead of the clock as that one was, joins that list instead of the queue (of
    /// two such lists, the one whose last event is latest): its sequence number is larger
    /// than any before it, so the list stays sorted, and the scheduler serves the
    /// smallest `(time, seq)` of the lists, the held arrivals and the queue. Timers
    /// re-armed by a constant period (every CBR or on-off source while on) come in order
    /// and never touch the queue; a list costs a few instructions per event where the
    /// queue costs about a hundred. Other events go to a short list emptied into the
    /// queue for them, or to the queue. Order and ids are exactly those of the queue.
    #[inline]
    pub fn at(&mut self, at: Time, event: Event) -> EventId {
        let time = at.max(self.now);
        let seq = self.seq;
        self.seq += 1;
        // The distance rule keeps a timer far ahead (the end of a silence, a timeout,
        // the end of the warm-up) out of the list the periodic ones use: there it would
        // close the list to them until it fired. On a tie of last times, the first list.
        // Which list holds an event changes only the cost, never the order.
        let lead = time - self.now;
        // The list that takes it whose last event is latest (the first on a tie).
        let mut i = FIFOS;
        let mut last = 0;
        for (j, f) in self.fifos.iter().enumerate() {
            if f.takes(time, lead) && (i == FIFOS || f.last > last) {
                i = j;
                last = f.last;
            }
        }
        if i < FIFOS && self.fifos[i].len < RING_MAX {
            self.fifos[i].push_back(time, seq, event, lead);
        } else {
            self.at_no_list(time, seq, event, lead);
        }
        EventId(seq)
    }

    /// [`Scheduler::at`] when no in-order list takes the event: the shorter list (the
    /// second on a tie, which leaves a single periodic stream in the first, the one the
    /// scheduler reads first), if it holds at most [`EVICT_MAX`] events, gives them to
    /// the queue and starts with this one; else the queue takes it. An event moves from
    /// a list to the queue at most once, so this costs at most one more queue insertion
    /// per event, and a list blocked by a few events far ahead is soon freed.
    #[cold]
    #[inline(never)]
    fn at_no_list(&mut self, time: Time, seq: u64, event: Event, lead: Time) {
        // The shortest list (the last one on a tie).
        let mut i = 0;
        for (j, f) in self.fifos.iter().enumerate().skip(1) {
            if f.len <= self.fifos[i].len {
                i = j;
            }
        }
        let r = &mut self.fifos[i];
        if r.len > EVICT_MAX {
            self.queue.push(Entry { time, seq, event });
            return;
        }
        while let Some(e) = r.pop_front() {
            self.queue.push(e);
        }
        r.push_back(time, seq, event, lead);
    }

    /// Schedules `event` at `time` (not before now) under `seq`, a number drawn earlier
    /// with [`Scheduler::draw`] for it: ordered among events at that instant as if it
    /// had been scheduled when the number was drawn.
    pub fn at_with_seq(&mut self, time: Time, seq: u64, event: Event) {
        debug_assert!(time >= self.now && seq < self.seq);
        self.queue.push(Entry { time, seq, event });
    }

    /// Schedules the arrival of the head of `link`'s in-flight list at `at`, ordered among
    /// events at that instant by `tie`, its packet's [`crate::packet::Packet::tie`]: the
    /// number drawn when the packet entered the network, so an arrival's place never
    /// depends on when its event was scheduled (which lets the network account a
    /// packet's later hops before they happen). While fewer than [`LANES`] arrivals are
    /// pending it is held beside the queue, in a short sorted list. A link has at most
    /// one arrival pending (its head's), so in a network of a few links every arrival
    /// skips the queue, which costs more per event than the list.
    #[inline]
    /// Returns the number it was ordered by (`tie`, or a new one for a hop of zero length).
    /// `kind` travels with the event (the network's count of the link's withdrawn heads).
    pub fn arrival_at(&mut self, at: Time, tie: u64, link: u32, kind: u32) -> u64 {
        let time = at.max(self.now);
        // An arrival at this very instant (a hop of zero length) whose packet entered the
        // network before the running event was scheduled would sort before that event:
        // it is ordered as scheduled now instead, so keys never go back.
        let seq = if time == self.now && tie < self.cur {
            self.draw()
        } else {
            tie
        };
        if !self.lanes.insert_arrival(time, seq, link, kind) {
            self.queue.push(Entry {
                time,
                seq,
                event: Event::new(Target::LinkArrival(link), kind),
            });
        }
        seq
    }

    /// A number from the sequence that orders events at one instant, for a packet
    /// entering the network ([`crate::packet::Packet::tie`]).
    #[inline]
    pub fn draw(&mut self) -> u64 {
        let s = self.seq;
        self.seq += 1;
        s
    }

    /// Schedules `kind` for agent `agent` at `at`, exactly as
    /// `at(at, Event::new(Target::Agent(agent), kind))` would — same sequence number, same
    /// order — but an event that directly follows another one of the same kind and time
    /// scheduled this way joins it in a run, stored as 4 bytes instead of a queue entry.
    /// The event loop hands a run's entry to [`Scheduler::next_of_run`]. Such an event
    /// cannot be cancelled (no id is returned).
    /// A builder adding a million sources schedules their starts in one run; with an
    /// entry each, those starts alone doubled the event memory of an idle flow.
    pub fn at_agent_in_run(&mut self, at: Time, agent: u32, kind: u32) {
        let time = at.max(self.now);
        let seq = self.seq;
        self.seq += 1;
        if let Some(r) = self.runs.last_mut() {
            let open = r.next < r.agents.len();
            if open
                && r.time == time
                && r.kind == kind
                && r.first_seq + r.agents.len() as u64 == seq
            {
                let n = r.agents.len();
                if make_room(&mut r.agents, 1, n) {
                    r.agents.push(agent);
                }
                return;
            }
        }
        let id = u32::try_from(self.runs.len()).expect("fewer than 2^32 runs pending");
        let n = self.runs.len();
        if !make_room(&mut self.runs, 1, n) {
            return;
        }
        self.runs.push(Run {
            time,
            first_seq: seq,
            kind,
            agents: vec![agent],
            next: 0,
        });
        self.queue.push(Entry {
            time,
            seq,
            event: Event::new(Target::Run(id), kind),
        });
    }

    /// The event a run's entry (just handed out at `time`, target [`Target::Run`]) stands
    /// for: the run's next one, as a [`Target::Agent`] event; the rest of the run goes back
    /// into the queue under the following sequence number. The event loop calls this
    /// when it meets a run's entry; any other event is returned as it is.
    pub fn next_of_run(&mut self, time: Time, ev: Event) -> Event {
        let Target::Run(r) = ev.target else {
            return ev;
        };
        let run = &mut self.runs[r as usize];
        let seq = run.first_seq + run.next as u64;
        self.cur = seq;
        let agent = run.agents[run.next];
        run.next += 1;
        if run.next < run.agents.len() {
            self.queue.push(Entry {
                time,
                seq: seq + 1,
                event: ev,
            });
        } else {
            run.agents = Vec::new();
            // Finished runs at the end are no longer referenced by any entry.
            while self.runs.last().is_some_and(|r| r.next >= r.agents.len()) {
                self.runs.pop();
            }
        }
        Event::new(Target::Agent(agent), ev.kind)
    }

    /// Schedules `event` after `delay`.
    #[inline]
    pub fn after(&mut self, delay: Time, event: Event) -> EventId {
        self.at(self.now.saturating_add(delay), event)
    }

    /// Cancels a pending event; it will be skipped when its time comes. Cancelling an event
    /// that already fired is harmless.
    pub fn cancel(&mut self, id: EventId) {
        let n = self.cancelled.len();
        if id.0 < self.seq && make_room(&mut self.cancelled, 1, n) {
            self.cancelled.insert(id.0);
        }
    }

    /// Time of the next pending event.
    pub fn peek_time(&mut self) -> Option<Time> {
        let held = self.lanes.last().into_iter();
        let listed = self.fifos.iter().filter_map(Ring::front);
        let first = held.chain(listed).map(|e| e.time).min();
        match (self.queue.peek_time(), first) {
            (Some(q), Some(f)) => Some(q.min(f)),
            (q, f) => q.or(f),
        }
    }

    /// Removes the entry with the smallest key, from the queue, the held arrivals or the
    /// in-order lists, unless it is later than `end`.
    #[inline(always)]
    fn take_next(&mut self, end: Time) -> Option<Entry> {
        // Where the smallest key outside the queue is: FIFOS for the held arrivals.
        let mut from = None;
        let mut best = u128::MAX;
        if let Some(l) = self.lanes.last() {
            best = l.key();
            from = Some(FIFOS);
        }
        for (i, f) in self.fifos.iter().enumerate() {
            if let Some(f) = f.front() {
                let k = f.key();
                if k < best {
                    best = k;
                    from = Some(i);
                }
            }
        }
        if let Some(i) = from {
            if self
                .queue
                .peek_key()
                .is_none_or(|(t, s)| best < queue::key_of(t, s))
            {
                if (best >> 64) as Time > end {
                    return None;
                }
                return if i == FIFOS {
                    self.lanes.pop()
                } else {
                    self.fifos[i].pop_front()
                };
            }
        }
        let e = self.queue.pop()?;
        if e.time > end {
            self.queue.push(e);
            return None;
        }
        Some(e)
    }

    /// Removes the next live event and advances the clock to it.
    #[inline]
    pub fn pop_next(&mut self) -> Option<Entry> {
        loop {
            let e = self.take_next(Time::MAX)?;
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
            self.cur = e.seq;
            self.processed += 1;
            return Some(e);
        }
    }

    /// Like [`Scheduler::pop_next`], but leaves events later than `end` pending. Always
    /// inlined: it is the run loop's merge, which the compiler otherwise leaves out of
    /// line in some builds (measured: the Python extension's, 90 instructions per event
    /// out of line).
    #[inline(always)]
    pub fn next_until(&mut self, end: Time) -> Option<Entry> {
        loop {
            let e = self.take_next(end)?;
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
            self.cur = e.seq;
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
        // Everything due by `t` has run.
        self.cur = u64::MAX;
    }

    /// The key (time, sequence number) of the event being run, as one number: what
    /// readers of lazily accounted state settle to. After [`Scheduler::advance_to`], the
    /// key past every event at the current time.
    #[inline]
    pub fn key(&self) -> u128 {
        (u128::from(self.now) << 64) | u128::from(self.cur)
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

    /// Runs of agent events, interleaved with ordinary events (some cancelled), a stop
    /// time inside a run and events pushed at the run's time by its own events, hand out
    /// exactly what the same calls to `at` hand out, in the same order, with the same ids.
    #[test]
    fn runs_hand_out_what_plain_events_would() {
        fn drive<Q: EventQueue>(mut s: Scheduler<Q>, runs: bool) -> Vec<(Time, u64, Target, u32)> {
            let mut rng = crate::rng::Rng::from_seed(5);
            // Events of runs cannot be cancelled: only the ordinary ones are.
            let mut ids = Vec::new();
            for i in 0..3000u32 {
                let t = (i / 700) as u64 * 10;
                match rng.below(10) {
                    0 => ids.push(s.at(t, Event::new(Target::Port(i), 1))),
                    1 => ids.push(s.at(t + 3, Event::new(Target::Agent(i), 7))),
                    _ if runs => s.at_agent_in_run(t, i, 9),
                    _ => {
                        s.at(t, Event::new(Target::Agent(i), 9));
                    }
                }
            }
            for id in ids.iter().step_by(7) {
                s.cancel(*id);
            }
            let mut out = Vec::new();
            // As the event loop does: a run's entry stands for the run's next event.
            while let Some(mut e) = s.next_until(15) {
                e.event = s.next_of_run(e.time, e.event);
                if e.event.kind == 9 && e.seq % 5 == 0 {
                    s.after(0, Event::new(Target::Sampler(e.seq as u32), 2));
                }
                out.push((e.time, e.seq, e.event.target, e.event.kind));
            }
            while let Some(mut e) = s.pop_next() {
                e.event = s.next_of_run(e.time, e.event);
                out.push((e.time, e.seq, e.event.target, e.event.kind));
            }
            assert_eq!(s.pending(), 0);
            out
        }
        let plain = drive(Scheduler::default(), false);
        assert!(plain.len() > 2800);
        assert_eq!(drive(Scheduler::default(), true), plain);
        assert_eq!(
            drive(Scheduler::with_queue(BinaryHeapQueue::new()), true),
            plain
        );
        assert_eq!(
            drive(Scheduler::with_queue(RadixHeapQueue::new()), true),
            plain
        );
        assert!(plain.iter().all(|e| !matches!(e.2, Target::Run(_))));
        assert!(plain.iter().filter(|e| e.3 == 9).count() > 2000);
    }

    /// In-order lists stop at [`RING_MAX`] events; the rest wait in the queue, and the
    /// order is still the keys'.
    #[test]
    fn in_order_lists_are_bounded() {
        let mut s = Scheduler::default();
        let n = 3 * RING_MAX as u64;
        for i in 0..n {
            s.at(10 + i / 3, Event::new(Target::Agent(i as u32), 0));
        }
        assert!(s.fifos.iter().all(|f| f.len <= RING_MAX));
        assert_eq!(s.fifos[0].len, RING_MAX);
        assert_eq!(s.pending() as u64, n);
        let mut last = (0, 0);
        let mut count = 0;
        while let Some(e) = s.pop_next() {
            assert!((e.time, e.seq) > last || count == 0);
            assert_eq!(e.event.target, Target::Agent(e.seq as u32));
            last = (e.time, e.seq);
            count += 1;
        }
        assert_eq!(count, n);
    }

    /// Periodic timers stay in the in-order lists while timers far ahead of them (the
    /// end of a silence, the end of a warm-up) are scheduled among them: under a rule
    /// that let a list take any later event, one far timer in each list would send every
    /// periodic one to the queue until it fired.
    #[test]
    fn a_timer_far_ahead_leaves_the_lists_to_periodic_ones() {
        let mut s = Scheduler::default();
        let mut rng = crate::rng::Rng::from_seed(3);
        let period = 1_000_000;
        let n = 100u32;
        let far = Target::Agent(n);
        s.at(500 * period, Event::new(far, 0));
        for a in 0..n {
            s.at(rng.below(period), Event::new(Target::Agent(a), 0));
        }
        let mut far_pending = 1;
        let mut worst = 0;
        for popped in 0..200 * n {
            let e = s.pop_next().expect("periodic timers never stop");
            if e.event.target == far {
                far_pending -= 1;
                continue;
            }
            s.after(period, e.event);
            if rng.below(20) == 0 {
                s.after(100 * period + rng.below(period), Event::new(far, 0));
                far_pending += 1;
            }
            if popped >= 2 * n {
                // Periodic timers not held in a list.
                let listed = s
                    .fifos
                    .iter()
                    .flat_map(|f| (0..f.len).map(|i| f.buf[(f.head + i) & (f.buf.len() - 1)]))
                    .filter(|e| e.event.target != far)
                    .count();
                worst = worst.max(n as usize - listed);
            }
        }
        assert!(far_pending > 50, "{far_pending} far timers pending");
        assert!(
            worst <= 2 * EVICT_MAX,
            "{worst} periodic timers in the queue"
        );
    }

    /// Whatever holds an event (the queue, the held arrivals, an in-order list), the
    /// scheduler hands out the pending event with the smallest `(time, seq)` every time:
    /// checked against a sorted set of what is pending, on every queue, with more links
    /// than the held list takes, timers re-armed by one period (in order) and by random
    /// delays (out of order), long timers that block a list, handlers that schedule
    /// events earlier than the queue's next one, ties, cancellations and stops.
    #[test]
    fn every_event_comes_out_in_key_order_wherever_it_was_held() {
        use std::collections::BTreeSet;
        fn drive<Q: EventQueue>(mut s: Scheduler<Q>) -> Vec<(Time, u64, Target)> {
            let mut rng = crate::rng::Rng::from_seed(9);
            let links = 3 * LANES as u32;
            // The key of every pending event, as scheduled.
            let mut oracle: BTreeSet<(Time, u64)> = BTreeSet::new();
            // One arrival pending per link at most, as for a link's in-flight head.
            let mut pending = vec![false; links as usize];
            let mut ids = Vec::new();
            let mut entered: Vec<u64> = Vec::new();
            for i in 0..200u32 {
                let t = rng.below(50_000);
                let id = s.at(t, Event::new(Target::Agent(i), 1));
                oracle.insert((t, id.0));
            }
            let mut out = Vec::new();
            let mut end = 0;
            while out.len() < 60_000 {
                end += 1_000_000;
                while let Some(e) = s.next_until(end) {
                    let first = oracle.pop_first().expect("an event was pending");
                    assert_eq!((e.time, e.seq), first, "not the smallest pending key");
                    let now = e.time;
                    if let Target::LinkArrival(l) = e.event.target {
                        pending[l as usize] = false;
                    }
                    let mut scheduled = Vec::new();
                    match rng.below(10) {
                        0..=3 => {
                            let l = rng.below(links as u64) as u32;
                            if !pending[l as usize] {
                                pending[l as usize] = true;
                                let d = if rng.below(4) == 0 {
                                    0
                                } else {
                                    rng.below(3000)
                                };
                                // The packet entered the network now or earlier: its
                                // number was drawn then (kept in `entered`).
                                let tie = match entered.pop() {
                                    Some(t) if rng.below(2) == 0 => t,
                                    _ => s.draw(),
                                };
                                let seq = s.arrival_at(now + d, tie, l, 0);
                                assert!((now + d, seq) > (now, e.seq), "a key went back");
                                oracle.insert((now + d, seq));
                            }
                            if rng.below(3) == 0 {
                                entered.push(s.draw());
                            }
                        }
                        4 => {
                            let d = rng.below(2000);
                            let id = s.after(d, Event::new(Target::Port(7), 2));
                            ids.push((now + d, id));
                            scheduled.push((now + d, id));
                        }
                        5 => {
                            if let Some((t, id)) = ids.pop() {
                                s.cancel(id);
                                oracle.remove(&(t, id.0));
                            }
                        }
                        6 => {
                            let id = s.after(5_000_000, Event::new(Target::Sampler(1), 0));
                            scheduled.push((now + 5_000_000, id));
                        }
                        _ => {}
                    }
                    if let Target::Agent(a) = e.event.target {
                        // Half the agents re-arm by one period, half at random.
                        let d = if a % 2 == 0 {
                            60_000
                        } else {
                            1 + rng.below(60_000)
                        };
                        scheduled.push((now + d, s.after(d, Event::new(Target::Agent(a), 1))));
                    }
                    for (t, id) in scheduled {
                        oracle.insert((t, id.0));
                    }
                    out.push((e.time, e.seq, e.event.target));
                }
            }
            out
        }
        let a = drive(Scheduler::with_queue(BinaryHeapQueue::new()));
        let arrivals = a
            .iter()
            .filter(|e| matches!(e.2, Target::LinkArrival(_)))
            .count();
        assert!(arrivals > 10_000, "{arrivals} arrivals");
        assert_eq!(drive(Scheduler::default()), a);
        assert_eq!(drive(Scheduler::with_queue(WheelQueue::new(6, 3))), a);
        assert_eq!(drive(Scheduler::with_queue(RadixHeapQueue::new())), a);
    }
}
