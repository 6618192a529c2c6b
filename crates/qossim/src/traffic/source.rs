//! Packet sources and the sink.

use super::trace::FrameTrace;
use crate::net::{AgentId, FlowId, NodeId, Packet, PacketKind, NONE};
use crate::rng::Rng;
use crate::time::{secs, Time};
use crate::world::{Agent, Ctx};
use std::sync::Arc;

/// The length of an on or off period.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Period {
    /// Exponential with this mean, seconds.
    Exp(f64),
    /// Pareto with this shape and mean (seconds).
    Pareto {
        /// Shape (> 1).
        shape: f64,
        /// Mean, seconds.
        mean: f64,
    },
    /// Always this long, seconds.
    Fixed(f64),
}

impl Period {
    /// Mean length, seconds.
    pub fn mean(&self) -> f64 {
        match *self {
            Period::Exp(m) | Period::Fixed(m) => m,
            Period::Pareto { mean, .. } => mean,
        }
    }
    /// Draws a length, seconds.
    pub fn draw(&self, r: &mut Rng) -> f64 {
        match *self {
            Period::Exp(m) => r.exp(m),
            Period::Pareto { shape, mean } => r.pareto(shape, mean),
            Period::Fixed(m) => m,
        }
    }
}

/// How one flow sends.
#[derive(Clone, Debug)]
pub enum SourceModel {
    /// Constant bit rate: `size`-byte packets every `interval` seconds.
    Cbr {
        /// Packet size, bytes.
        size: u32,
        /// Inter-packet time, seconds.
        interval: f64,
    },
    /// On-off: CBR at `interval` while on, silent while off; starts in a random phase.
    /// Packets are sent on the ticks of a clock of period `interval` that keeps running
    /// through the off periods, so the long-run rate is exactly
    /// `size / interval x on-fraction`.
    OnOff {
        /// Packet size, bytes.
        size: u32,
        /// Inter-packet time while on, seconds.
        interval: f64,
        /// On periods.
        on: Period,
        /// Off periods.
        off: Period,
    },
    /// A frame trace, each frame cut into `size`-byte packets `spacing` seconds apart,
    /// starting at a random offset of the trace.
    Trace {
        /// The trace (shared by all flows).
        trace: Arc<FrameTrace>,
        /// Packet size, bytes.
        size: u32,
        /// Spacing of a frame's packets, seconds.
        spacing: f64,
    },
    /// Poisson packet arrivals of `rate` packets per second with sizes drawn from `size`
    /// (for queueing-theory validation: M/M/1 and M/D/1).
    Poisson {
        /// Packets per second.
        rate: f64,
        /// Packet sizes.
        size: SizeDist,
    },
    /// Each flow picks one of these models with equal probability.
    Mix(Vec<SourceModel>),
}

/// A packet-size distribution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeDist {
    /// Always this many bytes.
    Fixed(u32),
    /// Geometric on {1, 2, ...} bytes with this mean: the discrete analogue of an
    /// exponential size, so service times on a link are (to within a byte) exponential.
    /// Its moments are exact: `E[S] = m`, `E[S^2] = m (2m - 1)`.
    Geometric(f64),
}

impl SizeDist {
    /// Mean size, bytes.
    pub fn mean(&self) -> f64 {
        match *self {
            SizeDist::Fixed(b) => b as f64,
            SizeDist::Geometric(m) => m,
        }
    }
    /// Second moment of the size, bytes squared.
    pub fn second_moment(&self) -> f64 {
        match *self {
            SizeDist::Fixed(b) => (b as f64).powi(2),
            SizeDist::Geometric(m) => m * (2.0 * m - 1.0),
        }
    }
    /// Draws a size.
    #[inline]
    pub fn draw(&self, r: &mut Rng) -> u32 {
        match *self {
            SizeDist::Fixed(b) => b,
            SizeDist::Geometric(m) => r.geometric(m).min(u32::MAX as u64) as u32,
        }
    }
}

impl SourceModel {
    /// Mean sending rate of a flow, bits per second.
    pub fn mean_bps(&self) -> f64 {
        match self {
            SourceModel::Cbr { size, interval } => *size as f64 * 8.0 / interval,
            SourceModel::OnOff {
                size,
                interval,
                on,
                off,
            } => *size as f64 * 8.0 / interval * on.mean() / (on.mean() + off.mean()),
            SourceModel::Trace { trace, .. } => trace.mean_bps(),
            SourceModel::Poisson { rate, size } => rate * size.mean() * 8.0,
            SourceModel::Mix(ms) => ms.iter().map(|m| m.mean_bps()).sum::<f64>() / ms.len() as f64,
        }
    }

    /// The inter-packet time of the CBR portion (the unit of randomization jitter).
    pub fn spacing(&self) -> f64 {
        match self {
            SourceModel::Cbr { interval, .. } | SourceModel::OnOff { interval, .. } => *interval,
            SourceModel::Trace { spacing, .. } => *spacing,
            SourceModel::Poisson { rate, .. } => 1.0 / rate,
            SourceModel::Mix(ms) => ms.first().map(|m| m.spacing()).unwrap_or(0.0),
        }
    }

    /// The concrete models a flow may follow, shared: one for a plain model, one per
    /// member for a (flat) mix. Index them with [`SourceModel::pick_index`].
    pub fn shared_choices(&self) -> Vec<Arc<SourceModel>> {
        match self {
            SourceModel::Mix(ms) => ms.iter().flat_map(|m| m.shared_choices()).collect(),
            m => vec![Arc::new(m.clone())],
        }
    }

    /// Draws the index into [`SourceModel::shared_choices`] of a new flow's model, with
    /// the same draws as [`SourceModel::pick`] (equal probability per mix member, flat
    /// mixes).
    pub fn pick_index(&self, r: &mut Rng) -> usize {
        match self {
            SourceModel::Mix(ms) => r.below(ms.len() as u64) as usize,
            _ => 0,
        }
    }

    /// Resolves a mix to one concrete model for a new flow.
    pub fn pick(&self, r: &mut Rng) -> &SourceModel {
        match self {
            SourceModel::Mix(ms) => ms[r.below(ms.len() as u64) as usize].pick(r),
            m => m,
        }
    }
}

/// The header fields every packet of a flow shares.
#[derive(Clone, Copy, Debug)]
pub struct PacketTemplate {
    /// Ingress node.
    pub src: NodeId,
    /// Egress node.
    pub dst: NodeId,
    /// Receiving agent.
    pub dst_agent: AgentId,
    /// Class.
    pub class: u8,
    /// Initial marks.
    pub marks: u16,
    /// Explicit route or [`NONE`].
    pub route: u32,
}

impl PacketTemplate {
    /// A template for traffic from `src` to `dst_agent` at `dst`, best effort, default
    /// routing.
    pub fn new(src: NodeId, dst: NodeId, dst_agent: AgentId) -> Self {
        PacketTemplate {
            src,
            dst,
            dst_agent,
            class: 0,
            marks: 0,
            route: NONE,
        }
    }

    /// A packet of `size` bytes of `flow` created at `now`.
    #[inline]
    pub fn packet(&self, flow: FlowId, size: u32, seq: u64, now: Time) -> Packet {
        Packet {
            size,
            flow,
            src: self.src,
            dst: self.dst,
            dst_agent: self.dst_agent,
            route: self.route,
            hop: 0,
            kind: PacketKind::Data,
            class: self.class,
            marks: self.marks,
            seq,
            ack: 0,
            created: now,
            echo: 0,
            hdr_tag: 0,
            hdr: [0; 2],
            tie: 0,
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum State {
    Cbr,
    OnOff { on_until: Time },
    Trace { frame: u32, left: u32 },
    Poisson,
}

/// The agent sending one flow's packets.
///
/// Timers: one pending timer at a time (the next packet). Randomization jitter delays
/// every packet by U(0, `jitter` x spacing) from its nominal time. The flow's model is
/// shared (`Arc`) with every other flow of the same model, so an idle source costs about
/// 120 bytes.
pub struct Source {
    model: Arc<SourceModel>,
    tmpl: PacketTemplate,
    flow: FlowId,
    size: u32,
    jitter: f32,
    spacing: Time,
    stop: Time,
    next_nominal: Time,
    seq: u64,
    state: State,
    rng: Rng,
}

impl Source {
    /// A source for `flow` following `model` (already resolved from a mix), starting after
    /// `start_offset` and stopping at `stop`. Copies the model; use
    /// [`Source::with_shared`] to share one among many flows.
    pub fn new(
        model: &SourceModel,
        tmpl: PacketTemplate,
        flow: FlowId,
        start_offset: Time,
        stop: Time,
        jitter: f64,
        rng: Rng,
    ) -> Self {
        Self::with_shared(
            Arc::new(model.clone()),
            tmpl,
            flow,
            start_offset,
            stop,
            jitter,
            rng,
        )
    }

    /// Like [`Source::new`] with a shared model.
    ///
    /// # Panics
    /// Panics if `model` is a [`SourceModel::Mix`] (resolve it with
    /// [`SourceModel::pick`] first).
    pub fn with_shared(
        model: Arc<SourceModel>,
        tmpl: PacketTemplate,
        flow: FlowId,
        start_offset: Time,
        stop: Time,
        jitter: f64,
        rng: Rng,
    ) -> Self {
        let (size, spacing, state) = match &*model {
            SourceModel::Cbr { size, interval } => (*size, *interval, State::Cbr),
            SourceModel::OnOff { size, interval, .. } => {
                (*size, *interval, State::OnOff { on_until: 0 })
            }
            SourceModel::Trace { size, spacing, .. } => {
                (*size, *spacing, State::Trace { frame: 0, left: 0 })
            }
            SourceModel::Poisson { rate, size } => (size.mean() as u32, 1.0 / rate, State::Poisson),
            SourceModel::Mix(_) => panic!("resolve a mix with SourceModel::pick first"),
        };
        Source {
            model,
            tmpl,
            flow,
            size,
            jitter: jitter as f32,
            spacing: secs(spacing),
            stop,
            next_nominal: start_offset,
            seq: 0,
            state,
            rng,
        }
    }

    /// The flow this source sends.
    pub fn flow(&self) -> FlowId {
        self.flow
    }

    /// Stops sending at `t` (or now, if `t` has passed).
    pub fn set_stop(&mut self, t: Time) {
        self.stop = t;
    }

    #[inline]
    fn arm(&mut self, ctx: &mut Ctx) {
        if self.next_nominal >= self.stop {
            ctx.flows.close(self.flow, self.stop);
            ctx.stop(ctx.me);
            return;
        }
        let j = if self.jitter > 0.0 {
            (self.rng.uniform() * self.jitter as f64 * self.spacing as f64) as Time
        } else {
            0
        };
        ctx.timer_at(self.next_nominal + j, 0);
    }
}

/// The first tick of the packet clock at or after `tick` (a tick itself) that falls inside
/// an on period, drawing further off and on periods (updating `on_until`, the end of the
/// current on period) as the clock passes them.
///
/// The clock ticks every `spacing` whether the source is on or not, as a codec's frame
/// clock does through a silence; an on period of length `L` then holds `L / spacing`
/// ticks on average, so the long-run rate is the nominal `size / spacing x on-fraction`.
/// (Starting each on period with a packet at its first instant would give
/// `ceil(L / spacing)` packets: half a packet too many per on period on average.)
fn next_tick_when_on(
    mut tick: Time,
    spacing: Time,
    on_until: &mut Time,
    on: &Period,
    off: &Period,
    rng: &mut Rng,
) -> Time {
    let spacing = spacing.max(1);
    while tick >= *on_until {
        // Saturating: a heavy-tailed draw may reach the end of time, never past it.
        let on_start = on_until.saturating_add(secs(off.draw(rng)));
        *on_until = on_start.saturating_add(secs(on.draw(rng)).max(1));
        if *on_until == Time::MAX {
            return Time::MAX;
        }
        if tick < on_start {
            tick += (on_start - tick).div_ceil(spacing) * spacing;
        }
    }
    tick
}

impl Agent for Source {
    fn start(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        self.next_nominal += now;
        let model = self.model.clone();
        match (&mut self.state, &*model) {
            (State::Poisson, SourceModel::Poisson { rate, .. }) => {
                self.next_nominal += secs(self.rng.exp(1.0 / rate));
            }
            (State::OnOff { on_until }, SourceModel::OnOff { on, off, .. }) => {
                // Start in a random phase of the on-off cycle (stationary start). The
                // packet clock starts now and keeps ticking through silences.
                let p_on = on.mean() / (on.mean() + off.mean());
                if self.rng.uniform() < p_on {
                    *on_until = self.next_nominal + secs(on.draw(&mut self.rng)).max(1);
                } else {
                    *on_until = self.next_nominal;
                    self.next_nominal = next_tick_when_on(
                        self.next_nominal,
                        self.spacing,
                        on_until,
                        on,
                        off,
                        &mut self.rng,
                    );
                }
            }
            (State::Trace { frame, left }, SourceModel::Trace { trace, .. }) => {
                let n = trace.frames.len();
                let f = self.rng.below(n as u64) as usize;
                *frame = f as u32;
                *left = trace.frames[f].bytes.div_ceil(self.size);
            }
            _ => {}
        }
        self.arm(ctx);
    }

    #[inline]
    fn on_timer(&mut self, _kind: u32, ctx: &mut Ctx) {
        let now = ctx.now();
        if now >= self.stop {
            ctx.flows.close(self.flow, now);
            ctx.stop(ctx.me);
            return;
        }
        // Size of this packet (a trace frame's last packet carries the remainder).
        let model = &*self.model;
        let mut size = self.size;
        match (&self.state, model) {
            (State::Trace { frame, left }, SourceModel::Trace { trace, .. }) => {
                let fb = trace.frames[*frame as usize].bytes;
                if *left == 1 {
                    let rem = fb - (fb.div_ceil(self.size) - 1) * self.size;
                    size = rem.max(1);
                }
            }
            (State::Poisson, SourceModel::Poisson { size: d, .. }) => size = d.draw(&mut self.rng),
            _ => {}
        }
        let pkt = self.tmpl.packet(self.flow, size, self.seq, now);
        self.seq += 1;
        ctx.flows.sent(&pkt, now);
        ctx.send(pkt);
        // Next nominal send time.
        match (&mut self.state, model) {
            (State::Cbr, _) => self.next_nominal += self.spacing,
            (State::Poisson, SourceModel::Poisson { rate, .. }) => {
                self.next_nominal += secs(self.rng.exp(1.0 / rate)).max(1);
            }
            (State::OnOff { on_until }, SourceModel::OnOff { on, off, .. }) => {
                self.next_nominal = next_tick_when_on(
                    self.next_nominal + self.spacing,
                    self.spacing,
                    on_until,
                    on,
                    off,
                    &mut self.rng,
                );
            }
            (State::Trace { frame, left }, SourceModel::Trace { trace, .. }) => {
                *left -= 1;
                if *left > 0 {
                    self.next_nominal += self.spacing;
                } else {
                    // Next frame at its trace time (relative to this frame's start).
                    let n = trace.frames.len();
                    let cur = trace.frames[*frame as usize];
                    let sent = cur.bytes.div_ceil(self.size) as u64 - 1;
                    let frame_start = self.next_nominal - sent * self.spacing;
                    *frame += 1;
                    let gap = if *frame as usize == n {
                        *frame = 0;
                        trace.period - cur.t
                    } else {
                        trace.frames[*frame as usize].t - cur.t
                    };
                    let next_start = frame_start + secs(gap);
                    // Frames never overlap: a frame starts after the previous one's last
                    // packet.
                    self.next_nominal = next_start.max(self.next_nominal + self.spacing);
                    *left = trace.frames[*frame as usize].bytes.div_ceil(self.size);
                }
            }
            _ => unreachable!("state matches model"),
        }
        self.arm(ctx);
    }
}

/// Counts delivered packets in the flow table (per flow and per group, with delays).
#[derive(Default)]
pub struct Sink;

impl Agent for Sink {
    #[inline]
    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        let now = ctx.now();
        ctx.flows.delivered(&pkt, now);
    }
    fn only_counts_deliveries(&self) -> bool {
        true
    }
}
