//! Pending-event sets behind one narrow interface.
//!
//! Entries are ordered by `(time, seq)`: `seq` is a run-wide insertion counter, so events
//! at the same time fire first-in first-out and the order never depends on the
//! implementation. Two implementations are provided; `bench` measures both and the faster
//! one is [`DefaultQueue`].

use super::Event;
use crate::time::Time;
use std::cell::Cell;
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
    /// The `(time, seq)` key as one number, time above sequence.
    #[inline]
    pub(crate) fn key(&self) -> u128 {
        key_of(self.time, self.seq)
    }
}

/// A `(time, seq)` key as one number, time above sequence.
#[inline(always)]
pub(crate) fn key_of(time: Time, seq: u64) -> u128 {
    (u128::from(time) << 64) | u128::from(seq)
}

thread_local! {
    /// Bytes that one store of pending events may grow to on this thread.
    static GROWTH_LIMIT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Sets the most bytes one store of pending events (a vector, the far-future heap, a
/// scheduler list) may grow to on this thread, or lifts the limit (`None`). With a
/// limit, growing beyond it fails exactly as when the allocator has no memory left:
/// tests use it to reach the out-of-memory path of a run without exhausting the machine.
pub fn set_event_memory_limit(bytes: Option<usize>) {
    GROWTH_LIMIT.with(|g| g.set(bytes.unwrap_or(usize::MAX)));
}

/// A store that can grow without aborting the process when memory runs out.
pub(crate) trait Growable {
    /// Items held.
    fn held(&self) -> usize;
    /// Items it can hold without growing.
    fn room(&self) -> usize;
    /// Bytes one item takes.
    fn item_bytes(&self) -> usize;
    /// Grows to hold at least `items` in all; false when the memory cannot be had.
    fn try_grow_to(&mut self, items: usize) -> bool;
}

/// [`Growable`] for a standard collection with `len`, `capacity` and `try_reserve_exact`.
macro_rules! growable_collection {
    ($($t:tt)*) => {
        $($t)* {
            #[inline(always)]
            fn held(&self) -> usize {
                self.len()
            }
            #[inline(always)]
            fn room(&self) -> usize {
                self.capacity()
            }
            fn item_bytes(&self) -> usize {
                std::mem::size_of::<T>()
            }
            fn try_grow_to(&mut self, items: usize) -> bool {
                self.try_reserve_exact(items - self.len()).is_ok()
            }
        }
    };
}

growable_collection!(impl<T> Growable for Vec<T>);
growable_collection!(impl<T: Ord> Growable for BinaryHeap<T>);

impl Growable for std::collections::HashSet<u64> {
    #[inline(always)]
    fn held(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn room(&self) -> usize {
        self.capacity()
    }
    fn item_bytes(&self) -> usize {
        // A key and its control byte; the table keeps an eighth of its slots free.
        9 * 8 / 7
    }
    fn try_grow_to(&mut self, items: usize) -> bool {
        self.try_reserve(items - self.len()).is_ok()
    }
}

/// Makes room in `store` for `n` more items: nothing to do while it has room; when it is
/// full it doubles (at least to 16 items) with a fallible reservation. False, with the
/// failure noted for the run ([`crate::metrics::note_growth_failure`], which stops it
/// with a catchable error), when the memory cannot be had; the caller then drops what it
/// was storing, since the run is over. `pending` is what the message reports as the
/// number of events pending in the structure.
#[inline(always)]
pub(crate) fn make_room<G: Growable>(store: &mut G, n: usize, pending: usize) -> bool {
    store.room() - store.held() >= n || grow(store, n, pending)
}

#[cold]
#[inline(never)]
fn grow<G: Growable>(store: &mut G, n: usize, pending: usize) -> bool {
    let want = store
        .held()
        .checked_add(n)
        .map(|m| m.max(2 * store.room()).max(16));
    let fits = want
        .and_then(|w| w.checked_mul(store.item_bytes()))
        .is_some_and(|b| b <= GROWTH_LIMIT.with(Cell::get));
    if fits && want.is_some_and(|w| store.try_grow_to(w)) {
        return true;
    }
    crate::metrics::note_growth_failure(format!(
        "out of memory: the event queue could not grow beyond {pending} pending events"
    ));
    false
}

/// A priority queue of events, smallest `(time, seq)` first.
pub trait EventQueue {
    /// Inserts an entry. Its key must not be smaller than the key of the last entry popped
    /// (simulated time never goes backwards); implementations may rely on this, but not
    /// on keys being at least the last one *peeked* at: the scheduler peeks, then may
    /// serve an event held outside the queue whose handler pushes an earlier entry.
    /// When the memory to hold it cannot be had, the entry is dropped and the failure
    /// noted for the run (see `make_room`): the run stops with an error.
    fn push(&mut self, e: Entry);
    /// Removes and returns the entry with the smallest key.
    fn pop(&mut self) -> Option<Entry>;
    /// The time of the next entry, if any.
    fn peek_time(&mut self) -> Option<Time>;
    /// The `(time, seq)` key of the next entry, if any.
    fn peek_key(&mut self) -> Option<(Time, u64)>;
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
        let n = self.heap.len();
        if make_room(&mut self.heap, 1, n) {
            self.heap.push(HeapItem(e));
        }
    }
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        self.heap.pop().map(|h| h.0)
    }
    #[inline]
    fn peek_time(&mut self) -> Option<Time> {
        self.heap.peek().map(|h| h.0.time)
    }
    #[inline]
    fn peek_key(&mut self) -> Option<(Time, u64)> {
        self.heap.peek().map(|h| (h.0.time, h.0.seq))
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
        self.peek_key().map(|k| k.0)
    }

    /// Finds the next entry without refilling: a refill moves `last` to the next time,
    /// and an entry pushed after the peek may be earlier (see [`EventQueue::push`]).
    fn peek_key(&mut self) -> Option<(Time, u64)> {
        if let Some(e) = self.b0.last().or(self.b0_new.first()) {
            return Some((e.time, e.seq));
        }
        if self.len == 0 {
            return None;
        }
        let i = self.mask.trailing_zeros() as usize;
        self.buckets[i].iter().map(|e| (e.time, e.seq)).min()
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// Entries above which the drained vector of the slot being served is freed rather than
/// kept.
const SHRINK_ABOVE: usize = 4096;

/// No chunk: the end of a slot's list or of the free list.
const NIL: u32 = u32::MAX;

/// Entries a wheel slot holds in place.
const IN_SLOT: usize = 4;

/// Entries per overflow chunk of a wheel slot.
const CHUNK: usize = 16;

/// A wheel slot: up to [`IN_SLOT`] entries in place, then a list of overflow chunks.
#[derive(Clone, Copy)]
struct Slot {
    e: [Entry; IN_SLOT],
    len: u32,
    /// The overflow chunk being filled (the head of the slot's list), or [`NIL`].
    next: u32,
}

/// Up to [`CHUNK`] entries of a crowded wheel slot, linked to the slot's next chunk (or
/// to the next free chunk).
#[derive(Clone, Copy)]
struct Chunk {
    e: [Entry; CHUNK],
    len: u32,
    next: u32,
}

impl Slot {
    const EMPTY: Slot = Slot {
        e: [Entry {
            time: 0,
            seq: 0,
            event: Event {
                target: super::Target::Port(0),
                kind: 0,
            },
        }; IN_SLOT],
        len: 0,
        next: NIL,
    };
}

/// A timing wheel for the near future over a binary heap for the far future.
///
/// Time is cut into slots of `2^slot_bits` picoseconds; the wheel holds the `2^wheel_bits`
/// slots from the current one on (about 69 ms with the defaults: 16.8 us slots, 4096 of
/// them), each an unsorted list of small chunks of entries drawn from one shared chunk
/// array, with a bitmap of non-empty slots. Events further ahead wait in a [`BinaryHeapQueue`]
/// and move into the wheel as it turns. The slot being served is copied out and sorted
/// once by `(time, seq)` when it becomes current, so order — including first-in
/// first-out ties — is exactly that of the other queues; in a typical network run a slot
/// holds a handful of events, so a hold costs a few memory operations.
///
/// The shared chunk array (with a free list) makes the wheel's memory follow the number
/// of pending events, not the history of every slot: a vector per slot kept the largest
/// capacity that slot had ever needed, so over a long run more slots met a larger burst
/// and the heap grew (see `bench/README.md`, "Memory over a long run"). Chunks rather
/// than single entries keep a crowded slot's entries mostly contiguous.
pub struct WheelQueue {
    /// Each slot's first entries, in place; `next` heads its list of overflow chunks.
    slots: Vec<Slot>,
    /// Overflow chunks of every slot's list and the free list.
    chunks: Vec<Chunk>,
    /// Head of the free list, or [`NIL`].
    free: u32,
    /// Bit i of word w set when slot 64w + i is non-empty.
    bitmap: Vec<u64>,
    slot_bits: u32,
    mask: u64,
    /// Absolute slot number of the slot being served.
    cur: u64,
    /// The slot being served, sorted by increasing (time, seq) from `head` on: the next
    /// entry is `current[head]`. Events scheduled for the current slot, usually later than
    /// everything in it (the same instant, a larger sequence number), are appended, so a
    /// burst of events at one instant costs no shifting.
    current: Vec<Entry>,
    /// Index of the next entry of `current`.
    head: usize,
    /// Events beyond the window. Not a radix heap: a push there may precede an entry
    /// already peeked at, which a radix heap does not allow.
    far: BinaryHeapQueue,
    len: usize,
}

impl Default for WheelQueue {
    fn default() -> Self {
        Self::new(24, 12)
    }
}

impl WheelQueue {
    /// A wheel of `2^wheel_bits` slots of `2^slot_bits` picoseconds each.
    pub fn new(slot_bits: u32, wheel_bits: u32) -> Self {
        let n = 1usize << wheel_bits;
        WheelQueue {
            slots: vec![Slot::EMPTY; n],
            chunks: Vec::new(),
            free: NIL,
            bitmap: vec![0; n.div_ceil(64)],
            slot_bits,
            mask: n as u64 - 1,
            cur: 0,
            current: Vec::new(),
            head: 0,
            far: BinaryHeapQueue::new(),
            len: 0,
        }
    }

    /// Adds `e` to slot `i`: in place while there is room, else to the slot's first
    /// overflow chunk, else to a new one. False (`e` dropped) when a new chunk cannot be
    /// had (see `make_room`).
    #[inline]
    fn link(&mut self, i: usize, e: Entry) -> bool {
        self.bitmap[i >> 6] |= 1 << (i & 63);
        let slot = &mut self.slots[i];
        if (slot.len as usize) < IN_SLOT {
            slot.e[slot.len as usize] = e;
            slot.len += 1;
            return true;
        }
        let h = slot.next;
        if h != NIL {
            let c = &mut self.chunks[h as usize];
            if (c.len as usize) < CHUNK {
                c.e[c.len as usize] = e;
                c.len += 1;
                return true;
            }
        }
        let n = if self.free != NIL {
            // Reuse a free chunk, writing only what is read back.
            let n = self.free;
            let c = &mut self.chunks[n as usize];
            self.free = c.next;
            c.e[0] = e;
            c.len = 1;
            c.next = h;
            n
        } else {
            let n = u32::try_from(self.chunks.len())
                .ok()
                .filter(|&n| n != NIL)
                .expect("fewer than 2^32 - 1 chunks of pending events in the wheel");
            if !make_room(&mut self.chunks, 1, self.len) {
                return false; // the slot is full in place: its bit stays right
            }
            self.chunks.push(Chunk {
                e: [e; CHUNK],
                len: 1,
                next: h,
            });
            n
        };
        self.slots[i].next = n;
        true
    }

    #[inline]
    fn key(e: &Entry) -> (Time, u64) {
        (e.time, e.seq)
    }

    /// Stores `e` where it belongs; false (`e` dropped) when memory for it cannot be had.
    #[inline]
    fn place(&mut self, e: Entry) -> bool {
        let abs = e.time >> self.slot_bits;
        if abs <= self.cur {
            // Into the slot being served, keeping it sorted (increasing). An entry of an
            // earlier slot (pushed after a peek moved `cur` ahead) is earlier than all of
            // them and goes first.
            let k = Self::key(&e);
            let pos = self.head + self.current[self.head..].partition_point(|x| Self::key(x) < k);
            if pos == self.head && self.head > 0 {
                // Next of all: into the place of the entry popped last, shifting nothing
                // (an entry pushed back at once, such as the rest of a scheduler run).
                self.head -= 1;
                self.current[self.head] = e;
            } else {
                if !make_room(&mut self.current, 1, self.len) {
                    return false;
                }
                self.current.insert(pos, e);
            }
            true
        } else if abs - self.cur <= self.mask {
            let i = (abs & self.mask) as usize;
            self.link(i, e)
        } else {
            let n = self.far.len();
            self.far.push(e);
            self.far.len() > n
        }
    }

    /// Makes the next non-empty slot current. Requires `current` served. Entries for
    /// which memory cannot be had on the way are dropped (and no longer counted): with
    /// `len` down to 0, `current` stays empty.
    fn advance(&mut self) {
        loop {
            if self.len == 0 {
                self.current.clear();
                self.head = 0;
                return;
            }
            // Bring far events that now fall inside the window into the wheel.
            let horizon = self.cur + self.mask;
            while let Some(t) = self.far.peek_time() {
                if t >> self.slot_bits > horizon {
                    break;
                }
                let e = self.far.pop().expect("peeked");
                let abs = e.time >> self.slot_bits;
                let i = (abs & self.mask) as usize;
                if !self.link(i, e) {
                    self.len -= 1;
                }
            }
            if let Some(next) = self.next_occupied() {
                let i = (next & self.mask) as usize;
                self.cur = next;
                self.bitmap[i >> 6] &= !(1 << (i & 63));
                // Give back an exceptionally large vector (a burst of events at one
                // instant, such as every agent's start) rather than keep it for the rest
                // of the run.
                self.current.clear();
                self.head = 0;
                if self.current.capacity() > SHRINK_ABOVE {
                    self.current = Vec::new();
                }
                // Copy slot i's entries out and hand its overflow chunks to the free
                // list (entry by entry: a chunk is small, and a copy of a slice would
                // call `memmove`).
                // Room is asked for first, for the entries in place and for each chunk
                // (see `make_room`).
                let slot = &mut self.slots[i];
                let k = slot.len as usize;
                if make_room(&mut self.current, k, self.len) {
                    for e in &slot.e[..k] {
                        self.current.push(*e);
                    }
                } else {
                    self.len -= k;
                }
                slot.len = 0;
                let first = std::mem::replace(&mut slot.next, NIL);
                let mut n = first;
                let mut last = NIL;
                while n != NIL {
                    let c = &self.chunks[n as usize];
                    let k = c.len as usize;
                    if make_room(&mut self.current, k, self.len) {
                        for e in &c.e[..k] {
                            self.current.push(*e);
                        }
                    } else {
                        self.len -= k;
                    }
                    last = n;
                    n = self.chunks[n as usize].next;
                }
                if last != NIL {
                    self.chunks[last as usize].next = self.free;
                    self.free = first;
                }
                if self.current.len() > 1 {
                    self.current.sort_unstable_by_key(Self::key);
                }
                if self.current.is_empty() {
                    continue; // every entry of the slot was dropped
                }
                return;
            }
            // The wheel is empty: jump to just before the far future's first slot (the
            // scan starts one slot after `cur`).
            let t = self
                .far
                .peek_time()
                .expect("len > 0 means something is queued");
            self.cur = (t >> self.slot_bits) - 1;
        }
    }

    /// Absolute number of the first non-empty slot at or after `cur + 1` in the window.
    fn next_occupied(&self) -> Option<u64> {
        let n = self.slots.len();
        let start = ((self.cur + 1) & self.mask) as usize;
        let words = self.bitmap.len();
        // Scan from `start` to the end, then wrap to the beginning.
        let mut w = start >> 6;
        let mut bits = self.bitmap[w] & (!0u64 << (start & 63));
        for _ in 0..=words {
            if bits != 0 {
                let i = (w << 6) + bits.trailing_zeros() as usize;
                let dist = (i + n - start) % n;
                return Some(self.cur + 1 + dist as u64);
            }
            w = (w + 1) % words;
            bits = self.bitmap[w];
        }
        None
    }
}

impl EventQueue for WheelQueue {
    // Always inlined: with the fallible growth the compiler left it out of line
    // (measured: +0.7 % instructions on the TCP benchmark).
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        self.len += 1;
        if !self.place(e) {
            self.len -= 1;
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        if self.len == 0 {
            return None;
        }
        if self.head == self.current.len() {
            self.advance();
        }
        let e = *self.current.get(self.head)?;
        self.len -= 1;
        self.head += 1;
        Some(e)
    }

    fn peek_time(&mut self) -> Option<Time> {
        self.peek_key().map(|k| k.0)
    }

    #[inline]
    fn peek_key(&mut self) -> Option<(Time, u64)> {
        if self.len == 0 {
            return None;
        }
        if self.head == self.current.len() {
            self.advance();
        }
        let e = self.current.get(self.head)?;
        Some((e.time, e.seq))
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// The event queue used by [`crate::engine::Scheduler`] unless another is chosen;
/// picked by `bench` (see `bench/README.md`).
pub type DefaultQueue = WheelQueue;

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
    fn implementations_agree_on_wide_increments() {
        // Exponential increments spanning many wheel turns, plus ties, zero delays and
        // far-future jumps.
        let mut r = Rng::from_seed(11);
        let mut ops: Vec<(bool, u64)> = Vec::new();
        for _ in 0..50_000 {
            let d = match r.below(6) {
                0 => 0,
                1 => r.below(3) * (1 << 24),
                2 => r.exp(20e9) as u64,
                3 => r.exp(5e12) as u64,
                _ => r.exp(1e8) as u64,
            };
            ops.push((r.uniform() < 0.52, d));
        }
        let a = drain(&mut BinaryHeapQueue::new(), &ops);
        assert_eq!(a, drain(&mut RadixHeapQueue::new(), &ops));
        assert_eq!(a, drain(&mut WheelQueue::default(), &ops));
        assert_eq!(a, drain(&mut WheelQueue::new(10, 3), &ops));
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
        // Small slots and a small wheel exercise the far heap and wrap-around.
        let c = drain(&mut WheelQueue::new(8, 4), &ops);
        assert_eq!(a, c);
        let d = drain(&mut WheelQueue::default(), &ops);
        assert_eq!(a, d);
        for w in a.windows(2) {
            assert!(
                (w[0].0, w[0].1) < (w[1].0, w[1].1),
                "not ordered by (time, seq)"
            );
        }
    }

    /// A wheel that cannot grow drops what it cannot hold, keeps its count of what it
    /// holds exact and hands that out in order; the failure is noted for the run.
    #[test]
    fn a_wheel_that_cannot_grow_drops_and_keeps_count() {
        crate::metrics::take_growth_failure();
        // Small slots, so entries go to the slots, their chunks and the far heap.
        let mut q = WheelQueue::new(4, 3);
        set_event_memory_limit(Some(2 * CHUNK * std::mem::size_of::<Chunk>()));
        let mut r = Rng::from_seed(7);
        let mut pushed = 0;
        for seq in 0..5000 {
            q.push(Entry {
                time: r.below(4000),
                seq,
                event: Event::new(Target::Agent(0), 0),
            });
            pushed += 1;
        }
        let held = q.len();
        let mut out = vec![];
        while let Some(e) = q.pop() {
            out.push((e.time, e.seq));
        }
        set_event_memory_limit(None);
        assert!(held < pushed, "the limit was never reached");
        assert_eq!(out.len(), held);
        assert!(out.windows(2).all(|w| w[0] < w[1]), "not in key order");
        let why = crate::metrics::take_growth_failure().expect("the failure is noted");
        assert!(
            why.starts_with("out of memory: the event queue could not grow"),
            "{why}"
        );
    }

    #[test]
    fn wheel_memory_follows_pending_events_not_history() {
        // Bursts of 1000 events into one slot, each burst drained before the next lands in
        // another slot: the overflow chunks are reused, so their number stays that of one
        // burst however many bursts pass (a vector per slot would keep one burst's worth in
        // every slot the bursts visited).
        let mut q = WheelQueue::new(10, 6);
        let mut seq = 0;
        let mut now = 0;
        let mut peak = 0;
        for burst in 0..200u64 {
            let t = now + 1 + (burst % 60) * 1024;
            for _ in 0..1000 {
                q.push(Entry {
                    time: t,
                    seq,
                    event: Event::new(Target::Agent(0), 0),
                });
                seq += 1;
            }
            let mut last = 0;
            while let Some(e) = q.pop() {
                assert!(e.seq >= last, "first-in first-out at one instant");
                last = e.seq;
                now = e.time;
            }
            peak = peak.max(q.chunks.len());
        }
        assert_eq!(peak, (1000 - IN_SLOT).div_ceil(CHUNK));
    }
}
