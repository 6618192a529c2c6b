//! Step marking (the queue DCTCP is designed for, RFC 8257 section 3.1): a FIFO that
//! marks ECN-capable arrivals CE while the instantaneous queue exceeds a threshold `K`,
//! and drops only at its limit.
//!
//! # Rules
//! - An arrival finding the buffer full (`limit`, packets or bytes) is dropped at the
//!   tail ([`DropCause::Overflow`]), marked or not.
//! - Otherwise it is kept, and marked CE ([`marks::ECN_CE`]) if it carries ECT
//!   ([`marks::ECN_ECT`]) and the queue it finds, before it joins, holds more than `k`:
//!   more than `k` packets when `k` is in packets (`"20p"`), more than `k` bytes when in
//!   bytes (`"30KB"`). Packets without ECT are never marked and never dropped early.
//! - There is no averaging and no randomness: the decision depends only on the queue
//!   at the arrival instant.

use super::{Dequeue, DropCause, DropLog, DropTail, Limit, QueueDisc, QueueKind};
use crate::decl::{self, limit_value, Absent, Bounds, Param, Type, Values};
use crate::metrics::declared::{stat, Stat, Window::AfterWarmup};
use crate::packet::{marks, Packet};
use crate::scenario::QueueSpec;
use crate::time::Time;

/// The step queue's statistics (`link.{link}.` keys).
pub const STATS: &[Stat] = &[stat(
    "link.{link}.step_{arrivals|marks|overflow_drops}",
    "packets",
    AfterWarmup,
    "step marking: arrivals; ECN-capable arrivals marked CE (queue above k); drops of a full buffer",
)];

/// The step-marking queue as scenarios name it (`kind = "step"`).
pub static STEP: QueueKind = QueueKind {
    name: "step",
    aliases: &[],
    title: "step marking",
    doc: "Step marking for DCTCP (RFC 8257): ECN-capable arrivals marked CE while the instantaneous queue exceeds k; tail drop at the limit.",
    params: &[
        Param::new("k", Type::Limit, Absent::Required, "Marking threshold: arrivals finding more than this queued are marked.")
            .unit("p or B")
            .bounds(Bounds::Positive),
        Param::new("limit", Type::Limit, Absent::Is("1000p"), "Buffer; arrivals beyond it are dropped at the tail.")
            .unit("p or B")
            .bounds(Bounds::Positive),
    ],
    rules: decl::no_rules,
    stats: STATS,
    spec: |v| QueueSpec::Declared {
        kind: "step",
        values: v,
    },
    build: |q, _| match q {
        QueueSpec::Declared { values, .. } => Box::new(Step::new(StepParams::from_values(values))),
        q => unreachable!("step marking asked to build {q:?}"),
    },
};

/// Parameters of a [`Step`] queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepParams {
    /// The marking threshold, packets or bytes.
    pub k: Limit,
    /// Buffer size; arrivals beyond it are dropped at the tail.
    pub limit: Limit,
}

impl StepParams {
    /// Parameters from declared values (every key set).
    pub fn from_values(v: &Values) -> Self {
        StepParams {
            k: v.limit("k"),
            limit: v.limit("limit"),
        }
    }

    /// The parameters as declared values.
    pub fn values(&self) -> Values {
        Values(vec![
            ("k", limit_value(self.k)),
            ("limit", limit_value(self.limit)),
        ])
    }

    /// Checks the parameters against their declaration ([`STEP`]).
    pub fn validate(&self) -> Result<(), String> {
        decl::validate(STEP.params, &self.values(), STEP.rules)
    }
}

/// What a [`Step`] queue counted (since the warm-up, once it has ended).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepCounters {
    /// Arrivals offered.
    pub arrivals: u64,
    /// Arrivals marked CE.
    pub marks: u64,
    /// Arrivals dropped because the buffer was full.
    pub overflow_drops: u64,
}

/// A step-marking FIFO (see the module documentation): a drop-tail FIFO that marks on
/// the way in.
pub struct Step {
    k: Limit,
    fifo: DropTail,
    counters: StepCounters,
}

impl Step {
    /// A step-marking queue (panics if [`StepParams::validate`] fails).
    pub fn new(p: StepParams) -> Self {
        if let Err(e) = p.validate() {
            panic!("step marking: {e}");
        }
        Step {
            k: p.k,
            fifo: DropTail::new(p.limit),
            counters: StepCounters::default(),
        }
    }

    /// What the queue counted.
    pub fn counters(&self) -> StepCounters {
        self.counters
    }

    fn above_k(&self) -> bool {
        match self.k {
            Limit::Packets(n) => self.fifo.len() > n,
            Limit::Bytes(b) => self.fifo.bytes() > b,
        }
    }
}

impl QueueDisc for Step {
    fn enqueue(&mut self, mut pkt: Packet, now: Time, drops: &mut DropLog) {
        self.counters.arrivals += 1;
        if !self.fifo.fits(pkt.size) {
            self.counters.overflow_drops += 1;
            drops.record(&pkt, DropCause::Overflow);
            return;
        }
        if self.above_k() && pkt.has(marks::ECN_ECT) {
            pkt.set(marks::ECN_CE);
            self.counters.marks += 1;
        }
        self.fifo.enqueue(pkt, now, drops);
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        self.fifo.dequeue(now)
    }
    fn len(&self) -> usize {
        self.fifo.len()
    }
    fn bytes(&self) -> u64 {
        self.fifo.bytes()
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet)) {
        self.fifo.for_each_queued(f);
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        let c = &self.counters;
        out.push(("step_arrivals".into(), c.arrivals as f64));
        out.push(("step_marks".into(), c.marks as f64));
        out.push(("step_overflow_drops".into(), c.overflow_drops as f64));
    }
    fn on_warmup(&mut self, _now: Time) {
        self.counters = StepCounters::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ect(size: u32) -> Packet {
        let mut p = Packet::of_size(size);
        p.set(marks::ECN_ECT);
        p
    }

    fn marked(q: &mut Step) -> Vec<bool> {
        let mut out = Vec::new();
        while let Dequeue::Packet(p) = q.dequeue(0) {
            out.push(p.has(marks::ECN_CE));
        }
        out
    }

    /// k = 2 packets: the first three arrivals find 0, 1 and 2 queued (not more than 2),
    /// the fourth and fifth find 3 and 4 and are marked; a non-ECT arrival finding 5 is
    /// kept unmarked; the seventh finds the limit (6) and is dropped.
    #[test]
    fn marks_arrivals_finding_more_than_k_packets() {
        let mut q = Step::new(StepParams {
            k: Limit::Packets(2),
            limit: Limit::Packets(6),
        });
        let mut log = DropLog::default();
        for _ in 0..5 {
            q.enqueue(ect(1500), 0, &mut log);
        }
        q.enqueue(Packet::of_size(1500), 0, &mut log);
        q.enqueue(ect(1500), 0, &mut log);
        assert_eq!(log.overflow_total(), 1);
        assert_eq!(
            q.counters(),
            StepCounters {
                arrivals: 7,
                marks: 2,
                overflow_drops: 1
            }
        );
        assert_eq!(marked(&mut q), [false, false, false, true, true, false]);
        // Drained: the next arrival finds nothing and is not marked.
        q.enqueue(ect(1500), 0, &mut log);
        assert_eq!(marked(&mut q), [false]);
    }

    /// k = 3000 bytes: 1000-B arrivals find 0, 1000, 2000, 3000 (not more), then 4000
    /// bytes: only the fifth is marked.
    #[test]
    fn marks_arrivals_finding_more_than_k_bytes() {
        let mut q = Step::new(StepParams {
            k: Limit::Bytes(3000),
            limit: Limit::Bytes(100_000),
        });
        let mut log = DropLog::default();
        for _ in 0..5 {
            q.enqueue(ect(1000), 0, &mut log);
        }
        assert_eq!(marked(&mut q), [false, false, false, false, true]);
    }

    #[test]
    fn parameters_are_checked() {
        let ok = StepParams {
            k: Limit::Packets(1),
            limit: Limit::Packets(10),
        };
        assert!(ok.validate().is_ok());
        let e = StepParams {
            limit: Limit::Packets(0),
            ..ok
        }
        .validate()
        .unwrap_err();
        assert_eq!(e, "limit: must be positive");
        let e = StepParams {
            k: Limit::Bytes(0),
            ..ok
        }
        .validate()
        .unwrap_err();
        assert_eq!(e, "k: must be positive");
    }
}
