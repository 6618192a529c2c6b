//! Queue disciplines for output ports.
//!
//! A [`QueueDisc`] decides what to keep and what to send next; the port (in
//! [`crate::net`]) owns transmission. Drops are recorded in the port's [`DropLog`] by
//! cause (overflow, early, policed, pushed out) and class.

mod codel;
mod droptail;
pub mod fq_codel;
mod kind;
pub mod pie;
mod priority;
mod red;
mod rio;
pub mod step;

pub use codel::{codel_spacing, Codel, CodelCounters, CodelParams, CODEL};
pub use droptail::{DropTail, Limit, DROPTAIL};
pub use kind::{describe, LinkEnv, QueueKind};
pub use priority::{Priority, TopClassLimit, PRIORITY};
pub use red::{red_drop_probability, Red, RedCounters, RedCurve, RedParams, RED};
pub use rio::{Rio, RioMode, RioParams, RIO};

/// The registry of queue disciplines: every `kind` a scenario's queue table may name, in
/// the order messages and the documentation list them. A discipline is its own file in
/// this folder (model, declaration, tests) plus its line here.
pub static DISCIPLINES: &[&QueueKind] = &[
    &DROPTAIL,
    &PRIORITY,
    &RED,
    &RIO,
    &CODEL,
    &pie::PIE,
    &fq_codel::FQ_CODEL,
    &step::STEP,
];

/// The discipline scenarios call `name` (its name or an alias).
pub fn discipline(name: &str) -> Option<&'static QueueKind> {
    DISCIPLINES
        .iter()
        .copied()
        .find(|k| k.name == name || k.aliases.contains(&name))
}

use crate::packet::Packet;
use crate::time::Time;

/// What a queue discipline answers when asked for a packet.
#[derive(Debug)]
pub enum Dequeue {
    /// Send this packet now.
    Packet(Packet),
    /// Nothing to send.
    Empty,
    /// Something is queued but may not be sent before this time (rate limiting).
    Until(Time),
}

/// A queue discipline on an output port.
pub trait QueueDisc: std::any::Any {
    /// Offers a packet; a discipline that drops it (or pushes another out) records it.
    fn enqueue(&mut self, pkt: Packet, now: Time, drops: &mut DropLog);
    /// Takes the next packet to transmit.
    fn dequeue(&mut self, now: Time) -> Dequeue;
    /// Takes the next packet to transmit, recording in `drops` the packets the
    /// discipline discards while choosing it (the head drops of CoDel). Ports call this
    /// one; the default is [`QueueDisc::dequeue`], which discards nothing.
    fn dequeue_with_drops(&mut self, now: Time, _drops: &mut DropLog) -> Dequeue {
        self.dequeue(now)
    }
    /// Packets queued.
    fn len(&self) -> usize;
    /// True when nothing is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes queued.
    fn bytes(&self) -> u64;
    /// Shows `f` every packet queued (in any order); the end-of-run conservation check
    /// counts them per flow.
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet));
    /// Packets of service class `class` queued, for disciplines that keep classes apart
    /// (strict priority); `None` if the discipline does not.
    fn class_len(&self, _class: u8) -> Option<usize> {
        None
    }
    /// Appends discipline-specific counters (name, value) for the run summary.
    fn report(&self, _out: &mut Vec<(String, f64)>) {}
    /// The discipline's running average queue (packets): of the whole queue, or with
    /// `in_only` of the IN-profile packets only (RIO). `None` if it keeps no average.
    fn average_queue(&self, _in_only: bool) -> Option<f64> {
        None
    }
    /// The warm-up ends at `now`: counters that are measured after it start again.
    fn on_warmup(&mut self, _now: Time) {}
    /// `Some(limit)` if this discipline is a plain FIFO with tail drop at `limit`: its
    /// service order is fixed on arrival, so the port may compute each packet's
    /// transmission start when it arrives and skip the end-of-transmission event.
    fn fifo_limit(&self) -> Option<Limit> {
        None
    }
    /// When the discipline next wants [`QueueDisc::on_timer`] called (a control law on
    /// its own clock), or `None`. The port asks after every enqueue, dequeue and timer
    /// call and keeps one event scheduled at the earliest time asked for; a discipline
    /// that ever answers `Some` must answer `Some` from its construction.
    fn timer(&self) -> Option<Time> {
        None
    }
    /// Runs what is due at `now` (at or after the time [`QueueDisc::timer`] gave; a
    /// call with nothing due must change nothing). Drops it makes go in `drops`.
    fn on_timer(&mut self, _now: Time, _drops: &mut DropLog) {}
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropCause {
    /// The queue was full.
    Overflow,
    /// An active queue management decision before the queue was full (RED family,
    /// CoDel's head drops).
    Early,
    /// A policer or other port hook discarded it.
    Policed,
    /// Pushed out of a full queue by a higher-priority arrival.
    PushedOut,
}

/// Sees every drop a port records: a mechanism's own drop accounting (the DiffServ
/// family's IN/OUT split per flow, for instance) without fields in the core's log.
pub trait DropObserver {
    /// `pkt` was dropped for `cause`.
    fn on_drop(&mut self, pkt: &Packet, cause: DropCause);
    /// The warm-up ended: counts measured after it start again.
    fn on_warmup(&mut self) {}
}

/// Drop counters of one port.
#[derive(Default)]
pub struct DropLog {
    /// All drops, packets.
    pub pkts: u64,
    /// All drops, bytes.
    pub bytes: u64,
    /// Overflow drops per class.
    pub overflow: [u64; 8],
    /// Early (AQM) drops per class.
    pub early: [u64; 8],
    /// Policed drops.
    pub policed: u64,
    /// Push-out drops per class (of the packet pushed out).
    pub pushed_out: [u64; 8],
    /// Observers told of every drop, in the order added.
    observers: Vec<Box<dyn DropObserver>>,
}

impl std::fmt::Debug for DropLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DropLog")
            .field("pkts", &self.pkts)
            .field("bytes", &self.bytes)
            .field("overflow", &self.overflow)
            .field("early", &self.early)
            .field("policed", &self.policed)
            .field("pushed_out", &self.pushed_out)
            .field("observers", &self.observers.len())
            .finish()
    }
}

impl DropLog {
    /// Records a drop of `pkt` for `cause`.
    pub fn record(&mut self, pkt: &Packet, cause: DropCause) {
        let c = (pkt.class as usize).min(7);
        self.pkts += 1;
        self.bytes += pkt.size as u64;
        match cause {
            DropCause::Overflow => self.overflow[c] += 1,
            DropCause::Early => self.early[c] += 1,
            DropCause::Policed => self.policed += 1,
            DropCause::PushedOut => self.pushed_out[c] += 1,
        }
        for o in self.observers.iter_mut() {
            o.on_drop(pkt, cause);
        }
    }

    /// Records a packet discarded by a port hook.
    pub fn record_policed(&mut self, pkt: &Packet) {
        self.record(pkt, DropCause::Policed);
    }

    /// Adds an observer told of every later drop.
    pub fn observe(&mut self, o: Box<dyn DropObserver>) {
        self.observers.push(o);
    }

    /// The warm-up ended: tells the observers.
    pub fn on_warmup(&mut self) {
        for o in self.observers.iter_mut() {
            o.on_warmup();
        }
    }

    /// Overflow drops over all classes.
    pub fn overflow_total(&self) -> u64 {
        self.overflow.iter().sum()
    }

    /// Early drops over all classes.
    pub fn early_total(&self) -> u64 {
        self.early.iter().sum()
    }
}
