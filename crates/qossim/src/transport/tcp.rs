//! TCP Reno, NewReno and CUBIC with an infinite backlog, and its receiver.
//!
//! # Units and packets
//! Sequence numbers count segments, from 0. Every data segment is `packet_size` bytes on
//! the wire, of which `header_bytes` are TCP/IP header; goodput counts payload bytes
//! (`packet_size - header_bytes` per segment delivered in order). A data segment carries
//! its segment number in [`Packet::seq`], its transmission time in [`Packet::echo`] and the
//! sender's agent id in [`Packet::ack`] (so the receiver can address its ACKs). An ACK
//! ([`PacketKind::Ack`], `ack_size` bytes) carries the cumulative next-expected segment in
//! `ack`, the segment that triggered it in `seq`, and echoes the segment's `echo`.
//!
//! # Sender (ns-2's `Agent/TCP/Reno`, in the RFC 5681 formulation)
//! - Slow start (`cwnd += 1` per new ACK while `cwnd < ssthresh`), then congestion
//!   avoidance (`cwnd += 1/cwnd` per new ACK). The usable window is
//!   `min(floor(cwnd), wnd)` segments beyond the first unacknowledged one.
//! - Fast retransmit on exactly the `dupack_threshold`-th (3rd) duplicate ACK:
//!   `ssthresh = max(floor(flight/2), 2)` with `flight = snd_nxt - snd_una`,
//!   `cwnd = ssthresh + 3`, the first unacknowledged segment is resent and the
//!   retransmission timer restarted. Each further duplicate ACK inflates `cwnd` by one
//!   (new segments go out when the window allows). The first ACK that acknowledges new
//!   data, partial or not, deflates `cwnd` to `ssthresh` and ends recovery (classic Reno).
//! - With `fast_retransmit_guard` (ns-2's `bugFix_`, on by default) a fast retransmit is
//!   only started if the cumulative ACK covers every segment that had been sent at the
//!   last fast retransmit or timeout (`snd_una >= recover`, the RFC 6582 test); this
//!   avoids several window reductions for one window of losses. Without it, every third
//!   duplicate ACK outside recovery triggers one.
//! - NewReno ([`Congestion::NewReno`], RFC 6582) changes fast recovery only: an ACK of new
//!   data that does not cover `recover` (the highest segment sent when recovery began) is
//!   *partial*: the first unacknowledged segment is resent at once, `cwnd` is deflated by
//!   the segments it acknowledged and one is added back, the sender stays in recovery,
//!   and the first partial ACK restarts the retransmission timer (the RFC's "impatient"
//!   variant). Every duplicate ACK in recovery inflates `cwnd` by one. The ACK that covers
//!   `recover` ends recovery with `cwnd = ssthresh`.
//! - CUBIC ([`Congestion::Cubic`], RFC 9438, see [`super::cubic`]) recovers as NewReno,
//!   with ssthresh = max(0.7 x flight, 2) at a congestion event, and grows the window in
//!   congestion avoidance along the cubic curve (or the Reno-friendly estimate where that
//!   is larger), timed by a smoothed RTT of exact samples (not the 10-ms ticks).
//! - DCTCP ([`Congestion::Dctcp`], RFC 8257, see [`super::dctcp`]) recovers and grows as
//!   NewReno, and reduces on an ECN echo to `cwnd (1 − α/2)` instead of half the flight;
//!   its receiver echoes each segment's CE state exactly instead of latching it.
//! - ECN ([`TcpConfig::ecn`], RFC 3168): new data segments carry ECT (retransmissions
//!   do not). An ACK with ECE, outside fast recovery and once per window of data
//!   (`snd_una` past the highest segment sent at the last reduction), reduces as a loss
//!   would (ssthresh as at a fast retransmit, `cwnd = ssthresh`, no retransmission, no
//!   growth on that ACK) and the next new segment carries CWR. The receiver sets ECE on
//!   every ACK from a CE-marked segment on until a segment with CWR arrives.
//! - SACK ([`TcpConfig::sack`], RFC 2018 and RFC 6675, see [`super::sack`]): the
//!   receiver reports up to three SACK blocks and the sender keeps a scoreboard. An ACK
//!   that SACKs a segment not SACKed before is a duplicate ACK, even if it also
//!   acknowledges new data; recovery starts at the `dupack_threshold`-th duplicate ACK or
//!   as soon as the first unacknowledged segment is lost by `IsLost` (that many segments
//!   above it SACKed), under the same guard. Then `ssthresh = cwnd` = the reduced window
//!   (half the flight, CUBIC's β x flight), the first unacknowledged segment is resent
//!   (unless an earlier recovery resent it), and on every ACK while `cwnd - pipe >= 1`
//!   the sender sends what `NextSeg` gives: the next lost hole, else new data, else the
//!   next un-SACKed hole. A partial ACK whose triggering segment (the ACK echoes its
//!   transmission time) left after recovery began, i.e. a retransmission of this
//!   recovery, also resends the first unacknowledged segment at once if it has not been
//!   resent (NewReno's inference, see [`super::sack`]). No window inflation, no growth
//!   in recovery, the retransmission timer restarted by every ACK of new data (RFC
//!   6298), Karn's rule for every retransmission; the ACK that covers `recover` ends
//!   recovery (`cwnd = ssthresh`). Reno and NewReno recover alike with SACK. A timeout
//!   clears the scoreboard; later ACKs fill it again and the go-back-N resend skips the
//!   segments SACKed by then. No limited transmit, no D-SACK.
//! - Retransmission timeout: `ssthresh = max(floor(flight/2), 2)`, `cwnd = 1`, go-back-N
//!   from the first unacknowledged segment, exponential backoff (the RTO doubles on each
//!   successive timeout, up to `max_rto`).
//! - RTT estimation as ns-2 without timestamps: one segment at a time is timed; the sample
//!   is the number of clock ticks (`tick`, 10 ms) between its transmission and the ACK
//!   that covers it, at least 1; samples feed Jacobson/Karels in ns-2's fixed point
//!   (srtt scaled by 8, rttvar by 4): `RTO = srtt + 4 rttvar` ticks. Karn's rule: a
//!   retransmission (fast or timeout) cancels the timing, and only a segment sent for the
//!   first time is timed; a valid sample resets the backoff. The timeout is
//!   `max(RTO, min_rto) x backoff`, at most `max_rto`, at least two ticks; before the
//!   first sample `RTO = init_rto` (3 s). After more than three doublings the smoothed RTT
//!   is discarded so that the next sample re-initialises the estimator (ns-2).
//! - Timestamps ([`TcpConfig::timestamps`], RFC 7323's RTTM, off by default): every ACK
//!   that acknowledges new data is a valid sample, `now − TSecr` in the same ticks, and
//!   resets the backoff; no segment is timed and Karn's rule has nothing left to do, since
//!   the echo tells which transmission an ACK answers. The receiver echoes, as RFC 7323
//!   says, the timestamp of the last segment that arrived at or below the cumulative ACK
//!   it last sent: a duplicate ACK echoes the last in-order segment's, the ACK of a
//!   retransmission that fills a hole echoes the retransmission's, a delayed ACK the
//!   first of the two segments it covers. Every segment and ACK carries the option's
//!   [`TS_OPTION_BYTES`] (10 B padded to 12) on the wire on top of `packet_size` and
//!   `ack_size`, the payload unchanged, as ns-3 does when its timestamp option is on (the
//!   option lengthens the header; the segment size counts payload).
//! - One retransmission timer, restarted by every ACK of new data while data is
//!   outstanding. It is kept lazily: the agent remembers the deadline and has at most a
//!   few timer events pending; an event that fires early re-arms itself at the deadline,
//!   and a stale one (older generation) is ignored, so restarting costs nothing.
//!
//! # Receiver
//! Acknowledges every data segment with the cumulative next-expected number (or, with
//! delayed ACKs, every second in-order segment or after `delayed_ack`, and immediately for
//! a segment out of order, a duplicate, or one that fills a gap). Out-of-order segments
//! are buffered. It calls [`crate::world::Flows::delivered`] once per distinct segment,
//! when it first arrives, so group and flow throughput count every segment once (wire
//! bytes, no duplicate retransmissions); goodput (in-order payload) is reported
//! separately.

use super::cubic::{Cubic, CubicParams};
use super::dctcp::{Dctcp, DctcpParams};
pub use super::receiver::{TcpReceiver, TcpReceiverConfig};
use super::sack::{SackOption, Scoreboard};
use crate::net::{marks, AgentId, FlowId, Packet, PacketKind, NONE};
use crate::time::{to_secs, Time, NEVER, PS_PER_MS, PS_PER_S};
use crate::traffic::PacketTemplate;
use crate::world::{Agent, Ctx};
use serde_json::{json, Value};

/// Timer kind of a delayed start.
const KIND_BEGIN: u32 = u32::MAX - 1;
/// Timer generations live in `0..GEN_SPAN`, below the reserved kinds.
const GEN_SPAN: u32 = u32::MAX - 1;

#[inline]
pub(super) fn next_gen(g: u32) -> u32 {
    (g + 1) % GEN_SPAN
}

/// The congestion control of a [`TcpRenoSender`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Congestion {
    /// Reno (RFC 5681, ns-2's `Agent/TCP/Reno`): the first new ACK ends fast recovery.
    #[default]
    Reno,
    /// NewReno (RFC 6582): partial ACKs keep the sender in fast recovery.
    NewReno,
    /// CUBIC (RFC 9438) window growth and β = 0.7 over NewReno's recovery.
    Cubic(CubicParams),
    /// DCTCP (RFC 8257): NewReno with ECN echoes reducing the window by α/2.
    Dctcp(DctcpParams),
}

impl Congestion {
    /// The name a scenario gives it (`reno`, `newreno`, `cubic`).
    pub fn name(&self) -> &'static str {
        match self {
            Congestion::Reno => "reno",
            Congestion::NewReno => "newreno",
            Congestion::Cubic(_) => "cubic",
            Congestion::Dctcp(_) => "dctcp",
        }
    }
}

/// Configuration of a [`TcpRenoSender`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    /// Size of a data segment on the wire, bytes (header included).
    pub packet_size: u32,
    /// TCP/IP header bytes in each segment (not counted in goodput).
    pub header_bytes: u32,
    /// Initial congestion window, segments.
    pub init_cwnd: f64,
    /// Initial slow-start threshold, segments.
    pub init_ssthresh: f64,
    /// Advertised (receiver) window, segments.
    pub wnd: u32,
    /// Duplicate ACKs that trigger a fast retransmit.
    pub dupack_threshold: u32,
    /// No second fast retransmit for losses of the same window (ns-2's `bugFix_`).
    pub fast_retransmit_guard: bool,
    /// Clock granularity of RTT measurement.
    pub tick: Time,
    /// Minimum retransmission timeout (applied before backoff).
    pub min_rto: Time,
    /// Retransmission timeout before the first RTT sample.
    pub init_rto: Time,
    /// Maximum retransmission timeout (after backoff).
    pub max_rto: Time,
    /// Flow group the connection is counted in (when the flow is opened at start).
    pub group: u32,
    /// Delay between the agent's start and the first segment.
    pub start_delay: Time,
    /// Congestion control (Reno unless set).
    pub congestion: Congestion,
    /// ECN-capable (RFC 3168): ECT on new data, a window reduction per ECE-marked window.
    pub ecn: bool,
    /// SACK-based loss recovery (RFC 6675; the receiver must report SACK blocks, see
    /// [`TcpReceiverConfig::sack`]).
    pub sack: bool,
    /// The timestamp option (RFC 7323): an RTT sample from every ACK of new data, and
    /// [`TS_OPTION_BYTES`] more on the wire per segment (the receiver must echo them, see
    /// [`TcpReceiverConfig::timestamps`]).
    pub timestamps: bool,
}

/// Bytes the timestamp option adds to every segment and ACK: 10 of option, padded to
/// the header's 4-byte words.
pub const TS_OPTION_BYTES: u32 = 12;

impl Default for TcpConfig {
    /// 1000-byte segments with 40-byte headers, initial window 1, no window limit
    /// (10^6 segments), 3 duplicate ACKs with the guard on, 10 ms tick, RTO 200 ms min,
    /// 3 s initial, 64 s max, group 0, no start delay.
    fn default() -> Self {
        TcpConfig {
            packet_size: 1000,
            header_bytes: 40,
            init_cwnd: 1.0,
            init_ssthresh: 1e6,
            wnd: 1_000_000,
            dupack_threshold: 3,
            fast_retransmit_guard: true,
            tick: 10 * PS_PER_MS,
            min_rto: 200 * PS_PER_MS,
            init_rto: 3 * PS_PER_S,
            max_rto: 64 * PS_PER_S,
            group: 0,
            start_delay: 0,
            congestion: Congestion::Reno,
            ecn: false,
            sack: false,
            timestamps: false,
        }
    }
}

impl TcpConfig {
    /// Payload bytes per segment.
    pub fn payload(&self) -> u32 {
        self.packet_size.saturating_sub(self.header_bytes)
    }

    /// A data segment's size on the wire: `packet_size`, plus the timestamp option's
    /// [`TS_OPTION_BYTES`] when it is on.
    pub fn wire_size(&self) -> u32 {
        self.packet_size + if self.timestamps { TS_OPTION_BYTES } else { 0 }
    }
}

/// Counters of a [`TcpRenoSender`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpStats {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Segments sent that had been sent before.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// ACKs received.
    pub acks: u64,
    /// RTT samples taken.
    pub rtt_samples: u64,
    /// Data segments sent from the measurement start on (see
    /// [`TcpRenoSender::measure_from`]), retransmissions included.
    pub segments_measured: u64,
    /// Of those, segments that left the sender marked IN ([`marks::IN_PROFILE`], set by
    /// the marker or the template).
    pub in_measured: u64,
    /// Window reductions on ECN echoes (ECE).
    pub ecn_reductions: u64,
}

/// A function applied to every data segment before it is sent (a host-side profiler that
/// marks packets IN or OUT, for instance).
pub type Marker = Box<dyn FnMut(&mut Packet, Time)>;

/// A TCP Reno sender with an infinite backlog (see the module documentation).
pub struct TcpRenoSender {
    cfg: TcpConfig,
    tmpl: PacketTemplate,
    flow: FlowId,
    me: AgentId,
    marker: Option<Marker>,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    recover: u64,
    srtt8: i64,
    rttvar4: i64,
    rtxcur: Time,
    backoff: u64,
    timed: Option<(u64, Time)>,
    rto_deadline: Time,
    timer_at: Time,
    timer_gen: u32,
    stats: TcpStats,
    trace: bool,
    trace_ids: Option<[usize; 3]>,
    started: bool,
    measure_from: Time,
    cubic: Option<Cubic>,
    /// Smoothed RTT of exact samples, seconds (0: no sample yet), for CUBIC.
    srtt_exact: f64,
    /// A partial ACK has restarted the timer in this recovery (NewReno).
    partial_seen: bool,
    /// ECN: no further reduction until `snd_una` reaches this.
    ecn_recover: u64,
    /// ECN: the next new segment carries CWR.
    cwr_pending: bool,
    /// DCTCP's estimate and windows.
    dctcp: Option<Dctcp>,
    /// SACK: the scoreboard (`None` without SACK).
    sack: Option<Scoreboard>,
    /// SACK: when the current (or last) recovery began.
    recovery_start: Time,
}

impl TcpRenoSender {
    /// A sender whose data segments follow `tmpl` (source node, receiver node and
    /// receiver agent, class, initial marks, route).
    pub fn new(cfg: TcpConfig, tmpl: PacketTemplate) -> Self {
        TcpRenoSender {
            cfg,
            tmpl,
            flow: NONE,
            me: NONE,
            marker: None,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: cfg.init_cwnd.max(1.0),
            ssthresh: cfg.init_ssthresh,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            srtt8: 0,
            rttvar4: 0,
            rtxcur: cfg.init_rto,
            backoff: 1,
            timed: None,
            rto_deadline: NEVER,
            timer_at: NEVER,
            timer_gen: 0,
            stats: TcpStats::default(),
            trace: false,
            trace_ids: None,
            started: false,
            measure_from: 0,
            cubic: match cfg.congestion {
                Congestion::Cubic(p) => Some(Cubic::new(p)),
                _ => None,
            },
            srtt_exact: 0.0,
            partial_seen: false,
            ecn_recover: 0,
            cwr_pending: false,
            dctcp: match cfg.congestion {
                Congestion::Dctcp(p) => Some(Dctcp::new(p)),
                _ => None,
            },
            sack: cfg.sack.then(Scoreboard::new),
            recovery_start: 0,
        }
    }

    /// Counts segments sent (and how many of them are IN) from `t` on, in
    /// [`TcpStats::segments_measured`] and [`TcpStats::in_measured`] (from time 0 unless
    /// set: a warm-up is excluded this way).
    pub fn measure_from(mut self, t: Time) -> Self {
        self.measure_from = t;
        self
    }

    /// Uses an already opened flow instead of opening one in `cfg.group` at start.
    pub fn with_flow(mut self, flow: FlowId) -> Self {
        self.flow = flow;
        self
    }

    /// Applies `marker` to every data segment (retransmissions included) before sending.
    pub fn with_marker(mut self, marker: Marker) -> Self {
        self.marker = Some(marker);
        self
    }

    /// Records `NAME.cwnd`, `NAME.ssthresh` (segments, at every change) and `NAME.rtt`
    /// (seconds, every sample) through the world's recorder, `NAME` being the agent name.
    pub fn trace(mut self, on: bool) -> Self {
        self.trace = on;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// The flow id ([`NONE`] before the start).
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// Congestion window, segments.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Slow-start threshold, segments.
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// First unacknowledged segment.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// One past the highest segment sent.
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }

    /// True during fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// Counters.
    pub fn stats(&self) -> TcpStats {
        self.stats
    }

    /// DCTCP's state ([`Congestion::Dctcp`] only).
    pub fn dctcp(&self) -> Option<&Dctcp> {
        self.dctcp.as_ref()
    }

    /// Smoothed RTT, if any sample was taken since the last reset.
    pub fn srtt(&self) -> Option<Time> {
        (self.srtt8 > 0).then(|| (self.srtt8 as u64 * self.cfg.tick) / 8)
    }

    /// The current retransmission timeout, backoff included.
    pub fn rto(&self) -> Time {
        let base = self.rtxcur.max(self.cfg.min_rto);
        base.saturating_mul(self.backoff)
            .min(self.cfg.max_rto)
            .max(2 * self.cfg.tick)
    }

    /// The current backoff multiplier.
    pub fn backoff(&self) -> u64 {
        self.backoff
    }

    fn begin(&mut self, ctx: &mut Ctx) {
        self.started = true;
        let now = ctx.now();
        if self.flow == NONE {
            self.flow = ctx.flows.open(self.cfg.group, now);
        }
        if self.trace {
            let me = ctx.me;
            let name = ctx.agents().name(me).to_string();
            self.trace_ids = Some([
                ctx.rec.id(&format!("{name}.cwnd"), "segments"),
                ctx.rec.id(&format!("{name}.ssthresh"), "segments"),
                ctx.rec.id(&format!("{name}.rtt"), "s"),
            ]);
            self.trace_window(ctx);
        }
        self.send_much(ctx);
    }

    fn trace_window(&self, ctx: &mut Ctx) {
        if let Some(ids) = self.trace_ids {
            let now = ctx.now();
            ctx.rec.push(ids[0], now, self.cwnd);
            ctx.rec
                .push(ids[1], now, self.ssthresh.min(self.cfg.wnd as f64));
        }
    }

    /// Sets the retransmission deadline, scheduling a timer event only if none is
    /// pending at or before it.
    fn set_deadline(&mut self, deadline: Time, ctx: &mut Ctx) {
        self.rto_deadline = deadline;
        if deadline == NEVER || (self.timer_at != NEVER && self.timer_at <= deadline) {
            return;
        }
        self.timer_gen = next_gen(self.timer_gen);
        ctx.timer_at(deadline, self.timer_gen);
        self.timer_at = deadline;
    }

    fn restart_timer(&mut self, ctx: &mut Ctx) {
        let d = ctx.now() + self.rto();
        self.set_deadline(d, ctx);
    }

    fn send_segment(&mut self, seq: u64, ctx: &mut Ctx) {
        let now = ctx.now();
        let mut pkt = self.tmpl.packet(self.flow, self.cfg.wire_size(), seq, now);
        pkt.ack = self.me as u64;
        pkt.echo = now;
        if let Some(m) = self.marker.as_mut() {
            m(&mut pkt, now);
        }
        self.stats.segments_sent += 1;
        if now >= self.measure_from {
            self.stats.segments_measured += 1;
            self.stats.in_measured += u64::from(pkt.has(marks::IN_PROFILE));
        }
        if seq >= self.snd_max {
            if self.cfg.ecn {
                pkt.set(marks::ECN_ECT);
                if self.cwr_pending {
                    pkt.set(marks::TCP_CWR);
                    self.cwr_pending = false;
                }
            }
            self.snd_max = seq + 1;
            if self.timed.is_none() && !self.cfg.timestamps {
                self.timed = Some((seq, now));
            }
        } else {
            self.stats.retransmits += 1;
        }
        ctx.flows.sent(&pkt, now);
        ctx.send(pkt);
        if self.rto_deadline == NEVER {
            self.restart_timer(ctx);
        }
    }

    fn send_much(&mut self, ctx: &mut Ctx) {
        let win = (self.cwnd.floor() as u64).min(self.cfg.wnd as u64).max(1);
        while self.snd_nxt < self.snd_una + win {
            let s = self.snd_nxt;
            self.snd_nxt += 1;
            if self.sack.as_ref().is_some_and(|b| b.is_sacked(s)) {
                continue;
            }
            self.send_segment(s, ctx);
        }
    }

    fn half_flight(&self) -> f64 {
        (((self.snd_nxt - self.snd_una) / 2) as f64).max(2.0)
    }

    fn rtt_sample(&mut self, sent: Time, ctx: &mut Ctx) {
        let now = ctx.now();
        let tick = self.cfg.tick;
        let ticks = ((now / tick) - (sent / tick)).max(1) as i64;
        if self.srtt8 != 0 {
            let mut delta = ticks - (self.srtt8 >> 3);
            self.srtt8 += delta;
            if self.srtt8 <= 0 {
                self.srtt8 = 1;
            }
            delta = delta.abs() - (self.rttvar4 >> 2);
            self.rttvar4 += delta;
            if self.rttvar4 <= 0 {
                self.rttvar4 = 1;
            }
        } else {
            self.srtt8 = ticks << 3;
            self.rttvar4 = ticks << 1;
        }
        self.rtxcur = (((self.rttvar4 << 3) + self.srtt8) >> 3) as u64 * tick;
        self.stats.rtt_samples += 1;
        if self.cubic.is_some() {
            let x = to_secs(now - sent);
            self.srtt_exact = if self.srtt_exact == 0.0 {
                x
            } else {
                self.srtt_exact + (x - self.srtt_exact) / 8.0
            };
        }
        if let Some(ids) = self.trace_ids {
            ctx.rec.push(ids[2], now, to_secs(now - sent));
        }
    }

    /// An ACK `ack` (with ECE or not) echoing the transmission time `echo` (with
    /// timestamps, the time the receiver's echo rule chose).
    fn on_ack(&mut self, ack: u64, ece: bool, echo: Time, ctx: &mut Ctx) {
        self.stats.acks += 1;
        if let Some(d) = self.dctcp.as_mut() {
            let una = ack.min(self.snd_max);
            if una > self.snd_una {
                d.on_ack(una - self.snd_una, ece, una, self.snd_nxt);
            }
        }
        if ece && self.cfg.ecn && !self.in_recovery && ack > self.snd_una.max(self.ecn_recover) {
            return self.ecn_reduce(ack, echo, ctx);
        }
        if ack > self.snd_una {
            self.sample_if_covered(ack, echo, ctx);
            if self.in_recovery {
                if self.cfg.congestion != Congestion::Reno && ack < self.recover {
                    self.partial_ack(ack, ctx);
                    return;
                }
                self.cwnd = self.ssthresh;
                self.in_recovery = false;
            } else if self.cwnd < self.ssthresh {
                self.cwnd += 1.0;
            } else if let Some(c) = self.cubic.as_mut() {
                self.cwnd = c.on_ack(ctx.now(), self.cwnd, self.srtt_exact);
            } else {
                self.cwnd += 1.0 / self.cwnd;
            }
            self.advance(ack, ctx);
        } else if ack == self.snd_una && self.snd_max > self.snd_una {
            self.dupacks += 1;
            let k = self.cfg.dupack_threshold;
            if self.dupacks == k && !self.in_recovery {
                if !self.cfg.fast_retransmit_guard || self.snd_una >= self.recover {
                    self.fast_retransmit(ctx);
                }
            } else if self.in_recovery
                && (self.dupacks > k || self.cfg.congestion != Congestion::Reno)
            {
                self.cwnd += 1.0;
                self.send_much(ctx);
                self.trace_window(ctx);
            }
        }
    }

    /// An ECE-marked ACK `ack` (new data, a window after the last reduction): reduce as a
    /// loss would, without retransmitting or growing.
    fn ecn_reduce(&mut self, ack: u64, echo: Time, ctx: &mut Ctx) {
        self.stats.ecn_reductions += 1;
        self.sample_if_covered(ack, echo, ctx);
        self.ssthresh = match &self.dctcp {
            Some(d) => d.reduced(self.cwnd),
            None => self.reduced(),
        };
        self.cwnd = self.ssthresh;
        self.ecn_recover = self.snd_max;
        self.cwr_pending = true;
        self.advance(ack, ctx);
    }

    /// Takes the RTT sample of the timed segment if `ack` covers it (Karn: a valid
    /// sample also resets the backoff). With timestamps every ACK of new data is a valid
    /// sample, from its echoed time `echo`.
    fn sample_if_covered(&mut self, ack: u64, echo: Time, ctx: &mut Ctx) {
        if self.cfg.timestamps {
            self.backoff = 1;
            return self.rtt_sample(echo, ctx);
        }
        if let Some((seq, sent)) = self.timed {
            if ack > seq {
                self.timed = None;
                self.backoff = 1;
                self.rtt_sample(sent, ctx);
            }
        }
    }

    /// Moves `snd_una` to `ack` (new data acknowledged, the window already adjusted):
    /// restarts or stops the retransmission timer and sends what the window allows.
    fn advance(&mut self, ack: u64, ctx: &mut Ctx) {
        self.dupacks = 0;
        self.snd_una = ack.min(self.snd_max);
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        if self.snd_una < self.snd_max {
            self.restart_timer(ctx);
        } else {
            self.rto_deadline = NEVER;
        }
        self.send_much(ctx);
        self.trace_window(ctx);
    }

    /// NewReno's partial ACK `ack` (new data, below `recover`) in fast recovery.
    fn partial_ack(&mut self, ack: u64, ctx: &mut Ctx) {
        let ack = ack.min(self.snd_max);
        let newly = (ack - self.snd_una) as f64;
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        self.dupacks = 0;
        self.timed = None;
        self.send_segment(ack, ctx);
        self.cwnd = (self.cwnd - newly).max(0.0) + 1.0;
        if !self.partial_seen {
            self.partial_seen = true;
            self.restart_timer(ctx);
        }
        self.send_much(ctx);
        self.trace_window(ctx);
    }

    /// ssthresh after a congestion event: half the flight (Reno, NewReno) or CUBIC's
    /// β x flight.
    fn reduced(&mut self) -> f64 {
        match self.cubic.as_mut() {
            Some(c) => c.congestion(self.cwnd, (self.snd_nxt - self.snd_una) as f64),
            None => self.half_flight(),
        }
    }

    fn fast_retransmit(&mut self, ctx: &mut Ctx) {
        self.stats.fast_retransmits += 1;
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.partial_seen = false;
        self.ssthresh = self.reduced();
        self.cwnd = self.ssthresh + self.cfg.dupack_threshold as f64;
        self.in_recovery = true;
        self.timed = None;
        let una = self.snd_una;
        self.send_segment(una, ctx);
        self.restart_timer(ctx);
        self.send_much(ctx);
        self.trace_window(ctx);
    }

    fn on_timeout(&mut self, ctx: &mut Ctx) {
        if self.snd_una >= self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.ssthresh = match self.cubic.as_mut() {
            Some(c) => c.timeout(self.cwnd, (self.snd_nxt - self.snd_una) as f64),
            None => self.reduced(),
        };
        self.cwnd = 1.0;
        self.in_recovery = false;
        self.dupacks = 0;
        self.timed = None;
        if self.backoff < 64 || self.rto() < self.cfg.max_rto {
            self.backoff = (self.backoff * 2).min(1 << 40);
        }
        if self.backoff > 8 {
            self.rttvar4 += self.srtt8 >> 3;
            self.srtt8 = 0;
        }
        self.snd_nxt = self.snd_una;
        if let Some(sb) = self.sack.as_mut() {
            sb.clear();
        }
        self.restart_timer(ctx);
        self.send_much(ctx);
        self.trace_window(ctx);
    }
}

/// SACK-based loss recovery (RFC 6675), see the module documentation.
impl TcpRenoSender {
    /// An ACK on a SACK connection.
    fn on_sack_ack(&mut self, pkt: &Packet, ctx: &mut Ctx) {
        let (ack, ece) = (pkt.ack, pkt.has(marks::TCP_ECE));
        let opt: Option<SackOption> = pkt.header();
        self.stats.acks += 1;
        let k = self.cfg.dupack_threshold;
        let ack = ack.min(self.snd_max);
        let una = ack.max(self.snd_una);
        let blocks = opt.as_ref().into_iter().flat_map(|o| o.blocks(ack));
        let sb = self.sack.as_mut().expect("a SACK connection");
        let fresh = sb.update(una, self.snd_max, blocks);
        if ece && self.cfg.ecn && !self.in_recovery && ack > self.snd_una.max(self.ecn_recover) {
            return self.ecn_reduce(ack, pkt.echo, ctx);
        }
        let advanced = ack > self.snd_una;
        if advanced {
            self.sample_if_covered(ack, pkt.echo, ctx);
        }
        if self.in_recovery {
            if ack >= self.recover {
                self.in_recovery = false;
                self.cwnd = self.ssthresh;
                return self.advance(ack, ctx);
            }
            if advanced {
                self.snd_una = ack;
                self.restart_timer(ctx);
                // The segment that filled the hole left after this recovery began: a
                // retransmission sent after the new first unacknowledged segment.
                if pkt.echo >= self.recovery_start {
                    if let Some(head) = self.sack.as_mut().and_then(|b| b.partial_ack()) {
                        self.resend(head, ctx);
                    }
                }
            }
            return self.sack_send(ctx);
        }
        if advanced {
            self.dupacks = 0;
        }
        if fresh > 0 {
            self.dupacks += 1;
            let lost = self.sack.as_ref().is_some_and(|b| b.is_lost(una, k));
            let guard_ok = !self.cfg.fast_retransmit_guard || una >= self.recover;
            if (self.dupacks >= k || lost) && una < self.snd_max && guard_ok {
                self.snd_una = una;
                self.snd_nxt = self.snd_nxt.max(una);
                return self.sack_recovery(ctx);
            }
        }
        if advanced {
            self.grow(ctx.now());
            self.advance(ack, ctx);
        }
    }

    /// Window growth on an ACK of new data outside recovery (as [`Self::on_ack`]).
    fn grow(&mut self, now: Time) {
        if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else if let Some(c) = self.cubic.as_mut() {
            self.cwnd = c.on_ack(now, self.cwnd, self.srtt_exact);
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
    }

    /// Enters loss recovery (RFC 6675, section 5, step 4).
    fn sack_recovery(&mut self, ctx: &mut Ctx) {
        self.stats.fast_retransmits += 1;
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.ecn_recover = self.snd_max;
        self.ssthresh = self.reduced();
        self.cwnd = self.ssthresh;
        self.in_recovery = true;
        self.recovery_start = ctx.now();
        self.timed = None;
        if let Some(head) = self.sack.as_mut().and_then(|b| b.start_recovery()) {
            self.resend(head, ctx);
        }
        self.restart_timer(ctx);
        self.sack_send(ctx);
    }

    /// Retransmits segment `seq`; if it is the segment being timed, the timing is
    /// cancelled (Karn: its ACK would not tell which transmission it answers).
    fn resend(&mut self, seq: u64, ctx: &mut Ctx) {
        if self.timed.is_some_and(|(t, _)| t == seq) {
            self.timed = None;
        }
        self.send_segment(seq, ctx);
    }

    /// Sends what `NextSeg` gives while `cwnd - pipe >= 1` (step C).
    fn sack_send(&mut self, ctx: &mut Ctx) {
        let k = self.cfg.dupack_threshold;
        let limit = self.snd_una + self.cfg.wnd as u64;
        let mut pipe = self.sack.as_ref().map_or(0, |b| b.pipe(self.snd_max, k));
        while self.cwnd - pipe as f64 >= 1.0 {
            let Some(sb) = self.sack.as_mut() else { break };
            let Some(s) = sb.next_seg(self.snd_max, self.snd_max < limit, k) else {
                break;
            };
            if s < self.snd_max {
                sb.retransmitted(s);
                self.resend(s, ctx);
            } else {
                self.send_segment(s, ctx);
            }
            self.snd_nxt = self.snd_nxt.max(s + 1);
            pipe += 1;
        }
        self.trace_window(ctx);
    }
}

impl Agent for TcpRenoSender {
    fn start(&mut self, ctx: &mut Ctx) {
        self.me = ctx.me;
        if self.cfg.start_delay > 0 {
            ctx.timer(self.cfg.start_delay, KIND_BEGIN);
        } else {
            self.begin(ctx);
        }
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        if kind == KIND_BEGIN {
            if !self.started {
                self.begin(ctx);
            }
            return;
        }
        if kind != self.timer_gen || self.timer_at == NEVER {
            return;
        }
        self.timer_at = NEVER;
        let d = self.rto_deadline;
        if d == NEVER {
            return;
        }
        if ctx.now() < d {
            self.set_deadline(d, ctx);
            return;
        }
        self.rto_deadline = NEVER;
        self.on_timeout(ctx);
    }

    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        if pkt.kind == PacketKind::Ack && self.started {
            if self.sack.is_some() {
                return self.on_sack_ack(&pkt, ctx);
            }
            self.on_ack(pkt.ack, pkt.has(marks::TCP_ECE), pkt.echo, ctx);
        }
    }

    fn report(&self, _now: Time, out: &mut Vec<(String, Value)>) {
        let s = &self.stats;
        out.push(("segments_sent".into(), json!(s.segments_sent)));
        out.push(("retransmits".into(), json!(s.retransmits)));
        out.push(("timeouts".into(), json!(s.timeouts)));
        out.push(("fast_retransmits".into(), json!(s.fast_retransmits)));
        out.push(("segments_measured".into(), json!(s.segments_measured)));
        out.push(("in_segments_measured".into(), json!(s.in_measured)));
        out.push(("cwnd".into(), json!(self.cwnd)));
        out.push((
            "ssthresh".into(),
            json!(self.ssthresh.min(self.cfg.wnd as f64)),
        ));
        if let Some(srtt) = self.srtt() {
            out.push(("srtt_s".into(), json!(to_secs(srtt))));
        }
        out.push(("rto_s".into(), json!(to_secs(self.rto()))));
        if self.cfg.ecn {
            out.push(("ecn_reductions".into(), json!(s.ecn_reductions)));
        }
        if let Some(d) = &self.dctcp {
            d.report(out);
        }
    }

    /// Segment counts restart at the end of the warm-up.
    fn on_warmup(&mut self, now: Time) {
        self.measure_from = now;
        self.stats.segments_measured = 0;
        self.stats.in_measured = 0;
        if let Some(d) = self.dctcp.as_mut() {
            d.on_warmup();
        }
    }
}

use crate::metrics::declared::{stat, Stat, Window::*};

/// TCP's statistics: connection `k` of entry `NAME` is the agent `tcp.NAME.k`, its
/// receiver `tcp.NAME.k.rx`.
pub const STATS: &[Stat] = &[
    stat(
        "agent.{tcp}.{segments_sent|retransmits|timeouts|fast_retransmits}",
        "segments",
        Run,
        "sender: segments sent, retransmitted; timeouts; fast retransmits",
    ),
    stat(
        "agent.{tcp}.ecn_reductions",
        "times",
        Run,
        "sender with ecn = true: window reductions on ECN echoes",
    ),
    stat(
        "agent.{tcp}.{segments_measured|in_segments_measured}",
        "segments",
        AfterWarmup,
        "sender: segments sent (IN-marked ones)",
    ),
    stat(
        "agent.{tcp}.{cwnd|ssthresh}",
        "segments",
        End,
        "sender: congestion window and slow-start threshold",
    ),
    stat(
        "agent.{tcp}.{srtt_s|rto_s}",
        "s",
        End,
        "sender: smoothed RTT and retransmission timeout",
    ),
    stat(
        "agent.{tcp}.rx.delivered_bytes",
        "B",
        Run,
        "receiver: payload delivered in order",
    ),
    stat(
        "agent.{tcp}.rx.delivered_segments",
        "segments",
        Run,
        "receiver: segments delivered in order",
    ),
    stat(
        "agent.{tcp}.rx.duplicates",
        "segments",
        Run,
        "receiver: duplicate segments discarded",
    ),
    stat(
        "agent.{tcp}.rx.goodput_bps",
        "b/s",
        AfterWarmup,
        "receiver: in-order payload delivered per second",
    ),
    stat(
        "{tcp}.{cwnd|ssthresh}",
        "segments",
        Run,
        "series: the window at every change (connections traced)",
    ),
    stat(
        "{tcp}.rtt",
        "s",
        Run,
        "series: every RTT sample (connections traced)",
    ),
];
