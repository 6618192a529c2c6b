//! The ring's observer: per-flow throughput at the study's resolution, the congestion
//! window and RTT of one TCP connection, and the RTT of every TCP connection (measured on
//! each acknowledgement as now minus the echoed send time of the segment it acknowledges).

use crate::metrics::Histogram;
use crate::net::{FlowId, NodeId, Packet, PacketKind, NONE};
use crate::time::{to_secs, Time};
use crate::transport::TcpRenoSender;
use crate::world::{Agent, AgentHandle, Ctx};

const SAMPLE: u32 = 1;
const WARMUP: u32 = 2;

/// A traffic entry whose flows get a throughput series each.
#[derive(Clone, Debug)]
pub struct WatchedEntry {
    /// Traffic entry name (series `rpr.flow.NAME.K.bps`).
    pub name: String,
    /// Its group.
    pub group: u32,
}

/// The observer agent; it taps every station node.
pub struct RprMonitor {
    interval: Time,
    warmup: Time,
    watched: Vec<WatchedEntry>,
    /// Sender agent and flow of the traced connection.
    traced: Option<(AgentHandle<TcpRenoSender>, FlowId)>,
    last_rx: Vec<u64>,
    ids: Vec<Vec<usize>>,
    trace_ids: Option<[usize; 2]>,
    /// Received bytes of every flow when the warm-up ended.
    pub rx_at_warmup: Vec<u64>,
    /// RTT of every TCP acknowledgement after the warm-up, picoseconds.
    pub rtt: Histogram,
    /// The same, per station that receives the acknowledgement (the sender's station),
    /// indexed by node.
    pub rtt_by_node: Vec<Histogram>,
}

impl RprMonitor {
    /// An observer sampling every `interval`, counting from `warmup`.
    pub fn new(
        interval: Time,
        warmup: Time,
        watched: Vec<WatchedEntry>,
        traced: Option<(AgentHandle<TcpRenoSender>, FlowId)>,
    ) -> Self {
        RprMonitor {
            interval,
            warmup,
            watched,
            traced,
            last_rx: Vec::new(),
            ids: Vec::new(),
            trace_ids: None,
            rx_at_warmup: Vec::new(),
            rtt: Histogram::default(),
            rtt_by_node: Vec::new(),
        }
    }

    fn sample(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        let secs = to_secs(self.interval);
        if self.last_rx.len() < ctx.flows.recs.len() {
            self.last_rx.resize(ctx.flows.recs.len(), 0);
        }
        for (wi, w) in self.watched.iter().enumerate() {
            if self.ids.len() <= wi {
                self.ids.push(Vec::new());
            }
            let mut k = 0;
            for f in 0..ctx.flows.recs.len() {
                let r = ctx.flows.recs[f];
                if r.group != w.group {
                    continue;
                }
                if self.ids[wi].len() <= k {
                    let id = ctx.rec.id(&format!("rpr.flow.{}.{k}.bps", w.name), "b/s");
                    self.ids[wi].push(id);
                }
                let d = r.rx_bytes - self.last_rx[f];
                self.last_rx[f] = r.rx_bytes;
                ctx.rec.push(self.ids[wi][k], now, d as f64 * 8.0 / secs);
                k += 1;
            }
        }
        if let Some((agent, _)) = self.traced {
            let ids = *self.trace_ids.get_or_insert_with(|| {
                [
                    ctx.rec.id("rpr.tcp.cwnd", "segments"),
                    ctx.rec.id("rpr.tcp.rtt_s", "s"),
                ]
            });
            if let Some(s) = ctx.agents().get_mut(agent) {
                let c = s.cwnd();
                ctx.rec.push(ids[0], now, c);
            }
        }
        ctx.timer(self.interval, SAMPLE);
    }
}

impl Agent for RprMonitor {
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.timer(self.interval, SAMPLE);
        if self.warmup > 0 {
            ctx.timer_at(self.warmup, WARMUP);
        }
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        match kind {
            SAMPLE => self.sample(ctx),
            WARMUP => {
                self.rx_at_warmup = ctx.flows.recs.iter().map(|r| r.rx_bytes).collect();
            }
            _ => {}
        }
    }

    fn on_tap(&mut self, node: NodeId, pkt: &Packet, ctx: &mut Ctx) {
        if pkt.kind != PacketKind::Ack || pkt.dst != node || pkt.dst_agent == NONE {
            return;
        }
        let now = ctx.now();
        let rtt = now.saturating_sub(pkt.echo);
        if now >= self.warmup {
            self.rtt.record(rtt);
            let n = node as usize;
            if self.rtt_by_node.len() <= n {
                self.rtt_by_node.resize_with(n + 1, Histogram::default);
            }
            self.rtt_by_node[n].record(rtt);
        }
        if let Some((_, flow)) = self.traced {
            if pkt.flow == flow {
                let id = *self.trace_ids.get_or_insert_with(|| {
                    [
                        ctx.rec.id("rpr.tcp.cwnd", "segments"),
                        ctx.rec.id("rpr.tcp.rtt_s", "s"),
                    ]
                });
                ctx.rec.push(id[1], now, to_secs(rtt));
            }
        }
    }
}
