//! The TCP timestamp option (RFC 7323's RTT measurement) against its rules: a sample
//! from every ACK of new data, the echo that names the transmission an ACK answers, the
//! backoff reset it allows after a retransmission, and the option's bytes on the wire.
//!
//! Topology: the two-hop path of `tests/tcp.rs` (100 Mb/s, 1 ms access; 10 Mb/s, 19 ms
//! bottleneck), a log of the data segments offered to the access port and a tap of the
//! ACKs arriving at the sender's host.

use qossim::net::{PacketKind, PortHook, PortInfo};
use qossim::time::{secs, to_secs, Time, PS_PER_MS, PS_PER_S};
use qossim::transport::{TcpConfig, TcpReceiverConfig, TS_OPTION_BYTES};
use qossim::{Agent, Ctx, Packet};
use std::cell::RefCell;
use std::rc::Rc;

mod common;
#[path = "common/tcp_path.rs"]
mod tcp_path;
use tcp_path::{delivered, sender, setup, Blackout, DropOnce, Path, Setup};

fn lan_path() -> Path {
    Path {
        access_bps: 100_000_000,
        access_delay: PS_PER_MS,
        bottleneck_bps: 10_000_000,
        bottleneck_delay: 19 * PS_PER_MS,
        buffer: 1000,
    }
}

/// The connection over [`lan_path`] with timestamps on or off at both ends.
fn connection(seed: u64, ts: bool, cfg: TcpConfig) -> Setup {
    let cfg = TcpConfig {
        timestamps: ts,
        ..cfg
    };
    let rcfg = TcpReceiverConfig {
        timestamps: ts,
        ..TcpReceiverConfig::default()
    };
    setup(seed, &lan_path(), cfg, rcfg)
}

/// The RTT samples the sender traced: (time, seconds).
fn samples(s: &Setup) -> Vec<(f64, f64)> {
    let series = s.w.series();
    let r = series.iter().find(|x| x.name == "tx.rtt").expect("traced");
    r.t.iter().copied().zip(r.v.iter().copied()).collect()
}

/// The time of the last transmission of segment `seq` logged before `t`.
fn sent_before(s: &Setup, seq: u64, t: Time) -> Time {
    s.sends
        .borrow()
        .iter()
        .filter(|x| x.1 == seq && x.0 <= t)
        .map(|x| x.0)
        .next_back()
        .expect("sent")
}

/// Without loss, an ACK per segment: with timestamps every ACK is a sample, and each
/// sample is exactly the time from the acknowledged segment's transmission (its echoed
/// timestamp) to the ACK; without, one segment is timed at a time, so there is at most
/// one sample per base round trip (none can be shorter).
#[test]
fn with_timestamps_every_ack_of_new_data_is_a_sample() {
    let cfg = TcpConfig {
        wnd: 20,
        ..TcpConfig::default()
    };
    let end = 10 * PS_PER_S;
    let mut s = connection(1, true, cfg);
    s.w.run_until(end);
    let st = sender(&mut s).stats();
    let acks = s.acks.borrow().clone();
    assert_eq!(st.retransmits, 0);
    assert_eq!(st.rtt_samples, st.acks);
    assert_eq!(acks.len() as u64, st.acks);
    let got = samples(&s);
    assert_eq!(got.len(), acks.len());
    for (&(t, v), &(at, ack)) in got.iter().zip(&acks) {
        assert_eq!(t, to_secs(at));
        assert_eq!(v, to_secs(at - sent_before(&s, ack - 1, at)), "ACK {ack}");
    }
    let mut s = connection(1, false, cfg);
    s.w.run_until(end);
    let st = sender(&mut s).stats();
    let base = lan_path().base_rtt(1000, 40);
    eprintln!(
        "{} ACKs; without timestamps {} samples (at most {})",
        st.acks,
        st.rtt_samples,
        end / base + 1
    );
    assert!(st.rtt_samples >= 1 && st.rtt_samples <= end / base + 1);
}

/// With delayed ACKs the ACK of two segments echoes the first one's timestamp (RFC
/// 7323: only a segment at the last cumulative ACK sent sets the echo), so each sample
/// runs from the transmission of the first segment the ACK newly covers, the delay the
/// receiver held it included.
#[test]
fn a_delayed_ack_echoes_the_first_of_its_segments() {
    let cfg = TcpConfig {
        wnd: 20,
        timestamps: true,
        ..TcpConfig::default()
    };
    let rcfg = TcpReceiverConfig {
        timestamps: true,
        ..TcpReceiverConfig::default().delayed(100 * PS_PER_MS)
    };
    let mut s = setup(2, &lan_path(), cfg, rcfg);
    s.w.run_until(5 * PS_PER_S);
    let acks = s.acks.borrow().clone();
    let got = samples(&s);
    assert_eq!(got.len(), acks.len());
    let (mut prev, mut pairs) = (0, 0);
    for (&(t, v), &(at, ack)) in got.iter().zip(&acks) {
        assert_eq!(t, to_secs(at));
        assert_eq!(v, to_secs(at - sent_before(&s, prev, at)), "ACK {ack}");
        pairs += u64::from(ack - prev == 2);
        prev = ack;
    }
    assert!(pairs > acks.len() as u64 / 2, "{pairs} of {}", acks.len());
}

/// Segment 30 is lost once and fast-retransmitted. With timestamps the duplicate ACKs
/// (echoing the last in-order segment's time) are no samples, and the ACK that the
/// retransmission causes echoes the retransmission's time: its sample is the time from
/// the retransmission, not from the first transmission a round trip earlier. Without
/// timestamps that ACK gives no sample at all (Karn's rule).
#[test]
fn the_ack_of_a_retransmission_echoes_the_retransmission() {
    for ts in [true, false] {
        let mut s = connection(3, ts, TcpConfig::default());
        let b = s.bottleneck;
        s.w.net.add_hook(
            b,
            Box::new(DropOnce {
                seq: 30,
                done: false,
            }),
        );
        s.w.run_until(3 * PS_PER_S);
        let st = sender(&mut s).stats();
        assert_eq!((st.fast_retransmits, st.retransmits), (1, 1));
        let acks = s.acks.borrow().clone();
        let healed = acks.iter().find(|a| a.1 > 30).unwrap().0;
        let first = s.sends.borrow().iter().find(|x| x.1 == 30).unwrap().0;
        let retx = sent_before(&s, 30, healed);
        assert!(retx > first);
        let at: Vec<f64> = samples(&s)
            .into_iter()
            .filter(|x| x.0 == to_secs(healed))
            .map(|x| x.1)
            .collect();
        eprintln!(
            "timestamps {ts}: first transmission {:.6} s, retransmission {:.6} s, ACK {:.6} s, \
             samples then {at:?}",
            to_secs(first),
            to_secs(retx),
            to_secs(healed)
        );
        if ts {
            assert_eq!(at, vec![to_secs(healed - retx)]);
            let mut top = 0;
            let advancing = acks.iter().filter(|a| {
                let new = a.1 > top;
                top = top.max(a.1);
                new
            });
            assert_eq!(st.rtt_samples, advancing.count() as u64);
        } else {
            assert!(at.is_empty());
        }
    }
}

/// A window of 20 segments (no queue: the round trip is the base 41 ms), every data
/// segment lost from 5 s to 7.5 s: timeouts at RTO 0.2 s, then 0.4, 0.8
/// and 1.6 s (the backoff is 16 and, past three doublings, the smoothed RTT is
/// discarded); the retransmission of 8 s gets through. With timestamps its ACK is a
/// valid sample: the backoff returns to 1, the smoothed RTT restarts from it (within a
/// tick of the base round trip) and the RTO is the 200-ms minimum again. Without, Karn's
/// rule leaves the backoff at 16 and no smoothed RTT until a segment sent after it is
/// acknowledged.
#[test]
fn after_timeouts_the_retransmissions_ack_resets_the_rto_with_timestamps() {
    let (from, to) = (secs(5.0), secs(7.5));
    for ts in [true, false] {
        let cfg = TcpConfig {
            wnd: 20,
            ..TcpConfig::default()
        };
        let mut s = connection(4, ts, cfg);
        let a = s.access;
        s.w.net.add_hook(a, Box::new(Blackout { from, to }));
        s.w.run_until(to);
        let mut now = to;
        while !s.acks.borrow().iter().any(|x| x.0 >= to) {
            now += PS_PER_MS;
            s.w.run_until(now);
        }
        let tx = sender(&mut s);
        let (timeouts, backoff, srtt, rto) =
            (tx.stats().timeouts, tx.backoff(), tx.srtt(), tx.rto());
        eprintln!(
            "timestamps {ts}: {timeouts} timeouts; after the first ACK: backoff {backoff}, \
             srtt {srtt:?}, RTO {:.3} s",
            to_secs(rto)
        );
        assert_eq!(timeouts, 4);
        if ts {
            let base = lan_path().base_rtt(1000 + TS_OPTION_BYTES, 40 + TS_OPTION_BYTES);
            let tick = 10 * PS_PER_MS;
            let srtt = srtt.expect("a fresh sample");
            assert!(srtt + tick > base && srtt < base + tick, "{srtt} vs {base}");
            assert_eq!((backoff, rto), (1, 200 * PS_PER_MS));
        } else {
            assert_eq!((backoff, srtt), (16, None));
            assert!(rto >= 16 * 200 * PS_PER_MS);
        }
    }
}

/// A log of packet sizes, bytes.
type Sizes = Rc<RefCell<Vec<u32>>>;

/// Logs the size of every ACK arriving at a node.
struct AckSizes(Sizes);
impl Agent for AckSizes {
    fn on_tap(&mut self, _node: qossim::net::NodeId, pkt: &Packet, _: &mut Ctx) {
        if pkt.kind == PacketKind::Ack {
            self.0.borrow_mut().push(pkt.size);
        }
    }
}

/// Logs the size of every data segment offered to a port.
struct DataSizes(Sizes);
impl PortHook for DataSizes {
    fn on_arrival(&mut self, pkt: &mut Packet, _: Time, _: &PortInfo) -> bool {
        if pkt.kind == PacketKind::Data {
            self.0.borrow_mut().push(pkt.size);
        }
        true
    }
}

/// The option adds 12 bytes to every segment and ACK on the wire and none to the
/// payload: the receiver still delivers 960 B per segment.
#[test]
fn the_option_adds_twelve_bytes_on_the_wire_and_none_to_the_payload() {
    for ts in [true, false] {
        let extra = if ts { TS_OPTION_BYTES } else { 0 };
        let mut s = connection(5, ts, TcpConfig::default());
        let (data, acks): (Sizes, Sizes) = Default::default();
        let a = s.access;
        s.w.net.add_hook(a, Box::new(DataSizes(data.clone())));
        let tap = s.w.add_agent("sizes", Box::new(AckSizes(acks.clone())));
        let h0 = s.w.net.node_id("h0").unwrap();
        s.w.tap(h0, tap.id());
        s.w.run_until(2 * PS_PER_S);
        assert!(data.borrow().len() > 100 && acks.borrow().len() > 100);
        assert!(data.borrow().iter().all(|&b| b == 1000 + extra));
        assert!(acks.borrow().iter().all(|&b| b == 40 + extra));
        let n = delivered(&mut s);
        let rx = s.w.agents.get_mut(s.receiver).unwrap();
        assert_eq!(rx.delivered_bytes(), n * 960);
    }
}

/// `timestamps` is read (default false) on a TCP entry.
#[test]
fn the_timestamps_key_is_read() {
    let text = |extra: &str| {
        format!(
            "[run]\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nhosts = 1\naccess_rate = \"1Gbps\"\nbottleneck_rate = \"10Mbps\"\n\
             [[traffic]]\nname = \"t\"\nfrom = \"s0\"\nto = \"d0\"\nmodel = \"tcp\"\n{extra}"
        )
    };
    let ts = |extra: &str| match &common::parse(&text(extra)).unwrap().traffic[0].model {
        qossim::scenario::TrafficModel::Tcp(t) => t.timestamps,
        m => panic!("{m:?}"),
    };
    assert!(!ts(""));
    assert!(ts("timestamps = true"));
    assert!(!ts("timestamps = false"));
    assert!(common::parse(&text("timestamps = 1")).is_err());
}
