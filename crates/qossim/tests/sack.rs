//! SACK-based loss recovery (RFC 2018 blocks, RFC 6675 recovery) against NewReno, first
//! principles and the Mathis model.
//!
//! Topology (as in `tests/tcp.rs`): sender host h0 -- router r -- receiver host h1, one
//! link each way per hop. Test-only port hooks drop chosen data segments or log them; a
//! tap at h0 logs the ACKs the sender receives.

mod common;
#[path = "common/tcp_path.rs"]
mod tcp_path;

use qossim::metrics::t_interval;
use qossim::time::{to_secs, tx_time, Time, PS_PER_MS, PS_PER_S};
use qossim::transport::{Congestion, CubicParams, TcpConfig, TcpReceiverConfig, TcpStats};
use qossim::Rng;
use tcp_path::{assert_mathis_band, delivered, sender, DropEach, Lossy, Path, Setup};

/// 100 Mb/s access links, a 10 Mb/s bottleneck; base RTT about 41 ms, no overflow.
fn lan_path() -> Path {
    Path {
        access_bps: 100_000_000,
        access_delay: PS_PER_MS,
        bottleneck_bps: 10_000_000,
        bottleneck_delay: 19 * PS_PER_MS,
        buffer: 1000,
    }
}

/// 100 Mb/s everywhere, an RTT of about 100 ms (the random-loss path of `tests/tcp.rs`).
fn random_loss_path() -> Path {
    Path {
        access_bps: 100_000_000,
        access_delay: PS_PER_MS,
        bottleneck_bps: 100_000_000,
        bottleneck_delay: 49 * PS_PER_MS,
        buffer: 10_000,
    }
}

/// The connection over `path` with congestion control `congestion`, SACK on or off at
/// both ends.
fn setup(seed: u64, path: &Path, congestion: Congestion, sack: bool) -> Setup {
    let rcfg = TcpReceiverConfig {
        sack,
        ..TcpReceiverConfig::default()
    };
    let cfg = TcpConfig {
        congestion,
        sack,
        ..TcpConfig::default()
    };
    tcp_path::setup(seed, path, cfg, rcfg)
}

/// What a run with scripted drops shows.
struct Scripted {
    stats: TcpStats,
    sends: Vec<(Time, u64)>,
    acks: Vec<(Time, u64)>,
}

impl Scripted {
    /// When the n-th (from 0) transmission of `seq` left the sender.
    fn sent(&self, seq: u64, n: usize) -> Option<Time> {
        self.sends.iter().filter(|x| x.1 == seq).nth(n).map(|x| x.0)
    }

    /// When the sender first learnt that every segment up to `seq` had arrived.
    fn acked(&self, seq: u64) -> Option<Time> {
        self.acks.iter().find(|a| a.1 > seq).map(|a| a.0)
    }
}

/// Runs a connection over the LAN path for 5 s, the first transmission of each of
/// `drops` dropped at the bottleneck.
fn scripted(congestion: Congestion, sack: bool, drops: &[u64]) -> Scripted {
    let mut s = setup(4, &lan_path(), congestion, sack);
    let b = s.bottleneck;
    s.w.net.add_hook(
        b,
        Box::new(DropEach {
            seqs: drops.to_vec(),
            done: vec![false; drops.len()],
        }),
    );
    s.w.run_until(5 * PS_PER_S);
    let stats = sender(&mut s).stats();
    let sends = s.sends.borrow().clone();
    let acks = s.acks.borrow().clone();
    Scripted { stats, sends, acks }
}

/// Several losses of one window (slow start has the window near 40 segments when
/// segment 30 is dropped) are recovered in about one round trip: one fast retransmit, no
/// timeout, each hole sent exactly once, and every hole resent within one round trip of
/// the fast retransmit - without waiting for an ACK that asks for it.
///
/// The bound. The duplicate ACKs that make each hole lost (three segments above it
/// SACKed) and that drain `pipe` below `cwnd` are the ACKs of segments sent before the
/// fast retransmit at `t_fr`; each of those segments was sent before `t_fr`, so its ACK
/// arrives before `t_fr + RTT_max`, with `RTT_max` the base RTT plus the bottleneck's
/// transmission time of every segment then outstanding (`F`, from segment 30 to the
/// highest sent: the most that can be queued ahead of any of them). Half the window
/// (F / 2 ACKs) drains the pipe to `cwnd = F / 2`, which leaves about F / 2 − 5 send
/// opportunities for the holes, F being near 40. So the last hole leaves by
/// `t_fr + RTT_max`, and its ACK - the end of the recovery - arrives within a second
/// round trip, by `t_fr + 2 RTT_max`. NewReno on the same script resends one hole per
/// round trip, the hole after a partial ACK asks for it: its recovery ends later.
#[test]
fn sack_recovers_several_losses_of_one_window_in_one_round_trip() {
    let path = lan_path();
    let tx = tx_time(1000, path.bottleneck_bps);
    let base = path.base_rtt(1000, 40);
    for drops in [vec![30, 33, 36], vec![30, 31, 34, 37, 40, 41]] {
        for congestion in [
            Congestion::NewReno,
            Congestion::Cubic(CubicParams::default()),
        ] {
            let r = scripted(congestion, true, &drops);
            let st = r.stats;
            assert_eq!(
                (st.fast_retransmits, st.timeouts, st.retransmits),
                (1, 0, drops.len() as u64),
                "{congestion:?} {drops:?}: {st:?}"
            );
            let t_fr = r.sent(30, 1).unwrap();
            let outstanding = r
                .sends
                .iter()
                .filter(|x| x.0 <= t_fr)
                .map(|x| x.1)
                .max()
                .unwrap()
                - 30
                + 1;
            let rtt_max = base + outstanding * tx;
            for &hole in &drops {
                let t = r.sent(hole, 1).unwrap();
                eprintln!(
                    "{} {drops:?}: hole {hole} resent {:.2} ms after the fast retransmit \
                     (bound {:.2} ms, {outstanding} outstanding)",
                    congestion.name(),
                    to_secs(t - t_fr) * 1e3,
                    to_secs(rtt_max) * 1e3
                );
                assert!(t >= t_fr && t <= t_fr + rtt_max, "hole {hole}");
                assert!(r.sent(hole, 2).is_none(), "hole {hole} sent once");
            }
            let last = *drops.iter().max().unwrap();
            let done = r.acked(last).unwrap();
            assert!(done <= t_fr + 2 * rtt_max, "recovered at {done}");
            let nr = scripted(congestion, false, &drops);
            let nr_done = nr.acked(last).unwrap();
            eprintln!(
                "{} {drops:?}: recovered {:.1} ms after the fast retransmit with SACK, \
                 {:.1} ms without",
                congestion.name(),
                to_secs(done - t_fr) * 1e3,
                to_secs(nr_done - t_fr) * 1e3
            );
            assert!(
                nr_done > done + base,
                "one round trip per further hole without SACK"
            );
        }
    }
}

/// On the same drop script, SACK never finishes recovering later than NewReno (nor
/// with more timeouts), and resends each dropped segment exactly once: SACK resends every
/// hole NewReno would, no later (NewReno resends a hole when an ACK asks for it, SACK as
/// soon as three segments above it have arrived and the pipe allows, or when a partial
/// ACK asks for it). Scripts: one loss, losses in a row, spread losses, and twenty
/// random scripts of 1 to 8 losses among segments 20-79 (one or two windows of slow
/// start), drawn from a fixed seed. "Recovered" is the arrival of the first ACK that
/// covers every dropped segment.
#[test]
fn sack_never_recovers_later_than_newreno() {
    let mut scripts: Vec<Vec<u64>> = vec![
        vec![30],
        vec![30, 31],
        vec![30, 31, 32, 33, 34],
        vec![25, 29, 33, 37, 41, 45],
        vec![40, 70],
    ];
    let mut rng = Rng::from_seed(7);
    for _ in 0..20 {
        let n = 1 + rng.below(8) as usize;
        let mut d: Vec<u64> = (0..n).map(|_| 20 + rng.below(60)).collect();
        d.sort_unstable();
        d.dedup();
        scripts.push(d);
    }
    for drops in &scripts {
        let last = *drops.iter().max().unwrap();
        for (with, without) in [
            (Congestion::NewReno, Congestion::NewReno),
            (
                Congestion::Cubic(CubicParams::default()),
                Congestion::Cubic(CubicParams::default()),
            ),
        ] {
            let s = scripted(with, true, drops);
            let n = scripted(without, false, drops);
            let (ts, tn) = (s.acked(last).unwrap(), n.acked(last).unwrap());
            eprintln!(
                "{} {drops:?}: recovered at {:.1} ms with SACK ({} timeouts, {} resent), \
                 {:.1} ms without ({} timeouts, {} resent)",
                with.name(),
                to_secs(ts) * 1e3,
                s.stats.timeouts,
                s.stats.retransmits,
                to_secs(tn) * 1e3,
                n.stats.timeouts,
                n.stats.retransmits
            );
            assert!(ts <= tn, "{drops:?}: SACK {ts} after NewReno {tn}");
            assert!(s.stats.timeouts <= n.stats.timeouts, "{drops:?}");
            assert_eq!(
                s.stats.retransmits,
                drops.len() as u64,
                "{drops:?}: each hole once"
            );
        }
    }
}

/// NewReno with SACK under independent random loss (p = 0.01, eight seeds, [20 s, 220 s])
/// stays in Mathis's band `[0.7 B, 1.07 B]`, the band and its derivation being those of
/// `random_loss_throughput_matches_mathis` in `tests/tcp.rs`: SACK removes the timeouts
/// after several losses of one window and the round trip per further hole, which the
/// band's upper bound (ideal congestion avoidance) already leaves out, and keeps the
/// halving per loss event and the additive increase that make the law. The test passes
/// if the 95% confidence interval of the mean meets the band.
#[test]
fn sack_random_loss_throughput_matches_mathis() {
    let p = 0.01;
    let path = random_loss_path();
    let rtt = to_secs(path.base_rtt(1000, 40));
    let mathis = (1.5f64 / p).sqrt() / rtt;
    let (warm, end) = (20 * PS_PER_S, 220 * PS_PER_S);
    let mut timeouts = 0;
    let rates: Vec<f64> = (0..8)
        .map(|seed| {
            let mut s = setup(seed, &path, Congestion::NewReno, true);
            let rng = s.w.rng("loss");
            s.w.net.add_hook(s.bottleneck, Box::new(Lossy { p, rng }));
            s.w.run_until(warm);
            let a = delivered(&mut s);
            s.w.run_until(end);
            timeouts += sender(&mut s).stats().timeouts;
            (delivered(&mut s) - a) as f64 / to_secs(end - warm)
        })
        .collect();
    let e = t_interval(&rates);
    eprintln!(
        "newreno+sack p = {p}: {:.1} +- {:.1} segments/s, Mathis {mathis:.1}, ratio {:.3}, \
         {timeouts} timeouts",
        e.mean,
        e.half_width,
        e.mean / mathis
    );
    assert_mathis_band("newreno+sack", &e, mathis);
}

/// A scenario turns SACK on per traffic entry (both ends), runs it, and refuses it with
/// Reno, whose fast recovery SACK recovery replaces.
#[test]
fn scenario_sack_key() {
    let text = common::tcp_bottleneck(
        "queue = { kind = \"droptail\", limit = \"20p\" }",
        4,
        "20s",
        "5s",
        "congestion = \"newreno\"\nsack = true",
    );
    let run = |text: &str| {
        let sc = common::parse(text).unwrap_or_else(|d| panic!("{d:#?}"));
        let out = qossim::scenario::run(&sc, Some(1), &mut |_| true).unwrap();
        let sum = |key: &str| -> f64 {
            (0..4)
                .map(|k| common::num(&out, &format!("agent.tcp.ftp.{k}.{key}")))
                .sum()
        };
        (sum("retransmits"), sum("rx.goodput_bps"))
    };
    let (rtx, good) = run(&text);
    let plain = common::tcp_bottleneck(
        "queue = { kind = \"droptail\", limit = \"20p\" }",
        4,
        "20s",
        "5s",
        "congestion = \"newreno\"",
    );
    let (rtx0, good0) = run(&plain);
    eprintln!(
        "4 NewReno connections: with SACK {rtx} retransmits, {good:.0} b/s; without \
         {rtx0} retransmits, {good0:.0} b/s"
    );
    assert!(rtx > 0.0, "the 20-packet buffer overflows");
    assert!(
        (rtx, good) != (rtx0, good0),
        "the key reaches the connections"
    );
    // Every payload byte delivered crossed the 10 Mb/s bottleneck in a 1500-B segment.
    assert!(good <= 10e6 * 1460.0 / 1500.0, "{good}");
    let reno = common::tcp_bottleneck(
        "queue = { kind = \"droptail\", limit = \"20p\" }",
        4,
        "20s",
        "5s",
        "sack = true",
    );
    let d = common::parse(&reno).expect_err("reno + sack is refused");
    let msg = format!("{d:?}");
    assert!(msg.contains("sack") && msg.contains("newreno"), "{msg}");
}
