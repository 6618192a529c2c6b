//! The receiving end of a TCP connection ([`TcpReceiver`]): it acknowledges every
//! segment (or every second one, with delayed ACKs), echoes ECN marks (latched until CWR
//! as RFC 3168 says, or exactly per segment for DCTCP), reports SACK blocks when asked,
//! and counts the payload it delivers in order (goodput). See [`super::tcp`] for the
//! units and the packet layout both ends share.

use super::sack::SackReceiver;
use super::tcp::{next_gen, TS_OPTION_BYTES};
use crate::net::{marks, AgentId, Packet, PacketKind, NONE};
use crate::time::{to_secs, Time};
use crate::world::{Agent, Ctx};
use serde_json::{json, Value};
use std::collections::VecDeque;

/// Configuration of a [`TcpReceiver`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpReceiverConfig {
    /// ACK size on the wire, bytes.
    pub ack_size: u32,
    /// Header bytes of a data segment (subtracted to count payload).
    pub header_bytes: u32,
    /// Delayed ACKs: acknowledge every second in-order segment, or this long after an
    /// unacknowledged one. `None` acknowledges every segment.
    pub delayed_ack: Option<Time>,
    /// Goodput in the report counts payload delivered from this time on.
    pub measure_from: Time,
    /// Echo each segment's CE state exactly (DCTCP, RFC 8257) instead of latching ECE
    /// until CWR (RFC 3168).
    pub dctcp: bool,
    /// Report SACK blocks (RFC 2018) on every ACK sent while segments are held above the
    /// cumulative ACK.
    pub sack: bool,
    /// The timestamp option (RFC 7323): ACKs echo the timestamp RFC 7323's rule keeps
    /// (see the module documentation), and segments and ACKs carry
    /// [`super::tcp::TS_OPTION_BYTES`] more on the wire.
    pub timestamps: bool,
}

impl Default for TcpReceiverConfig {
    /// 40-byte ACKs and headers, an ACK for every segment, goodput from time 0.
    fn default() -> Self {
        TcpReceiverConfig {
            ack_size: 40,
            header_bytes: 40,
            delayed_ack: None,
            measure_from: 0,
            dctcp: false,
            sack: false,
            timestamps: false,
        }
    }
}

impl TcpReceiverConfig {
    /// The configuration with delayed ACKs after `delay` (ns-2's default is 100 ms).
    pub fn delayed(mut self, delay: Time) -> Self {
        self.delayed_ack = Some(delay);
        self
    }
}

/// A TCP receiver: cumulative ACKs, out-of-order buffering, goodput counting (see the
/// module documentation). One receiver serves one connection.
pub struct TcpReceiver {
    cfg: TcpReceiverConfig,
    rcv_nxt: u64,
    /// `got[i]` is true if segment `rcv_nxt + i` is buffered (`got[0]` is always false).
    got: VecDeque<bool>,
    delivered_segments: u64,
    delivered_bytes: u64,
    measured_bytes: u64,
    duplicates: u64,
    acks_sent: u64,
    pending: Option<Packet>,
    dack_gen: u32,
    /// ECN: echo ECE on every ACK until a segment with CWR arrives.
    ece: bool,
    /// SACK: the blocks held and last reported (`None` without SACK).
    sack: Option<SackReceiver>,
    /// Timestamps: the timestamp to echo (RFC 7323's TS.Recent).
    ts_recent: Time,
    /// Timestamps: the cumulative ACK last sent (RFC 7323's Last.ACK.sent).
    last_ack_sent: u64,
}

impl TcpReceiver {
    /// A receiver with the given configuration.
    pub fn new(cfg: TcpReceiverConfig) -> Self {
        TcpReceiver {
            cfg,
            rcv_nxt: 0,
            got: VecDeque::new(),
            delivered_segments: 0,
            delivered_bytes: 0,
            measured_bytes: 0,
            duplicates: 0,
            acks_sent: 0,
            pending: None,
            dack_gen: 0,
            ece: false,
            sack: cfg.sack.then(SackReceiver::new),
            ts_recent: 0,
            last_ack_sent: 0,
        }
    }

    /// Next segment expected in order.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Segments delivered in order.
    pub fn delivered_segments(&self) -> u64 {
        self.delivered_segments
    }

    /// Payload bytes delivered in order.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }

    /// Data segments received that had already been received.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// ACKs sent.
    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }

    /// Goodput (in-order payload, bits per second) from `measure_from` to `now`.
    pub fn goodput_bps(&self, now: Time) -> f64 {
        if now <= self.cfg.measure_from {
            return 0.0;
        }
        self.measured_bytes as f64 * 8.0 / to_secs(now - self.cfg.measure_from)
    }

    fn send_ack(&mut self, data: &Packet, ctx: &mut Ctx) {
        let now = ctx.now();
        let ts = self.cfg.timestamps;
        let mut ack = Packet {
            size: self.cfg.ack_size + if ts { TS_OPTION_BYTES } else { 0 },
            flow: data.flow,
            src: data.dst,
            dst: data.src,
            dst_agent: data.ack as AgentId,
            route: NONE,
            hop: 0,
            kind: PacketKind::Ack,
            class: 0,
            marks: if self.ece { marks::TCP_ECE } else { 0 },
            seq: data.seq,
            ack: self.rcv_nxt,
            created: now,
            echo: if ts { self.ts_recent } else { data.echo },
            hdr_tag: 0,
            hdr: [0; 2],
            tie: 0,
        };
        if let Some(opt) = self
            .sack
            .as_mut()
            .and_then(|r| r.option(self.rcv_nxt, data.seq))
        {
            ack.set_header(opt);
        }
        self.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        self.pending = None;
        ctx.send(ack);
    }
}

impl Agent for TcpReceiver {
    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        if kind == self.dack_gen {
            if let Some(p) = self.pending {
                self.send_ack(&p, ctx);
            }
        }
    }

    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        if pkt.kind != PacketKind::Data {
            return;
        }
        let now = ctx.now();
        if self.cfg.dctcp {
            // RFC 8257's two states: a change of CE state first sends the delayed ACK
            // with the old one.
            let ce = pkt.has(marks::ECN_CE);
            if ce != self.ece {
                if let Some(p) = self.pending {
                    self.dack_gen = next_gen(self.dack_gen);
                    self.send_ack(&p, ctx);
                }
                self.ece = ce;
            }
        } else {
            if pkt.has(marks::TCP_CWR) {
                self.ece = false;
            }
            if pkt.has(marks::ECN_CE) {
                self.ece = true;
            }
        }
        // RFC 7323: only a segment at or below the last cumulative ACK sent (the left
        // edge, or an old duplicate) sets the timestamp to echo.
        if self.cfg.timestamps && pkt.seq <= self.last_ack_sent && pkt.echo >= self.ts_recent {
            self.ts_recent = pkt.echo;
        }
        let mut immediate = false;
        if pkt.seq < self.rcv_nxt {
            self.duplicates += 1;
            ctx.flows.discarded(&pkt);
            immediate = true;
        } else {
            let idx = (pkt.seq - self.rcv_nxt) as usize;
            if self.got.len() <= idx {
                self.got.resize(idx + 1, false);
            }
            if self.got[idx] {
                self.duplicates += 1;
                ctx.flows.discarded(&pkt);
                immediate = true;
            } else {
                self.got[idx] = true;
                ctx.flows.delivered(&pkt, now);
                if idx > 0 {
                    immediate = true;
                }
                let before = self.rcv_nxt;
                while self.got.front() == Some(&true) {
                    self.got.pop_front();
                    self.rcv_nxt += 1;
                }
                if let Some(r) = self.sack.as_mut() {
                    if idx > 0 {
                        r.received(pkt.seq);
                    }
                    r.advance(self.rcv_nxt);
                }
                let advanced = self.rcv_nxt - before;
                if advanced > 1 {
                    immediate = true;
                }
                let header = self.cfg.header_bytes
                    + if self.cfg.timestamps {
                        TS_OPTION_BYTES
                    } else {
                        0
                    };
                let payload = pkt.size.saturating_sub(header) as u64;
                self.delivered_segments += advanced;
                self.delivered_bytes += advanced * payload;
                if now >= self.cfg.measure_from {
                    self.measured_bytes += advanced * payload;
                }
            }
        }
        match self.cfg.delayed_ack {
            None => self.send_ack(&pkt, ctx),
            Some(delay) => {
                if immediate || self.pending.is_some() {
                    self.dack_gen = next_gen(self.dack_gen);
                    self.send_ack(&pkt, ctx);
                } else {
                    self.pending = Some(pkt);
                    self.dack_gen = next_gen(self.dack_gen);
                    ctx.timer(delay, self.dack_gen);
                }
            }
        }
    }

    fn report(&self, now: Time, out: &mut Vec<(String, Value)>) {
        out.push(("delivered_bytes".into(), json!(self.delivered_bytes)));
        out.push(("delivered_segments".into(), json!(self.delivered_segments)));
        out.push(("duplicates".into(), json!(self.duplicates)));
        out.push(("goodput_bps".into(), json!(self.goodput_bps(now))));
    }

    /// Goodput counts from the end of the warm-up.
    fn on_warmup(&mut self, now: Time) {
        self.cfg.measure_from = now;
        self.measured_bytes = 0;
    }
}
