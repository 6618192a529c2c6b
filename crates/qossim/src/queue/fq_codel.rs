//! FQ-CoDel, flow queueing with controlled delay (Hoeiland-Joergensen, McKenney, Taht,
//! Gettys and Dumazet; RFC 8290): packets are hashed by flow into sub-queues, each a
//! CoDel queue ([`super::Codel`], the same control law per sub-queue), served by deficit
//! round robin with priority to sub-queues that have just become active.
//!
//! # Classification
//! A packet's sub-queue is `h(flow id) mod flows`, `h` a 64-bit mix (splitmix64) of the
//! flow id with a salt drawn once from the discipline's stream, so which flows collide
//! changes with the seed as with a per-boot perturbation.
//!
//! # Scheduling
//! Active sub-queues are on one of two lists, *new* and *old*, each in order. An arrival
//! to an inactive sub-queue makes it active at the tail of the new list with a deficit
//! of `quantum` bytes. To send, the scheduler looks at the head of the new list (or of
//! the old list when the new one is empty):
//! - a deficit of zero or less earns `quantum` and the sub-queue moves to the tail of the
//!   old list; the scheduler looks again;
//! - otherwise the sub-queue's CoDel takes its next packet (head drops included); a
//!   packet sent costs its size in deficit;
//! - a sub-queue that has nothing to send leaves its list: to the tail of the old list
//!   if it was on the new list and the old list is not empty (so a flow cannot gain
//!   priority by emptying now and then), otherwise it becomes inactive.
//!
//! # Buffer
//! All sub-queues share `limit` packets. An arrival that brings the total above it is
//! kept, and the packet at the head of the sub-queue holding the most bytes is dropped
//! ([`super::DropCause::Overflow`]); one drop per arrival. CoDel's head drops are
//! [`super::DropCause::Early`].
//!
//! # ECN
//! With `ecn = true` every sub-queue's CoDel marks ECN-capable packets CE where its law
//! would drop them (RFC 8290, section 4.1.1, as [`super::Codel`] describes); the
//! shared buffer's overflow drops stay drops.

use super::{Codel, CodelParams, Dequeue, DropLog, Limit, QueueDisc, QueueKind};
use crate::decl::{self, Absent, Bounds, Param, Type, Values};
use crate::metrics::declared::{stat, Stat, Window::AfterWarmup};
use crate::packet::Packet;
use crate::rng::splitmix64;
use crate::scenario::QueueSpec;
use crate::time::Time;
use std::collections::VecDeque;

/// FQ-CoDel's statistics (`link.{link}.` keys of its port's summary).
pub const STATS: &[Stat] = &[
    stat("link.{link}.fq_codel_{early_drops|overflow_drops}", "packets", AfterWarmup, "FQ-CoDel: drops by the sub-queues' CoDel; head drops of the fattest flow when the buffer is full"),
    stat("link.{link}.fq_codel_new_flows", "flows", AfterWarmup, "FQ-CoDel: sub-queues that entered the new-flows list"),
    stat("link.{link}.fq_codel_{sent_new|sent_old}", "packets", AfterWarmup, "FQ-CoDel: packets sent from new and from old flows"),
    stat(
        "link.{link}.fq_codel_ecn_marks",
        "packets",
        AfterWarmup,
        "FQ-CoDel with ecn = true: ECN-capable packets marked CE by the sub-queues' CoDel",
    ),
];

/// FQ-CoDel as scenarios name it (`kind = "fq_codel"`).
pub static FQ_CODEL: QueueKind = QueueKind {
    name: "fq_codel",
    aliases: &[],
    title: "FQ-CoDel",
    doc: "Flow queueing with CoDel (RFC 8290): flows hashed into CoDel sub-queues served by deficit round robin, new flows first.",
    params: &[
        Param::new("limit", Type::PacketLimit, Absent::Is("10240p"), "Buffer shared by the sub-queues; above it the fattest sub-queue loses its head.")
            .unit("p")
            .bounds(Bounds::Positive),
        Param::new("flows", Type::Integer, Absent::Is("1024"), "Number of sub-queues flows are hashed into.")
            .bounds(Bounds::Between(1.0, 65536.0)),
        Param::new("quantum", Type::Size, Absent::Is("1514B"), "Bytes a sub-queue may send per round.")
            .unit("B")
            .bounds(Bounds::PositiveAtMost(1_000_000_000.0)),
        Param::new("target", Type::Time, Absent::Is("5ms"), "CoDel's acceptable standing sojourn time, per sub-queue.")
            .unit("s")
            .bounds(Bounds::Positive),
        Param::new("interval", Type::Time, Absent::Is("100ms"), "CoDel's interval, per sub-queue.")
            .unit("s")
            .bounds(Bounds::PositiveAtMost(1000.0)),
        Param::new("mtu", Type::Size, Absent::Is("1500B"), "A sub-queue of at most this many bytes is never judged standing.")
            .unit("B")
            .bounds(Bounds::PositiveAtMost(u32::MAX as f64)),
        super::codel::ECN,
    ],
    // The CoDel relation: the interval must be longer than the target.
    rules: |v| (super::CODEL.rules)(v),
    spec: |v| QueueSpec::Declared {
        kind: "fq_codel",
        values: v,
    },
    stats: STATS,
    build: |q, env| match q {
        QueueSpec::Declared { values, .. } => Box::new(FqCodel::new(
            FqCodelParams::from_values(values),
            (env.rng)().next_u64(),
        )),
        q => unreachable!("FQ-CoDel asked to build {q:?}"),
    },
};

/// Parameters of an [`FqCodel`] queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCodelParams {
    /// Packets all sub-queues may hold together.
    pub limit: usize,
    /// Number of sub-queues.
    pub flows: usize,
    /// Bytes of deficit a sub-queue earns per round.
    pub quantum: u32,
    /// CoDel's parameters for every sub-queue (its limit is the shared one).
    pub codel: CodelParams,
}

impl FqCodelParams {
    /// Parameters from declared values (every key set).
    pub fn from_values(v: &Values) -> Self {
        FqCodelParams {
            limit: v.count("limit") as usize,
            flows: v.count("flows") as usize,
            quantum: v.count("quantum") as u32,
            codel: CodelParams {
                target: v.time("target"),
                interval: v.time("interval"),
                mtu: v.count("mtu") as u32,
                limit: Limit::Packets(usize::MAX),
                ecn: v.bool("ecn"),
            },
        }
    }

    /// The declared defaults.
    pub fn defaults() -> Self {
        Self::from_values(&decl::defaults(FQ_CODEL.params))
    }

    /// The parameters as declared values.
    pub fn values(&self) -> Values {
        use crate::decl::Value;
        Values(vec![
            ("limit", Value::Packets(self.limit as u64)),
            ("flows", Value::Integer(self.flows as u64)),
            ("quantum", Value::Size(self.quantum as u64)),
            ("target", Value::Time(self.codel.target)),
            ("interval", Value::Time(self.codel.interval)),
            ("mtu", Value::Size(self.codel.mtu as u64)),
            ("ecn", Value::Bool(self.codel.ecn)),
        ])
    }

    /// Checks the parameters against their declaration ([`FQ_CODEL`]).
    pub fn validate(&self) -> Result<(), String> {
        decl::validate(FQ_CODEL.params, &self.values(), FQ_CODEL.rules)
    }
}

/// Which list a sub-queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum On {
    None,
    New,
    Old,
}

struct Sub {
    q: Codel,
    deficit: i64,
    on: On,
}

/// What an [`FqCodel`] queue counted (since the warm-up, once it has ended).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FqCodelCounters {
    /// CoDel head drops over all sub-queues.
    pub early_drops: u64,
    /// Drops from the fattest sub-queue when the buffer was full.
    pub overflow_drops: u64,
    /// Times an inactive sub-queue became active (went on the new list).
    pub new_flows: u64,
    /// Packets sent from a sub-queue on the new list.
    pub sent_new: u64,
    /// Packets sent from a sub-queue on the old list.
    pub sent_old: u64,
    /// ECN-capable packets marked CE instead of dropped (with `ecn`).
    pub ecn_marks: u64,
}

/// An FQ-CoDel queue (see the module documentation).
pub struct FqCodel {
    p: FqCodelParams,
    salt: u64,
    subs: Vec<Option<Box<Sub>>>,
    new: VecDeque<usize>,
    old: VecDeque<usize>,
    len: usize,
    bytes: u64,
    counters: FqCodelCounters,
}

impl FqCodel {
    /// An FQ-CoDel queue with parameters `p` (panics if [`FqCodelParams::validate`]
    /// fails) and hash salt `salt`.
    pub fn new(p: FqCodelParams, salt: u64) -> Self {
        if let Err(e) = p.validate() {
            panic!("FQ-CoDel: {e}");
        }
        FqCodel {
            p,
            salt,
            subs: (0..p.flows).map(|_| None).collect(),
            new: VecDeque::new(),
            old: VecDeque::new(),
            len: 0,
            bytes: 0,
            counters: FqCodelCounters::default(),
        }
    }

    /// The sub-queue of a packet of `flow`.
    pub fn sub_queue_of(&self, flow: u32) -> usize {
        let mut s = self.salt ^ u64::from(flow);
        (splitmix64(&mut s) % self.p.flows as u64) as usize
    }

    /// What the queue counted.
    pub fn counters(&self) -> FqCodelCounters {
        self.counters
    }

    /// Sub-queues on the new and the old list.
    pub fn active(&self) -> (usize, usize) {
        (self.new.len(), self.old.len())
    }

    fn sub(&mut self, i: usize) -> &mut Sub {
        let codel = self.p.codel;
        self.subs[i].get_or_insert_with(|| {
            Box::new(Sub {
                q: Codel::new(codel),
                deficit: 0,
                on: On::None,
            })
        })
    }

    /// Drops the head of the sub-queue holding the most bytes (the first such on a tie,
    /// in list order: new, then old).
    fn drop_from_fattest(&mut self, drops: &mut DropLog) {
        let fattest = self
            .new
            .iter()
            .chain(self.old.iter())
            .copied()
            .max_by_key(|&i| {
                let b = self.subs[i].as_ref().map_or(0, |s| s.q.bytes());
                (b, std::cmp::Reverse(i))
            });
        if let Some(i) = fattest {
            if let Some(pkt) = self.sub(i).q.drop_head_overflow(drops) {
                self.len -= 1;
                self.bytes -= pkt.size as u64;
                self.counters.overflow_drops += 1;
            }
        }
    }
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, pkt: Packet, now: Time, drops: &mut DropLog) {
        let i = self.sub_queue_of(pkt.flow);
        let size = pkt.size as u64;
        let quantum = self.p.quantum as i64;
        let sub = self.sub(i);
        sub.q.enqueue(pkt, now, drops);
        let fresh = sub.on == On::None;
        if fresh {
            sub.on = On::New;
            sub.deficit = quantum;
        }
        if fresh {
            self.new.push_back(i);
            self.counters.new_flows += 1;
        }
        self.len += 1;
        self.bytes += size;
        if self.len > self.p.limit {
            self.drop_from_fattest(drops);
        }
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        self.dequeue_with_drops(now, &mut DropLog::default())
    }
    fn dequeue_with_drops(&mut self, now: Time, drops: &mut DropLog) -> Dequeue {
        let quantum = self.p.quantum as i64;
        loop {
            let (from_new, i) = match (self.new.front(), self.old.front()) {
                (Some(&i), _) => (true, i),
                (None, Some(&i)) => (false, i),
                (None, None) => return Dequeue::Empty,
            };
            let sub = self.sub(i);
            if sub.deficit <= 0 {
                sub.deficit += quantum;
                sub.on = On::Old;
                if from_new {
                    self.new.pop_front();
                } else {
                    self.old.pop_front();
                }
                self.old.push_back(i);
                continue;
            }
            let (len0, bytes0) = (sub.q.len(), sub.q.bytes());
            let early0 = drops.early_total();
            let marks0 = sub.q.counters().ecn_marks;
            let got = sub.q.pull(now, drops);
            let marks1 = sub.q.counters().ecn_marks;
            let (len1, bytes1) = (sub.q.len(), sub.q.bytes());
            self.len -= len0 - len1;
            self.bytes -= bytes0 - bytes1;
            self.counters.early_drops += drops.early_total() - early0;
            self.counters.ecn_marks += marks1 - marks0;
            match got {
                Dequeue::Packet(pkt) => {
                    self.sub(i).deficit -= pkt.size as i64;
                    if from_new {
                        self.counters.sent_new += 1;
                    } else {
                        self.counters.sent_old += 1;
                    }
                    return Dequeue::Packet(pkt);
                }
                Dequeue::Empty => {
                    if from_new {
                        self.new.pop_front();
                    } else {
                        self.old.pop_front();
                    }
                    if from_new && !self.old.is_empty() {
                        self.sub(i).on = On::Old;
                        self.old.push_back(i);
                    } else {
                        self.sub(i).on = On::None;
                    }
                }
                Dequeue::Until(_) => unreachable!("CoDel does not rate-limit"),
            }
        }
    }
    fn len(&self) -> usize {
        self.len
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet)) {
        for s in self.subs.iter().flatten() {
            s.q.for_each_queued(f);
        }
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        let c = &self.counters;
        out.push(("fq_codel_early_drops".into(), c.early_drops as f64));
        out.push(("fq_codel_overflow_drops".into(), c.overflow_drops as f64));
        out.push(("fq_codel_new_flows".into(), c.new_flows as f64));
        out.push(("fq_codel_sent_new".into(), c.sent_new as f64));
        out.push(("fq_codel_sent_old".into(), c.sent_old as f64));
        if self.p.codel.ecn {
            out.push(("fq_codel_ecn_marks".into(), c.ecn_marks as f64));
        }
    }
    fn on_warmup(&mut self, _now: Time) {
        self.counters = FqCodelCounters::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(flow: u32, size: u32) -> Packet {
        let mut p = Packet::of_size(size);
        p.flow = flow;
        p
    }

    /// Two flows in different sub-queues (flow ids picked so they do not collide).
    fn two_flows(q: &FqCodel) -> (u32, u32) {
        let a = 0;
        let b = (1..)
            .find(|&f| q.sub_queue_of(f) != q.sub_queue_of(a))
            .unwrap();
        (a, b)
    }

    fn sent_flow(q: &mut FqCodel) -> u32 {
        match q.dequeue(0) {
            Dequeue::Packet(p) => p.flow,
            d => panic!("{d:?}"),
        }
    }

    /// A backlogged flow and a flow sending one small packet: the small one goes on the
    /// new list and is sent before the backlog's second packet; with equal backlogs the
    /// two flows alternate by quantum (1514 B: one 1500 B packet each per round).
    #[test]
    fn new_flows_go_first_and_backlogs_share_by_quantum() {
        let mut q = FqCodel::new(FqCodelParams::defaults(), 7);
        let mut log = DropLog::default();
        let (a, b) = two_flows(&q);
        for _ in 0..4 {
            q.enqueue(pkt(a, 1500), 0, &mut log);
        }
        assert_eq!(sent_flow(&mut q), a);
        q.enqueue(pkt(b, 100), 0, &mut log);
        // a's deficit is 14 > 0: it sends once more from the new list, then moves to the
        // old list; b is then the head of the new list.
        assert_eq!(sent_flow(&mut q), a);
        assert_eq!(sent_flow(&mut q), b);
        for _ in 0..3 {
            q.enqueue(pkt(b, 1500), 0, &mut log);
        }
        // b, still on the new list with 1414 B of deficit, sends once, then moves to the
        // old list behind a; from there the two alternate one packet per round.
        let order: Vec<u32> = (0..5).map(|_| sent_flow(&mut q)).collect();
        assert_eq!(order, vec![b, a, b, a, b]);
        assert!(q.is_empty());
        assert_eq!(q.bytes(), 0);
    }

    /// The shared limit drops from the head of the fattest sub-queue, not the arrival.
    #[test]
    fn a_full_buffer_drops_from_the_fattest_flow() {
        let p = FqCodelParams {
            limit: 4,
            ..FqCodelParams::defaults()
        };
        let mut q = FqCodel::new(p, 7);
        let mut log = DropLog::default();
        let (a, b) = two_flows(&q);
        for _ in 0..4 {
            q.enqueue(pkt(a, 1500), 0, &mut log);
        }
        q.enqueue(pkt(b, 100), 0, &mut log);
        assert_eq!((q.len(), log.overflow_total()), (4, 1));
        assert_eq!(q.counters().overflow_drops, 1);
        let mut flows = Vec::new();
        q.for_each_queued(&mut |p| flows.push(p.flow));
        assert_eq!(
            flows.iter().filter(|&&f| f == b).count(),
            1,
            "the arrival is kept"
        );
    }

    /// One ECN-capable flow arriving at twice the service rate (every 0.5 ms, served
    /// every 1 ms) for 300 ms: its sub-queue's CoDel decides at 109, 209 and 280 ms (as
    /// CoDel alone does, see its tests); with `ecn` these are marks on packets that are
    /// sent, without it head drops.
    #[test]
    fn with_ecn_the_sub_queues_mark_instead_of_dropping() {
        use crate::packet::marks;
        const MS: Time = crate::time::PS_PER_MS;
        for ecn in [true, false] {
            let mut p = FqCodelParams::defaults();
            p.codel.ecn = ecn;
            let mut q = FqCodel::new(p, 7);
            let mut log = DropLog::default();
            let (mut a, mut t, mut ce) = (0, MS, Vec::new());
            while t < 300 * MS {
                if a <= t {
                    let mut pkt = pkt(1, 1500);
                    pkt.set(marks::ECN_ECT);
                    q.enqueue(pkt, a, &mut log);
                    a += MS / 2;
                } else {
                    if let Dequeue::Packet(p) = q.dequeue_with_drops(t, &mut log) {
                        if p.has(marks::ECN_CE) {
                            ce.push(t);
                        }
                    }
                    t += MS;
                }
            }
            let c = q.counters();
            if ecn {
                assert_eq!(ce, [109 * MS, 209 * MS, 280 * MS]);
                assert_eq!((c.ecn_marks, c.early_drops, log.early_total()), (3, 0, 0));
            } else {
                assert!(ce.is_empty());
                assert_eq!((c.ecn_marks, c.early_drops, log.early_total()), (0, 3, 3));
            }
        }
    }

    #[test]
    fn parameters_are_checked() {
        let ok = FqCodelParams::defaults();
        assert!(ok.validate().is_ok());
        assert_eq!(
            FqCodelParams { flows: 0, ..ok }.validate().unwrap_err(),
            "flows: must be between 1 and 65536, got 0"
        );
        let mut bad = ok;
        bad.codel.interval = bad.codel.target;
        assert!(bad
            .validate()
            .unwrap_err()
            .starts_with("interval: must be longer than target"));
    }
}
