//! The RPR station: its MAC on the data ringlet (client buffer, primary and secondary
//! transit queues, transmit selector, allowed-rate limiter) and its fairness machine
//! (rate counters, congestion detection, fairness messages upstream).
//!
//! The station is a port element on both of its output ports: every data packet offered
//! to either (added by a local client, or arriving in transit from upstream) is consumed
//! by the station, which always sends data on the data ringlet and fairness messages on
//! the other. The station is the only feeder of its data-ringlet link and hands it one
//! packet when the transmitter is free, so the link never queues: the transit queues and
//! the client buffer live in the station, and the selector decides at each transmission
//! start exactly as the MAC does.

use super::rates::RateCounters;
use crate::engine::EventId;
use crate::net::{AgentId, HeaderFields, LinkId, NodeId, Packet, NONE};
use crate::time::{to_secs, tx_time, Time, NEVER};
use crate::world::{Agent, Ctx, PortVerdict};
use serde_json::{json, Value};
use std::collections::VecDeque;

/// Which fairness algorithm the stations run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FairnessMode {
    /// Congestion on STQ depth (dual) or rates (single); the fair rate follows lpAddRate
    /// every aging interval.
    Aggressive,
    /// Congestion on rates or transit depth; the head changes its advertised rate at most
    /// once per measured fairness round trip, with limited steps.
    Conservative,
}

/// Transit buffer design.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferDesign {
    /// One transit queue (the PTQ), always served before add traffic.
    Single,
    /// A primary (class A) and a secondary (classes B/C) transit queue.
    Dual,
}

/// Every parameter of the stations' MAC and fairness machine.
#[derive(Clone, Debug, PartialEq)]
pub struct RprConfig {
    /// Fairness algorithm.
    pub mode: FairnessMode,
    /// Transit buffer design.
    pub design: BufferDesign,
    /// Aging interval (also the interval between fairness messages).
    pub aging_interval: Time,
    /// ageCoef.
    pub age_coef: f64,
    /// lpCoef.
    pub lp_coef: f64,
    /// rampCoef: `allowed ← allowed + (line − allowed)/rampCoef` on a full-rate message.
    pub ramp_coef: f64,
    /// Conservative mode: the head's fair rate falls by `rate/ramp_down_coef` per
    /// fairness round trip while congestion persists.
    pub ramp_down_coef: f64,
    /// Conservative mode: the head's fair rate rises by `(line − rate)/ramp_up_coef` per
    /// fairness round trip once congestion has cleared.
    pub ramp_up_coef: f64,
    /// STQ size, bytes.
    pub stq_size: u64,
    /// STQ low threshold, fraction of its size.
    pub stq_low: f64,
    /// STQ medium threshold, fraction of its size.
    pub stq_medium: f64,
    /// STQ high threshold, fraction of its size.
    pub stq_high: f64,
    /// Rate congestion threshold (rateLowThreshold), fraction of the line rate.
    pub rate_low_threshold: f64,
    /// Aggressive mode with a dual queue: congested on the transmit rate as well as on
    /// the STQ (the standard); `false` keeps the STQ condition alone.
    pub aggressive_on_rates: bool,
    /// Credit limit of the add shaper (hiLimit), bytes: the credit the allowed rate
    /// builds up while a frame that may cross the congested span waits behind transit
    /// frames is kept up to this many bytes; 0 spaces the frames strictly from the start
    /// of the last one, losing every such wait.
    pub add_credit: u64,
    /// Client buffer, packets.
    pub client_buffer: usize,
    /// Size of a fairness message, bytes.
    pub fairness_size: u32,
    /// Interval of the station's time series.
    pub sample_interval: Time,
    /// Start of the per-aging-interval trace (series `rpr.S{i}.iv.*`); none when
    /// `trace_until` is not after it.
    pub trace_from: Time,
    /// End of the per-aging-interval trace.
    pub trace_until: Time,
}

impl Default for RprConfig {
    /// Aggressive mode, dual queue, aging 100 µs, ageCoef 4, lpCoef 64, rampCoef 64,
    /// conservative ramps 16 (down) and 4 (up) per round trip, STQ 256 KiB with
    /// thresholds 12.5 / 18.75 / 25 %, rateLowThreshold 0.9·0.95, add-shaper credit one
    /// 1500-byte frame, client buffer 100 000 packets, 16-byte fairness messages, 1-ms
    /// series.
    fn default() -> Self {
        RprConfig {
            mode: FairnessMode::Aggressive,
            design: BufferDesign::Dual,
            aging_interval: crate::time::millis(0.1),
            age_coef: 4.0,
            lp_coef: 64.0,
            ramp_coef: 64.0,
            ramp_down_coef: 16.0,
            ramp_up_coef: 4.0,
            stq_size: 256 * 1024,
            stq_low: 0.125,
            stq_medium: 0.1875,
            stq_high: 0.25,
            rate_low_threshold: 0.9 * 0.95,
            aggressive_on_rates: true,
            add_credit: 1500,
            client_buffer: 100_000,
            fairness_size: 16,
            sample_interval: crate::time::millis(1.0),
            trace_from: 0,
            trace_until: 0,
        }
    }
}

/// A fairness message: the advertised fair rate (bytes per aging interval, infinite for
/// "full rate") and the station at the head of the congestion domain. The message's
/// `created` time is a stamp of station `origin`, passed on from station to station
/// upstream until it is back at its origin: one measured fairness round trip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FairnessMessage {
    /// Fair rate, bytes per aging interval; `f64::INFINITY` is "full rate".
    pub rate: f64,
    /// Station index of the head, or [`NONE`].
    pub head: u32,
    /// Station index whose stamp the message carries, or [`NONE`].
    pub origin: u32,
}

impl HeaderFields for FairnessMessage {
    const TAG: u8 = 30;
    fn to_words(&self) -> [u64; 2] {
        [
            self.rate.to_bits(),
            self.head as u64 | (self.origin as u64) << 32,
        ]
    }
    fn from_words(w: [u64; 2]) -> Self {
        FairnessMessage {
            rate: f64::from_bits(w[0]),
            head: w[1] as u32,
            origin: (w[1] >> 32) as u32,
        }
    }
}

/// The congestion state a station derives from its STQ depth and rates.
///
/// `lp_sum` is the station's low-pass transmit rate of fairness-eligible traffic
/// (lpAddRate + lpFwRate, the standard's lpNrXmitRate) and `line` the line rate, both in
/// bytes per aging interval. Aggressive mode: congested when the transmit rate reaches
/// rateLowThreshold, or, with a dual queue, when the STQ reaches its low threshold as
/// well. Conservative mode: the same rate condition, or, with a dual queue, the STQ at
/// its medium threshold.
pub fn congested(
    cfg: &RprConfig,
    transit_bytes: u64,
    transit_size: u64,
    lp_sum: f64,
    line: f64,
) -> bool {
    let depth = transit_bytes as f64;
    let size = transit_size as f64;
    let on_rates = lp_sum >= cfg.rate_low_threshold * line;
    match (cfg.mode, cfg.design) {
        (FairnessMode::Aggressive, BufferDesign::Dual) => {
            (cfg.aggressive_on_rates && on_rates) || depth >= cfg.stq_low * size
        }
        (FairnessMode::Aggressive, BufferDesign::Single) => on_rates,
        (FairnessMode::Conservative, BufferDesign::Dual) => {
            on_rates || depth >= cfg.stq_medium * size
        }
        (FairnessMode::Conservative, BufferDesign::Single) => on_rates,
    }
}

/// What station `idx` advertises upstream: (rate, head), rate in bytes per aging
/// interval (`f64::INFINITY` and [`NONE`] for "full rate").
///
/// `local` is the station's own fair rate (infinite when it is not congested),
/// `received` the last message from downstream and `lp_fw` its lpFwRate. The station is
/// the head when its own rate is below the one it received; otherwise it passes the
/// received rate on while its upstream stations send more than that rate through it
/// (they belong to the congestion domain), else "full rate". A message that went round
/// the ring back to its head ends there.
pub fn advertisement(idx: u32, local: f64, received: FairnessMessage, lp_fw: f64) -> (f64, u32) {
    let recv = if received.head == idx {
        f64::INFINITY
    } else {
        received.rate
    };
    if local.is_finite() && local < recv {
        (local, idx)
    } else if recv.is_finite() && lp_fw > recv {
        (recv, received.head)
    } else {
        (f64::INFINITY, NONE)
    }
}

/// The add shaper of traffic that crosses the congested span: a credit in bytes that
/// grows at the allowed rate up to a limit (hiLimit) and falls by each frame sent; a
/// frame may start while the credit is not negative.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AddShaper {
    /// Credit, bytes.
    pub credit: f64,
    /// Time up to which the credit has been accrued.
    pub at: Time,
}

impl AddShaper {
    /// Accrues the credit from the last update to `now` at `rate_bps`, capped at `limit`
    /// bytes (a credit already above the limit is not cut).
    pub fn accrue(&mut self, now: Time, rate_bps: f64, limit: f64) {
        if now > self.at {
            let gain = rate_bps / 8.0 * to_secs(now - self.at);
            if self.credit < limit {
                self.credit = (self.credit + gain).min(limit);
            }
            self.at = now;
        }
    }

    /// Earliest time, from `now` on, at which the credit (accruing at `rate_bps`) is no
    /// longer negative ([`NEVER`] at a zero rate).
    pub fn eligible_at(&self, now: Time, rate_bps: f64) -> Time {
        // A credit short of zero by rounding only (under a millionth of a byte) counts as
        // zero: the wake-up time below is rounded up to the picosecond.
        if self.credit >= -1e-6 {
            return now;
        }
        if rate_bps <= 0.0 {
            return NEVER;
        }
        let wait = (-self.credit * 8.0 / rate_bps * 1e12).ceil();
        if wait >= (NEVER - now) as f64 {
            NEVER
        } else {
            now + wait as Time
        }
    }
}

const TX: u32 = 1;
const AGE: u32 = 2;
const SAMPLE: u32 = 3;

/// Counters of one station (the `measured` ones after the warm-up).
#[derive(Clone, Copy, Debug, Default)]
pub struct StationStats {
    /// Bytes added to the ring after the warm-up.
    pub added_bytes: u64,
    /// Bytes forwarded in transit after the warm-up.
    pub forwarded_bytes: u64,
    /// Largest client buffer after the warm-up, packets.
    pub client_max: usize,
    /// Packets lost because the client buffer was full.
    pub client_drops: u64,
    /// Largest STQ depth, bytes.
    pub stq_max: u64,
    /// Packets lost because the STQ was full.
    pub stq_drops: u64,
    /// Fairness messages sent.
    pub messages: u64,
    /// Aging intervals spent congested (after the warm-up).
    pub congested_intervals: u64,
    /// Aging intervals after the warm-up.
    pub intervals: u64,
}

/// One station of the ring.
pub struct RprStation {
    cfg: RprConfig,
    /// This station's index (its node id in the ring topology).
    idx: u32,
    n: u32,
    node: NodeId,
    data_link: LinkId,
    ctrl_link: LinkId,
    line_bps: u64,
    /// Line rate in bytes per aging interval.
    line_iv: f64,
    upstream_agent: AgentId,
    upstream_node: NodeId,
    ptq: VecDeque<Packet>,
    stq: VecDeque<Packet>,
    ptq_bytes: u64,
    stq_bytes: u64,
    client: VecDeque<Packet>,
    busy_until: Time,
    timer_at: Time,
    timer_id: Option<EventId>,
    /// Shaper of the add traffic that crosses the congested span.
    shaper: AddShaper,
    /// Allowed rate towards the congested span, bytes per aging interval.
    allowed: f64,
    /// Head of the congestion domain whose rate limits this station ([`NONE`] if none).
    limit_head: u32,
    /// Last received message.
    received: FairnessMessage,
    received_stamp: Time,
    rates: RateCounters,
    added_iv: u64,
    forwarded_iv: u64,
    congested: bool,
    advertised: f64,
    /// Conservative mode: the head's current fair rate (infinite when none).
    cons_rate: f64,
    cons_next: Time,
    /// Measured fairness round-trip time.
    frtt: Time,
    measure_from: Time,
    stats: StationStats,
    sample_added: u64,
    sample_allowed_max: f64,
    series: Option<[usize; 6]>,
    trace_ids: Option<[usize; 10]>,
}

impl RprStation {
    /// Station `idx` of a ring of `n`, at `node`, sending data on `data_link` and
    /// fairness messages on `ctrl_link` (to its upstream neighbour `upstream_node`).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: RprConfig,
        idx: u32,
        n: u32,
        node: NodeId,
        data_link: LinkId,
        ctrl_link: LinkId,
        upstream_node: NodeId,
        line_bps: u64,
        ring_delay: Time,
    ) -> Self {
        let line_iv = line_bps as f64 / 8.0 * to_secs(cfg.aging_interval);
        let rates = RateCounters::new(cfg.age_coef, cfg.lp_coef);
        RprStation {
            idx,
            n,
            node,
            data_link,
            ctrl_link,
            line_bps,
            line_iv,
            upstream_agent: NONE,
            upstream_node,
            ptq: VecDeque::new(),
            stq: VecDeque::new(),
            ptq_bytes: 0,
            stq_bytes: 0,
            client: VecDeque::new(),
            busy_until: 0,
            timer_at: NEVER,
            timer_id: None,
            shaper: AddShaper {
                credit: cfg.add_credit as f64,
                at: 0,
            },
            allowed: line_iv,
            limit_head: NONE,
            received: FairnessMessage {
                rate: f64::INFINITY,
                head: NONE,
                origin: NONE,
            },
            received_stamp: 0,
            rates,
            added_iv: 0,
            forwarded_iv: 0,
            congested: false,
            advertised: f64::INFINITY,
            cons_rate: f64::INFINITY,
            cons_next: 0,
            frtt: 2 * ring_delay + cfg.aging_interval * n as u64,
            measure_from: 0,
            stats: StationStats::default(),
            sample_added: 0,
            sample_allowed_max: line_iv,
            series: None,
            trace_ids: None,
            cfg,
        }
    }

    /// Sets the upstream station's agent (fairness messages go to it).
    pub fn set_upstream(&mut self, agent: AgentId) {
        self.upstream_agent = agent;
    }

    /// Counts statistics from `t` on.
    pub fn measure_from(&mut self, t: Time) {
        self.measure_from = t;
    }

    /// Counters so far.
    pub fn stats(&self) -> StationStats {
        self.stats
    }

    /// Allowed rate towards the congested span, bits per second.
    pub fn allowed_bps(&self) -> f64 {
        self.iv_to_bps(self.allowed)
    }

    /// Measured fairness round-trip time.
    pub fn frtt(&self) -> Time {
        self.frtt
    }

    /// Packets in the client buffer.
    pub fn client_len(&self) -> usize {
        self.client.len()
    }

    fn iv_to_bps(&self, v: f64) -> f64 {
        if v.is_finite() {
            v * 8.0 / to_secs(self.cfg.aging_interval)
        } else {
            self.line_bps as f64
        }
    }

    /// Ring distance along the data ringlet from station `a` to `b`.
    fn dist(&self, a: u32, b: u32) -> u32 {
        (b + self.n - a) % self.n
    }

    /// True if a packet from this station to `dst` crosses the span leaving `head`.
    fn crosses(&self, dst: NodeId, head: u32) -> bool {
        head != NONE && dst < self.n && self.dist(self.idx, head) < self.dist(self.idx, dst)
    }

    /// True while the allowed rate limits add traffic.
    fn limited(&self) -> bool {
        self.limit_head != NONE && self.allowed < self.line_iv
    }

    /// Brings the add shaper's credit up to `now` at the allowed rate in force until now;
    /// called before every change of the allowed rate. While add traffic is not limited
    /// the credit stays at its limit.
    fn accrue(&mut self, now: Time) {
        let limit = self.cfg.add_credit as f64;
        if self.limited() {
            let bps = self.iv_to_bps(self.allowed);
            self.shaper.accrue(now, bps, limit);
        } else {
            self.shaper = AddShaper {
                credit: limit,
                at: now,
            };
        }
    }

    /// Earliest start of the next add packet crossing the congested span: when the add
    /// shaper's credit is no longer negative ([`NEVER`] at a zero rate).
    fn next_cross(&self, now: Time) -> Time {
        self.shaper.eligible_at(now, self.iv_to_bps(self.allowed))
    }

    fn transit_size(&self) -> u64 {
        self.cfg.stq_size
    }

    fn wake_at(&mut self, t: Time, ctx: &mut Ctx) {
        if self.timer_at <= t {
            return;
        }
        if let Some(id) = self.timer_id.take() {
            ctx.cancel(id);
        }
        self.timer_at = t;
        self.timer_id = Some(ctx.timer_at(t, TX));
    }

    /// The transmit selector: starts the next transmission if the transmitter is free.
    fn try_send(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        if now < self.busy_until {
            let t = self.busy_until;
            self.wake_at(t, ctx);
            return;
        }
        self.accrue(now);
        let high = (self.cfg.stq_high * self.cfg.stq_size as f64) as u64;
        let pick = if !self.ptq.is_empty() {
            Some(0)
        } else if self.cfg.design == BufferDesign::Dual
            && !self.stq.is_empty()
            && self.stq_bytes >= high
        {
            Some(1)
        } else if let Some(head) = self.client.front() {
            let blocked = self.limited() && self.crosses(head.dst, self.limit_head);
            let earliest = if blocked { self.next_cross(now) } else { now };
            if earliest <= now {
                Some(2)
            } else if !self.stq.is_empty() {
                Some(1)
            } else {
                // A new rate (message or ramp) calls the selector again anyway.
                if earliest != NEVER {
                    self.wake_at(earliest, ctx);
                }
                None
            }
        } else if !self.stq.is_empty() {
            Some(1)
        } else {
            None
        };
        let Some(which) = pick else { return };
        let pkt = match which {
            0 => {
                let p = self.ptq.pop_front().expect("ptq");
                self.ptq_bytes -= p.size as u64;
                p
            }
            1 => {
                let p = self.stq.pop_front().expect("stq");
                self.stq_bytes -= p.size as u64;
                p
            }
            _ => self.client.pop_front().expect("client"),
        };
        let measured = now >= self.measure_from;
        if which == 2 {
            self.added_iv += pkt.size as u64;
            self.sample_added += pkt.size as u64;
            if measured {
                self.stats.added_bytes += pkt.size as u64;
            }
            if self.limited() && self.crosses(pkt.dst, self.limit_head) {
                self.shaper.credit -= pkt.size as f64;
            }
        } else {
            self.forwarded_iv += pkt.size as u64;
            if measured {
                self.stats.forwarded_bytes += pkt.size as u64;
            }
        }
        self.busy_until = now + tx_time(pkt.size, self.line_bps);
        ctx.net.enqueue(self.data_link, pkt, ctx.sched);
        let t = self.busy_until;
        self.wake_at(t, ctx);
    }

    /// A data packet offered to one of the station's ports.
    fn accept(&mut self, pkt: Packet, ctx: &mut Ctx) {
        if pkt.src == self.node {
            if self.client.len() >= self.cfg.client_buffer {
                self.stats.client_drops += 1;
                ctx.flows.discarded(&pkt);
                return;
            }
            self.client.push_back(pkt);
            if ctx.now() >= self.measure_from {
                self.stats.client_max = self.stats.client_max.max(self.client.len());
            }
        } else if pkt.class > 0 || self.cfg.design == BufferDesign::Single {
            self.ptq_bytes += pkt.size as u64;
            self.ptq.push_back(pkt);
        } else {
            if self.stq_bytes + pkt.size as u64 > self.cfg.stq_size {
                self.stats.stq_drops += 1;
                ctx.flows.discarded(&pkt);
                return;
            }
            self.stq_bytes += pkt.size as u64;
            self.stq.push_back(pkt);
            self.stats.stq_max = self.stats.stq_max.max(self.stq_bytes);
        }
        self.try_send(ctx);
    }

    /// Transit bytes the congestion detection looks at.
    fn transit_depth(&self) -> u64 {
        match self.cfg.design {
            BufferDesign::Dual => self.stq_bytes,
            BufferDesign::Single => self.ptq_bytes,
        }
    }

    /// End of an aging interval: age the counters, detect congestion, advertise.
    fn age(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        self.rates.age(self.added_iv, self.forwarded_iv);
        let (added_iv, forwarded_iv) = (self.added_iv, self.forwarded_iv);
        self.added_iv = 0;
        self.forwarded_iv = 0;
        let lp_sum = self.rates.lp_add_rate + self.rates.lp_fw_rate;
        self.congested = congested(
            &self.cfg,
            self.transit_depth(),
            self.transit_size(),
            lp_sum,
            self.line_iv,
        );
        if now >= self.measure_from {
            self.stats.intervals += 1;
            self.stats.congested_intervals += self.congested as u64;
        }
        let local = match self.cfg.mode {
            FairnessMode::Aggressive => {
                if self.congested {
                    self.rates.lp_add_rate
                } else {
                    f64::INFINITY
                }
            }
            FairnessMode::Conservative => self.conservative_rate(now),
        };
        let (rate, head) = advertisement(self.idx, local, self.received, self.rates.lp_fw_rate);
        // The stamp: a head stamps its own messages; every other station passes on the
        // stamp it last received, so a head's stamp goes round the whole ring, whatever
        // the extent of the domain, and comes back after one fairness round trip. A
        // station whose own stamp came back (or that has none to pass on) stamps anew.
        let (origin, stamp) =
            if head == self.idx || self.received.origin == self.idx || self.received.origin == NONE
            {
                (self.idx, now)
            } else {
                (self.received.origin, self.received_stamp)
            };
        self.advertised = rate;
        let msg = FairnessMessage { rate, head, origin };
        let mut pkt = Packet {
            size: self.cfg.fairness_size,
            src: self.node,
            dst: self.upstream_node,
            dst_agent: self.upstream_agent,
            // A control message belongs to no flow: no flow record counts it.
            flow: NONE,
            route: NONE,
            created: stamp,
            echo: now,
            ..Packet::default()
        };
        pkt.set_header(msg);
        self.stats.messages += 1;
        ctx.net.enqueue(self.ctrl_link, pkt, ctx.sched);
        // Ramp up while the received rate is "full rate".
        if !self.received.rate.is_finite() || self.received.head == self.idx {
            self.accrue(now);
            self.allowed += (self.line_iv - self.allowed) / self.cfg.ramp_coef;
            if self.allowed >= self.line_iv * (1.0 - 1e-9) {
                self.allowed = self.line_iv;
                self.limit_head = NONE;
            }
        }
        self.sample_allowed_max = self.sample_allowed_max.max(self.allowed);
        if now >= self.cfg.trace_from && now < self.cfg.trace_until {
            self.trace(ctx, added_iv, forwarded_iv);
        }
        self.try_send(ctx);
    }

    /// One row of the per-aging-interval trace: STQ depth, congestion state, the
    /// low-pass rates, the advertised, received and allowed rates, the head of the
    /// domain whose rate limits this station, and the bytes added and forwarded during
    /// the interval just ended.
    fn trace(&mut self, ctx: &mut Ctx, added_iv: u64, forwarded_iv: u64) {
        let now = ctx.now();
        let ids = match self.trace_ids {
            Some(ids) => ids,
            None => {
                let p = format!("rpr.S{}.iv.", self.idx);
                let names: [(&str, &'static str); 10] = [
                    ("stq_bytes", "bytes"),
                    ("congested", "0/1"),
                    ("lp_add_bps", "b/s"),
                    ("lp_fw_bps", "b/s"),
                    ("advertised_bps", "b/s"),
                    ("received_bps", "b/s"),
                    ("allowed_bps", "b/s"),
                    ("limit_head", "station"),
                    ("add_bytes", "bytes"),
                    ("transit_bytes", "bytes"),
                ];
                let ids = names.map(|(n, u)| ctx.rec.id(&(p.clone() + n), u));
                self.trace_ids = Some(ids);
                ids
            }
        };
        let recv = self.iv_to_bps(self.received.rate);
        let head = if self.limit_head == NONE {
            -1.0
        } else {
            self.limit_head as f64
        };
        let values = [
            self.transit_depth() as f64,
            self.congested as u8 as f64,
            self.iv_to_bps(self.rates.lp_add_rate),
            self.iv_to_bps(self.rates.lp_fw_rate),
            self.iv_to_bps(self.advertised),
            recv,
            self.iv_to_bps(self.allowed),
            head,
            added_iv as f64,
            forwarded_iv as f64,
        ];
        for (id, v) in ids.into_iter().zip(values) {
            ctx.rec.push(id, now, v);
        }
    }

    /// The conservative head's fair rate. Congestion starting sets it to lpAddRate;
    /// afterwards it changes at most once per measured fairness round trip: while
    /// congested it moves towards lpAddRate, by at most `rate/ramp_down_coef` down or
    /// `(line − rate)/ramp_up_coef` up; once congestion has cleared it ramps up by
    /// `(line − rate)/ramp_up_coef` and becomes "full rate" above rateLowThreshold.
    fn conservative_rate(&mut self, now: Time) -> f64 {
        let line = self.line_iv;
        if self.congested {
            if !self.cons_rate.is_finite() {
                self.cons_rate = self.rates.lp_add_rate;
                self.cons_next = now + self.frtt;
            } else if now >= self.cons_next {
                let r = self.cons_rate;
                let lo = r - r / self.cfg.ramp_down_coef;
                let hi = r + (line - r) / self.cfg.ramp_up_coef;
                self.cons_rate = self.rates.lp_add_rate.clamp(lo, hi);
                self.cons_next = now + self.frtt;
            }
        } else if self.cons_rate.is_finite() && now >= self.cons_next {
            self.cons_rate += (line - self.cons_rate) / self.cfg.ramp_up_coef;
            self.cons_next = now + self.frtt;
            if self.cons_rate >= self.cfg.rate_low_threshold * line {
                self.cons_rate = f64::INFINITY;
            }
        }
        self.cons_rate
    }

    fn sample(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        let ids = match self.series {
            Some(ids) => ids,
            None => {
                let p = format!("rpr.S{}.", self.idx);
                let ids = [
                    ctx.rec.id(&(p.clone() + "stq_bytes"), "bytes"),
                    ctx.rec.id(&(p.clone() + "client_pkts"), "packets"),
                    ctx.rec.id(&(p.clone() + "fair_rate_bps"), "b/s"),
                    ctx.rec.id(&(p.clone() + "allowed_bps"), "b/s"),
                    ctx.rec.id(&(p.clone() + "add_bps"), "b/s"),
                    ctx.rec.id(&(p + "allowed_max_bps"), "b/s"),
                ];
                self.series = Some(ids);
                ids
            }
        };
        let secs = to_secs(self.cfg.sample_interval);
        ctx.rec.push(ids[0], now, self.transit_depth() as f64);
        ctx.rec.push(ids[1], now, self.client.len() as f64);
        ctx.rec.push(ids[2], now, self.iv_to_bps(self.advertised));
        ctx.rec.push(ids[3], now, self.iv_to_bps(self.allowed));
        ctx.rec
            .push(ids[4], now, self.sample_added as f64 * 8.0 / secs);
        ctx.rec
            .push(ids[5], now, self.iv_to_bps(self.sample_allowed_max));
        self.sample_added = 0;
        self.sample_allowed_max = self.allowed;
        ctx.timer(self.cfg.sample_interval, SAMPLE);
    }
}

impl Agent for RprStation {
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.timer(self.cfg.aging_interval, AGE);
        ctx.timer(self.cfg.sample_interval, SAMPLE);
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        match kind {
            TX => {
                self.timer_at = NEVER;
                self.timer_id = None;
                self.try_send(ctx);
            }
            AGE => {
                self.age(ctx);
                ctx.timer(self.cfg.aging_interval, AGE);
            }
            SAMPLE => self.sample(ctx),
            _ => {}
        }
    }

    fn on_port(&mut self, _link: LinkId, pkt: &mut Packet, ctx: &mut Ctx) -> PortVerdict {
        if pkt.header::<FairnessMessage>().is_some() {
            return PortVerdict::Pass;
        }
        self.accept(*pkt, ctx);
        PortVerdict::Consume
    }

    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        let Some(msg) = pkt.header::<FairnessMessage>() else {
            return;
        };
        let now = ctx.now();
        if msg.origin == self.idx {
            // Our own stamp came back round the ring: one measured fairness round trip.
            self.frtt = now.saturating_sub(pkt.created).max(1);
        }
        self.received = msg;
        self.received_stamp = pkt.created;
        if msg.rate.is_finite() && msg.head != self.idx {
            self.accrue(now);
            self.allowed = msg.rate.min(self.line_iv);
            self.limit_head = msg.head;
            self.sample_allowed_max = self.sample_allowed_max.max(self.allowed);
        }
        self.try_send(ctx);
    }

    fn held(&self, f: &mut dyn FnMut(&Packet)) {
        self.client
            .iter()
            .chain(&self.ptq)
            .chain(&self.stq)
            .for_each(f);
    }

    fn report(&self, _now: Time, out: &mut Vec<(String, Value)>) {
        let s = &self.stats;
        out.push(("client_max_pkts".into(), json!(s.client_max)));
        out.push(("client_drops".into(), json!(s.client_drops)));
        out.push(("stq_max_bytes".into(), json!(s.stq_max)));
        out.push(("stq_drops".into(), json!(s.stq_drops)));
        out.push(("fairness_messages".into(), json!(s.messages)));
        out.push(("frtt_s".into(), json!(to_secs(self.frtt))));
        let frac = if s.intervals > 0 {
            s.congested_intervals as f64 / s.intervals as f64
        } else {
            0.0
        };
        out.push(("congested_fraction".into(), json!(frac)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends 1500-byte frames through an add shaper at 150 Mb/s for 100 ms, each frame
    /// starting one 1500-byte transit frame at 622 Mb/s (19.29 µs) after it became
    /// eligible; returns the number of frames started.
    fn frames_behind_transit(limit: f64) -> u64 {
        let rate = 150e6;
        let size = 1500.0;
        let delay = tx_time(1500, 622_000_000);
        let end = crate::time::millis(100.0);
        let mut sh = AddShaper {
            credit: limit,
            at: 0,
        };
        let (mut now, mut sent) = (0, 0);
        loop {
            sh.accrue(now, rate, limit);
            let eligible = sh.eligible_at(now, rate);
            if eligible + delay > end {
                return sent;
            }
            let start = eligible + delay;
            sh.accrue(start, rate, limit);
            assert!(sh.credit >= -1e-6, "a frame started on a negative credit");
            assert!(sh.credit <= limit, "the credit went over its limit");
            sh.credit -= size;
            sent += 1;
            now = start;
        }
    }

    #[test]
    fn add_shaper_keeps_the_allowed_rate_behind_transit_frames() {
        // With a credit of one frame the wait behind a transit frame (19.29 µs, less
        // than the 80 µs between frames at 150 Mb/s) is made up: 100 ms at 150 Mb/s is
        // 1250 frames; the initial credit adds at most one, the last frame's wait may
        // cut one.
        let n = frames_behind_transit(1500.0);
        assert!(
            (1249..=1251).contains(&n),
            "{n} frames with a 1500-B credit"
        );
        // Without credit every frame loses its wait: one frame per 80 + 19.29 µs,
        // 100 ms / 99.29 µs = 1007.1 frames, so 1007 or 1008 (the first is free).
        let strict = frames_behind_transit(0.0);
        assert!(
            (1007..=1008).contains(&strict),
            "{strict} frames with no credit"
        );
        // A zero rate never makes a negative credit eligible; a non-negative one is.
        let sh = AddShaper {
            credit: -1.0,
            at: 0,
        };
        assert_eq!(sh.eligible_at(5, 0.0), NEVER);
        assert_eq!(sh.eligible_at(5, 8e12), 6);
        let sh = AddShaper { credit: 0.0, at: 0 };
        assert_eq!(sh.eligible_at(5, 0.0), 5);
    }

    #[test]
    fn stq_thresholds_change_the_congestion_state_exactly_where_they_lie() {
        let size = 256 * 1024u64;
        let line = 7775.0; // 622 Mb/s in bytes per 100 µs
        let mut cfg = RprConfig::default();
        // Aggressive, dual queue: congested from the low threshold (12.5% = 32768 B) on,
        // whatever the rates, or from rateLowThreshold = 0.855 of the line rate on,
        // whatever the STQ.
        let low = size / 8;
        let thr = 0.9 * 0.95 * line;
        assert!(!congested(&cfg, low - 1, size, thr - 1e-6, line));
        assert!(congested(&cfg, low, size, 0.0, line));
        assert!(congested(&cfg, 0, size, thr, line));
        // The STQ condition alone (aggressive_on_rates = false): the rate no longer counts.
        cfg.aggressive_on_rates = false;
        assert!(!congested(&cfg, low - 1, size, line, line));
        assert!(congested(&cfg, low, size, 0.0, line));
        cfg.aggressive_on_rates = true;
        // Conservative, dual queue: from the medium threshold (18.75% = 49152 B), or on
        // rates from rateLowThreshold = 0.855 of the line rate.
        cfg.mode = FairnessMode::Conservative;
        let medium = size * 3 / 16;
        assert!(!congested(&cfg, medium - 1, size, 0.0, line));
        assert!(congested(&cfg, medium, size, 0.0, line));
        assert!(!congested(&cfg, 0, size, thr - 1e-6, line));
        assert!(congested(&cfg, 0, size, thr, line));
        // Single queue: rates only.
        cfg.design = BufferDesign::Single;
        assert!(!congested(&cfg, size, size, thr - 1e-6, line));
        assert!(congested(&cfg, 0, size, thr, line));
    }

    /// One aging interval of a scripted station: bytes added and forwarded, STQ depth
    /// at its end, and the message last received from downstream.
    struct Step {
        add: u64,
        fw: u64,
        stq: u64,
        recv: FairnessMessage,
    }

    const FULL: FairnessMessage = FairnessMessage {
        rate: f64::INFINITY,
        head: NONE,
        origin: NONE,
    };

    /// Runs a script through the station's rate counters, congestion detection and
    /// advertisement (aggressive mode, dual queue); returns per interval (congested,
    /// lpAddRate, lpAddRate + lpFwRate, advertised rate, head).
    fn run_script(idx: u32, steps: &[Step]) -> Vec<(bool, f64, f64, f64, u32)> {
        let cfg = RprConfig::default();
        let line = 622e6 / 8.0 * 100e-6;
        let mut rc = RateCounters::new(cfg.age_coef, cfg.lp_coef);
        steps
            .iter()
            .map(|s| {
                rc.age(s.add, s.fw);
                let sum = rc.lp_add_rate + rc.lp_fw_rate;
                let c = congested(&cfg, s.stq, cfg.stq_size, sum, line);
                let local = if c { rc.lp_add_rate } else { f64::INFINITY };
                let (rate, head) = advertisement(idx, local, s.recv, rc.lp_fw_rate);
                (c, rc.lp_add_rate, sum, rate, head)
            })
            .collect()
    }

    #[test]
    fn aggressive_head_advertises_its_add_rate_on_stq_or_transmit_rate() {
        // Line rate 622 Mb/s = 7775 bytes per 100-us interval; rateLowThreshold is
        // 0.855 of it (6647.625 bytes); the STQ low threshold 32768 bytes.
        let line = 7775.0;
        let thr = 0.9 * 0.95 * line;
        let low = 32768;
        let mut steps = Vec::new();
        // A: 240 Mb/s of transit, nothing added, empty STQ: never congested, "full rate".
        for _ in 0..50 {
            steps.push(Step {
                add: 0,
                fw: 3000,
                stq: 0,
                recv: FULL,
            });
        }
        // B: the STQ at its low threshold, little added: congested at once, whatever
        // the rates.
        for _ in 0..5 {
            steps.push(Step {
                add: 100,
                fw: 3000,
                stq: low,
                recv: FULL,
            });
        }
        // C: the STQ empty but the station transmitting at line rate (100 bytes added,
        // 7675 forwarded per interval): congested from the interval its low-pass transmit
        // rate reaches rateLowThreshold on.
        for _ in 0..400 {
            steps.push(Step {
                add: 100,
                fw: 7675,
                stq: 0,
                recv: FULL,
            });
        }
        let out = run_script(4, &steps);
        for (k, &(c, lp_add, sum, rate, head)) in out.iter().enumerate() {
            let stq = steps[k].stq;
            // The standard's rule, per interval.
            let expect_c = stq >= low || sum >= thr;
            assert_eq!(c, expect_c, "interval {k}");
            if expect_c {
                // The head advertises its own lpAddRate, below "full rate".
                assert_eq!((rate, head), (lp_add, 4), "interval {k}");
            } else {
                assert_eq!((rate, head), (f64::INFINITY, NONE), "interval {k}");
            }
        }
        // A is never congested; B is from its first interval; C passes the rate
        // threshold with an empty STQ, and then advertises about 100 bytes per interval
        // (8 Mb/s), far below the line rate.
        assert!(out[..50].iter().all(|o| !o.0));
        assert!(out[50..55].iter().all(|o| o.0));
        let first = 55
            + out[55..]
                .iter()
                .position(|o| o.0)
                .expect("congested on rates");
        assert!(first > 55 && out[first - 1].2 < thr && out[first].2 >= thr);
        assert!(out[first..].iter().all(|o| o.0));
        let last = out.last().unwrap();
        assert!((last.3 - 100.0).abs() < 10.0, "advertised {}", last.3);
    }

    #[test]
    fn received_rate_is_passed_on_inside_the_domain_and_ends_at_its_head() {
        let from5 = FairnessMessage {
            rate: 50.0,
            head: 5,
            origin: 5,
        };
        // Not congested (240 Mb/s transit), lpFwRate above the received 50: passes it on.
        let mut steps: Vec<Step> = (0..100)
            .map(|_| Step {
                add: 0,
                fw: 3000,
                stq: 0,
                recv: from5,
            })
            .collect();
        // Congested on the STQ but adding more than 50 (its lpAddRate ~ 1000): the
        // downstream head's lower rate travels on.
        steps.extend((0..300).map(|_| Step {
            add: 1000,
            fw: 3000,
            stq: 40_000,
            recv: from5,
        }));
        // Transit below the received rate: the domain ends here, "full rate" upstream.
        steps.extend((0..600).map(|_| Step {
            add: 0,
            fw: 20,
            stq: 0,
            recv: from5,
        }));
        let out = run_script(4, &steps);
        // (from the third interval on: lpFwRate starts at 0 and passes 50 in the third).
        assert_eq!((out[1].3, out[1].4), (f64::INFINITY, NONE));
        assert!(out[2..100].iter().all(|o| !o.0 && (o.3, o.4) == (50.0, 5)));
        assert!(out[300..400]
            .iter()
            .all(|o| o.0 && o.1 > 50.0 && (o.3, o.4) == (50.0, 5)));
        assert_eq!((out[999].3, out[999].4), (f64::INFINITY, NONE));
        // A message back at its own head ends there: station 5 treats its own rate as
        // "full rate" (and, not congested, advertises "full rate").
        let own = run_script(
            5,
            &[Step {
                add: 0,
                fw: 3000,
                stq: 0,
                recv: from5,
            }],
        );
        assert_eq!((own[0].3, own[0].4), (f64::INFINITY, NONE));
    }

    #[test]
    fn fairness_message_round_trips_full_rate() {
        let mut p = Packet::default();
        for m in [
            FairnessMessage {
                rate: f64::INFINITY,
                head: NONE,
                origin: NONE,
            },
            FairnessMessage {
                rate: 1554.75,
                head: 4,
                origin: 2,
            },
        ] {
            p.set_header(m);
            assert_eq!(p.header::<FairnessMessage>(), Some(m));
        }
    }
}
