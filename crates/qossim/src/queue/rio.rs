//! RIO, RED with In and Out (Clark and Fang): IN-profile packets are judged on their own
//! RED curve against the average of IN packets only, OUT packets on a stricter curve
//! against the average of the whole queue (coupled) or of OUT packets (decoupled). It
//! shares RED's averaging, idle clock and dropper ([`super::red`]).

use super::red::{
    report_counters, Dropper, Ewma, IdleClock, RedCounters, RedCurve, Verdict, BYTE_MODE, GENTLE,
    MEAN_PKT_SIZE, W_Q,
};
use super::{Dequeue, DropCause, DropLog, QueueDisc, QueueKind};
use crate::decl::{self, Absent, Bounds, Param, Type, Value, Values};
use crate::metrics::declared::{
    stat, Stat,
    Window::{End, Run},
};
use crate::packet::{marks, Packet};
use crate::rng::Rng;
use crate::scenario::QueueSpec;
use crate::time::Time;
use std::collections::VecDeque;

/// RIO's statistics (`link.{link}.` keys of its port's summary).
pub const RIO_STATS: &[Stat] = &[
    stat(
        "link.{link}.rio_avg_queue_pkts",
        "packets",
        End,
        "RIO: the average of the whole queue at the end",
    ),
    stat(
        "link.{link}.rio_avg_in_pkts",
        "packets",
        End,
        "RIO: the average of the IN packets at the end",
    ),
    stat(
        "link.{link}.rio_avg_out_pkts",
        "packets",
        End,
        "RIO: the average of the OUT packets at the end (decoupled RIO)",
    ),
    stat(
        "link.{link}.rio_arrivals_{in|out}",
        "packets",
        Run,
        "RIO: IN or OUT packets offered",
    ),
    stat(
        "link.{link}.rio_early_drops_{in|out}",
        "packets",
        Run,
        "RIO: early drops (random and forced) of IN or OUT packets",
    ),
    stat(
        "link.{link}.rio_forced_drops_{in|out}",
        "packets",
        Run,
        "RIO: forced drops of IN or OUT packets",
    ),
    stat(
        "link.{link}.rio_overflow_drops_{in|out}",
        "packets",
        Run,
        "RIO: overflow drops of IN or OUT packets",
    ),
];

/// RIO as scenarios name it (`kind = "rio"`).
pub static RIO: QueueKind = QueueKind {
    name: "rio",
    aliases: &[],
    title: "RIO",
    doc: "RED with In and Out: IN-profile packets judged on their own curve and average.",
    params: &[
        Param::new(
            "params",
            Type::Text,
            Absent::Required,
            "\"minth_out/maxth_out/maxp_out minth_in/maxth_in/maxp_in\", e.g. \"420/840/0.05 500/840/0.02\"",
        )
        .unit("packets"),
        Param::new(
            "mode",
            Type::Choice(&["coupled", "decoupled"]),
            Absent::Is("coupled"),
            "OUT packets see the total average (coupled) or the OUT-only average.",
        ),
        W_Q,
        GENTLE,
        BYTE_MODE,
        MEAN_PKT_SIZE,
        Param::new("limit", Type::PacketLimit, Absent::Derived("the larger max_th, rounded up"), "Physical buffer (IN and OUT together).")
            .unit("p")
            .bounds(Bounds::Positive),
    ],
    rules: |v| match RioParams::parse(v.text("params")) {
        Ok(_) => Vec::new(),
        Err(e) => vec![("params", e)],
    },
    spec: |v| {
        let p = RioParams::parse(v.text("params")).expect("checked by the rules");
        let limit = v.get("limit").map_or(p.limit, |_| v.count("limit") as usize);
        let mut p = p
            .with_mode(match v.text("mode") {
                "decoupled" => RioMode::Decoupled,
                _ => RioMode::Coupled,
            })
            .with_limit(limit)
            .with_w_q(v.number("w_q"))
            .with_gentle(v.bool("gentle"))
            .with_byte_mode(v.bool("byte_mode"));
        p.mean_pkt_size = v.count("mean_pkt_size") as u32;
        QueueSpec::Rio(p)
    },
    stats: RIO_STATS,
    build: |q, env| match q {
        QueueSpec::Rio(p) => Box::new(Rio::new(
            p.with_link(env.rate_bps, p.mean_pkt_size),
            (env.rng)(),
        )),
        q => unreachable!("RIO asked to build {q:?}"),
    },
};

/// Which average RIO's OUT packets are judged on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RioMode {
    /// RIO-C: OUT packets see the average of the total queue (IN + OUT).
    #[default]
    Coupled,
    /// RIO-D: OUT packets see the average of the OUT packets only.
    Decoupled,
}

/// Parameters of a [`Rio`] queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RioParams {
    /// Curve for OUT packets.
    pub out_curve: RedCurve,
    /// Curve for IN packets (on the average of the IN packets only).
    pub in_curve: RedCurve,
    /// Coupled or decoupled OUT average.
    pub mode: RioMode,
    /// EWMA weight of every average.
    pub w_q: f64,
    /// Physical limit (IN and OUT together), packets.
    pub limit: usize,
    /// Byte mode for both curves.
    pub byte_mode: bool,
    /// Mean packet size, bytes (byte mode and idle correction).
    pub mean_pkt_size: u32,
    /// Rate of the link the queue feeds, bits per second (idle correction; 0 = none).
    pub link_rate_bps: u64,
}

impl RioParams {
    /// Coupled RIO with the given curves; `w_q` = 0.002, limit = the larger `max_th`
    /// rounded up, packet mode, mean packet size 500 bytes, no idle correction until
    /// [`RioParams::with_link`].
    pub fn new(out_curve: RedCurve, in_curve: RedCurve) -> Self {
        let limit = out_curve.max_th.max(in_curve.max_th).ceil().max(1.0) as usize;
        let d = decl::defaults(RIO.params);
        RioParams {
            out_curve,
            in_curve,
            mode: RioMode::Coupled,
            w_q: d.number("w_q"),
            limit,
            byte_mode: d.bool("byte_mode"),
            mean_pkt_size: d.count("mean_pkt_size") as u32,
            link_rate_bps: 0,
        }
    }

    /// Parses the scenario notation `minth_out/maxth_out/maxp_out minth_in/maxth_in/maxp_in`
    /// (OUT curve first), e.g. `"420/840/0.05 500/840/0.02"`, with the defaults of
    /// [`RioParams::new`].
    pub fn parse(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split_whitespace().collect();
        if parts.len() != 2 {
            return Err(format!(
                "RIO parameters {s:?}: expected \"minth_out/maxth_out/maxp_out minth_in/maxth_in/maxp_in\""
            ));
        }
        // Each curve is checked as it is parsed; the other fields are the defaults.
        Ok(RioParams::new(
            RedCurve::parse(parts[0])?,
            RedCurve::parse(parts[1])?,
        ))
    }

    /// Sets the physical limit, packets.
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Sets coupled or decoupled mode.
    pub fn with_mode(mut self, mode: RioMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the EWMA weight.
    pub fn with_w_q(mut self, w_q: f64) -> Self {
        self.w_q = w_q;
        self
    }

    /// Sets the link rate and mean packet size used by the idle correction (and byte mode).
    pub fn with_link(mut self, rate_bps: u64, mean_pkt_size: u32) -> Self {
        self.link_rate_bps = rate_bps;
        self.mean_pkt_size = mean_pkt_size;
        self
    }

    /// Sets the gentle option of both curves.
    pub fn with_gentle(mut self, on: bool) -> Self {
        self.out_curve.gentle = on;
        self.in_curve.gentle = on;
        self
    }

    /// Turns byte mode on or off.
    pub fn with_byte_mode(mut self, on: bool) -> Self {
        self.byte_mode = on;
        self
    }

    /// Checks every field against RIO's declaration ([`RIO`]): `Err("key: reason")`.
    pub fn validate(&self) -> Result<(), String> {
        decl::validate(RIO.params, &self.values(), RIO.rules)
    }

    /// The parameters as declared values (the link rate is not a parameter).
    pub fn values(&self) -> Values {
        let (o, i) = (&self.out_curve, &self.in_curve);
        Values(vec![
            (
                "params",
                Value::Text(format!(
                    "{}/{}/{} {}/{}/{}",
                    o.min_th, o.max_th, o.max_p, i.min_th, i.max_th, i.max_p
                )),
            ),
            (
                "mode",
                Value::Text(
                    match self.mode {
                        RioMode::Coupled => "coupled",
                        RioMode::Decoupled => "decoupled",
                    }
                    .into(),
                ),
            ),
            ("w_q", Value::Number(self.w_q)),
            ("gentle", Value::Bool(o.gentle && i.gentle)),
            ("byte_mode", Value::Bool(self.byte_mode)),
            ("mean_pkt_size", Value::Size(self.mean_pkt_size as u64)),
            ("limit", Value::Packets(self.limit as u64)),
        ])
    }
}

/// RED with In and Out: one FIFO, IN packets ([`marks::IN_PROFILE`]) judged by their own
/// curve on the average of the IN packets, OUT packets (everything else) by theirs on the
/// average of the total queue (coupled) or of the OUT packets (decoupled).
///
/// On an IN arrival the IN average is updated (and, coupled, the total average too); on an
/// OUT arrival the OUT-side average (total or OUT-only) is updated. Each class has its own
/// inter-drop counter. Overflow of the physical queue drops whatever arrives.
pub struct Rio {
    p: RioParams,
    clock: IdleClock,
    q: VecDeque<Packet>,
    bytes: u64,
    n_in: usize,
    n_out: usize,
    avg_in: Ewma,
    /// Total average (coupled) or OUT-only average (decoupled).
    avg_out: Ewma,
    drop_in: Dropper,
    drop_out: Dropper,
    rng: Rng,
    counters: [RedCounters; 2],
}

impl Rio {
    /// A RIO queue drawing its random numbers from `rng`.
    ///
    /// # Panics
    /// Panics if the parameters are invalid ([`RioParams::validate`]).
    pub fn new(params: RioParams, rng: Rng) -> Self {
        if let Err(e) = params.validate() {
            panic!("{e}");
        }
        Rio {
            p: params,
            clock: IdleClock {
                rate_bps: params.link_rate_bps,
                mean_size: params.mean_pkt_size,
            },
            q: VecDeque::new(),
            bytes: 0,
            n_in: 0,
            n_out: 0,
            avg_in: Ewma::new(),
            avg_out: Ewma::new(),
            drop_in: Dropper::new(),
            drop_out: Dropper::new(),
            rng,
            counters: [RedCounters::default(); 2],
        }
    }

    /// The average queue: of the total queue (coupled), or the sum of the IN and OUT
    /// averages (decoupled), packets.
    pub fn avg(&self) -> f64 {
        match self.p.mode {
            RioMode::Coupled => self.avg_out.avg,
            RioMode::Decoupled => self.avg_out.avg + self.avg_in.avg,
        }
    }

    /// The average of the IN packets, packets.
    pub fn avg_in(&self) -> f64 {
        self.avg_in.avg
    }

    /// The average OUT packets are judged on (total when coupled, OUT-only when
    /// decoupled), packets.
    pub fn avg_out(&self) -> f64 {
        self.avg_out.avg
    }

    /// IN packets queued.
    pub fn len_in(&self) -> usize {
        self.n_in
    }

    /// OUT packets queued.
    pub fn len_out(&self) -> usize {
        self.n_out
    }

    /// The parameters.
    pub fn params(&self) -> &RioParams {
        &self.p
    }

    /// Counters of IN packets (`true`) or OUT packets (`false`).
    pub fn counters(&self, in_profile: bool) -> RedCounters {
        self.counters[usize::from(in_profile)]
    }
}

impl QueueDisc for Rio {
    fn enqueue(&mut self, pkt: Packet, now: Time, drops: &mut DropLog) {
        let is_in = pkt.has(marks::IN_PROFILE);
        let cls = usize::from(is_in);
        self.counters[cls].arrivals += 1;
        let w = self.p.w_q;
        let coupled = self.p.mode == RioMode::Coupled;
        let byte_mode = self.p.byte_mode.then_some(self.p.mean_pkt_size);
        let verdict = if is_in {
            self.avg_in.update(self.n_in, now, w, &self.clock);
            if coupled {
                self.avg_out
                    .update(self.n_in + self.n_out, now, w, &self.clock);
            }
            self.drop_in.decide(
                &self.p.in_curve,
                self.avg_in.avg,
                pkt.size,
                byte_mode,
                &mut self.rng,
            )
        } else {
            let q = if coupled {
                self.n_in + self.n_out
            } else {
                self.n_out
            };
            self.avg_out.update(q, now, w, &self.clock);
            self.drop_out.decide(
                &self.p.out_curve,
                self.avg_out.avg,
                pkt.size,
                byte_mode,
                &mut self.rng,
            )
        };
        match verdict {
            Verdict::Random => {
                self.counters[cls].early_random += 1;
                drops.record(&pkt, DropCause::Early);
            }
            Verdict::Forced => {
                self.counters[cls].early_forced += 1;
                drops.record(&pkt, DropCause::Early);
            }
            Verdict::Accept => {
                if self.q.len() >= self.p.limit {
                    if is_in {
                        self.drop_in.on_overflow();
                    } else {
                        self.drop_out.on_overflow();
                    }
                    self.counters[cls].overflow += 1;
                    drops.record(&pkt, DropCause::Overflow);
                    return;
                }
                if is_in {
                    self.n_in += 1;
                    self.avg_in.busy();
                    if coupled {
                        self.avg_out.busy();
                    }
                } else {
                    self.n_out += 1;
                    self.avg_out.busy();
                }
                self.bytes += pkt.size as u64;
                self.q.push_back(pkt);
            }
        }
    }

    fn dequeue(&mut self, now: Time) -> Dequeue {
        let Some(p) = self.q.pop_front() else {
            return Dequeue::Empty;
        };
        self.bytes -= p.size as u64;
        if p.has(marks::IN_PROFILE) {
            self.n_in -= 1;
        } else {
            self.n_out -= 1;
        }
        if self.n_in == 0 {
            self.avg_in.go_idle(now);
        }
        let out_empty = match self.p.mode {
            RioMode::Coupled => self.n_in + self.n_out == 0,
            RioMode::Decoupled => self.n_out == 0,
        };
        if out_empty {
            self.avg_out.go_idle(now);
        }
        Dequeue::Packet(p)
    }

    fn len(&self) -> usize {
        self.q.len()
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet)) {
        self.q.iter().for_each(f);
    }

    fn report(&self, out: &mut Vec<(String, f64)>) {
        out.push(("rio_avg_queue_pkts".into(), self.avg()));
        out.push(("rio_avg_in_pkts".into(), self.avg_in.avg));
        out.push(("rio_avg_out_pkts".into(), self.avg_out.avg));
        report_counters("rio_", &self.counters, out);
    }

    fn average_queue(&self, in_only: bool) -> Option<f64> {
        Some(if in_only { self.avg_in() } else { self.avg() })
    }
}
