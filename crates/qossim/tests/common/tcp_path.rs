//! The two-hop TCP path of `tests/tcp.rs` and `tests/sack.rs`: sender host h0 -- router
//! r -- receiver host h1, one link each way per hop, a log of the data segments offered
//! to the access port and a tap of the ACKs arriving at h0.
#![allow(dead_code)]

use qossim::net::{LinkId, NodeId, PacketKind, PortHook, PortInfo};
use qossim::queue::{DropTail, Limit};
use qossim::time::{tx_time, Time};
use qossim::traffic::PacketTemplate;
use qossim::transport::{TcpConfig, TcpReceiver, TcpReceiverConfig, TcpRenoSender};
use qossim::{Agent, AgentHandle, Ctx, Packet, Rng, World};
use std::cell::RefCell;
use std::rc::Rc;

/// (time, sequence or ACK number) records.
pub type Log = Rc<RefCell<Vec<(Time, u64)>>>;

/// Logs (time, seq) of every data segment offered to the port.
pub struct SendLog(pub Log);
impl PortHook for SendLog {
    fn on_arrival(&mut self, pkt: &mut Packet, now: Time, _: &PortInfo) -> bool {
        if pkt.kind == PacketKind::Data {
            self.0.borrow_mut().push((now, pkt.seq));
        }
        true
    }
}

/// Drops each data segment independently with probability `p`.
pub struct Lossy {
    pub p: f64,
    pub rng: Rng,
}
impl PortHook for Lossy {
    fn on_arrival(&mut self, pkt: &mut Packet, _: Time, _: &PortInfo) -> bool {
        pkt.kind != PacketKind::Data || !self.rng.bernoulli(self.p)
    }
}

/// Logs (time, ack) of every ACK arriving at a node.
pub struct AckTap(pub Log);
impl Agent for AckTap {
    fn on_tap(&mut self, _node: NodeId, pkt: &Packet, ctx: &mut Ctx) {
        if pkt.kind == PacketKind::Ack {
            self.0.borrow_mut().push((ctx.now(), pkt.ack));
        }
    }
}

/// The two hops' rates, delays and the bottleneck's buffer.
pub struct Path {
    /// Access link rate (both directions), bits per second.
    pub access_bps: u64,
    /// Access link delay.
    pub access_delay: Time,
    /// Bottleneck rate (both directions).
    pub bottleneck_bps: u64,
    /// Bottleneck delay.
    pub bottleneck_delay: Time,
    /// Bottleneck buffer, packets.
    pub buffer: usize,
}

impl Path {
    /// Round-trip time of a segment of `size` bytes and its `ack`-byte ACK through empty
    /// queues.
    pub fn base_rtt(&self, size: u32, ack: u32) -> Time {
        2 * (self.access_delay + self.bottleneck_delay)
            + tx_time(size, self.access_bps)
            + tx_time(size, self.bottleneck_bps)
            + tx_time(ack, self.access_bps)
            + tx_time(ack, self.bottleneck_bps)
    }
}

/// A connection over a [`Path`], its links and logs.
pub struct Setup {
    pub w: World,
    pub sender: AgentHandle<TcpRenoSender>,
    pub receiver: AgentHandle<TcpReceiver>,
    pub access: LinkId,
    pub bottleneck: LinkId,
    pub sends: Log,
    pub acks: Log,
}

/// The connection over `path`, the sender traced.
pub fn setup(seed: u64, path: &Path, cfg: TcpConfig, rcfg: TcpReceiverConfig) -> Setup {
    let mut w = World::new(seed);
    let h0 = w.net.add_node("h0");
    let r = w.net.add_node("r");
    let h1 = w.net.add_node("h1");
    let big = || Box::new(DropTail::new(Limit::Packets(100_000)));
    let access = w
        .net
        .add_link("h0-r", h0, r, path.access_bps, path.access_delay, big());
    let bottleneck = w.net.add_link(
        "r-h1",
        r,
        h1,
        path.bottleneck_bps,
        path.bottleneck_delay,
        Box::new(DropTail::new(Limit::Packets(path.buffer))),
    );
    w.net.add_link(
        "h1-r",
        h1,
        r,
        path.bottleneck_bps,
        path.bottleneck_delay,
        big(),
    );
    w.net
        .add_link("r-h0", r, h0, path.access_bps, path.access_delay, big());
    let g = w.flows.add_group("tcp");
    let receiver = w.add_agent("rx", Box::new(TcpReceiver::new(rcfg)));
    let cfg = TcpConfig { group: g, ..cfg };
    let sender = w.add_agent(
        "tx",
        Box::new(TcpRenoSender::new(cfg, PacketTemplate::new(h0, h1, receiver.id())).trace(true)),
    );
    let sends: Log = Rc::default();
    let acks: Log = Rc::default();
    w.net.add_hook(access, Box::new(SendLog(sends.clone())));
    let tap = w.add_agent("ack-tap", Box::new(AckTap(acks.clone())));
    w.tap(h0, tap.id());
    Setup {
        w,
        sender,
        receiver,
        access,
        bottleneck,
        sends,
        acks,
    }
}

/// Segments the receiver delivered in order.
pub fn delivered(s: &mut Setup) -> u64 {
    s.w.agents
        .get_mut::<TcpReceiver>(s.receiver)
        .unwrap()
        .delivered_segments()
}

/// The sender.
pub fn sender(s: &mut Setup) -> &mut TcpRenoSender {
    s.w.agents.get_mut::<TcpRenoSender>(s.sender).unwrap()
}

/// Asserts that the confidence interval `e` of a throughput (segments/s) meets Mathis's
/// band `[0.7 B, 1.31/sqrt(1.5) B]` around `mathis` = B (the band is derived at
/// `random_loss_throughput_matches_mathis` in `tests/tcp.rs`); `label` names the case.
pub fn assert_mathis_band(label: &str, e: &qossim::metrics::Estimate, mathis: f64) {
    assert!(
        e.mean + e.half_width >= 0.7 * mathis
            && e.mean - e.half_width <= 1.31 / 1.5f64.sqrt() * mathis,
        "{label}: {} +- {} vs Mathis {mathis}",
        e.mean,
        e.half_width
    );
}

/// Drops the first transmission of segment `seq`.
pub struct DropOnce {
    /// The segment dropped.
    pub seq: u64,
    /// Whether it has been dropped.
    pub done: bool,
}
impl PortHook for DropOnce {
    fn on_arrival(&mut self, pkt: &mut Packet, _: Time, _: &PortInfo) -> bool {
        if pkt.kind == PacketKind::Data && pkt.seq == self.seq && !self.done {
            self.done = true;
            return false;
        }
        true
    }
}

/// Drops every data segment offered in `[from, to)`.
pub struct Blackout {
    /// Start of the blackout.
    pub from: Time,
    /// Its end (excluded).
    pub to: Time,
}
impl PortHook for Blackout {
    fn on_arrival(&mut self, pkt: &mut Packet, now: Time, _: &PortInfo) -> bool {
        pkt.kind != PacketKind::Data || now < self.from || now >= self.to
    }
}

/// Drops the first transmission of each of `seqs`.
pub struct DropEach {
    /// The segments dropped.
    pub seqs: Vec<u64>,
    /// Whether each has been dropped.
    pub done: Vec<bool>,
}
impl PortHook for DropEach {
    fn on_arrival(&mut self, pkt: &mut Packet, _: Time, _: &PortInfo) -> bool {
        if pkt.kind == PacketKind::Data {
            if let Some(i) = self.seqs.iter().position(|&s| s == pkt.seq) {
                if !self.done[i] {
                    self.done[i] = true;
                    return false;
                }
            }
        }
        true
    }
}
