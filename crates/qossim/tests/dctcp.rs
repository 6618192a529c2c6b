//! DCTCP (RFC 8257) against its own arithmetic and the DCTCP analysis.
//!
//! Topology of the hand-built tests: sender host h0 -- router r -- receiver host h1, one
//! link each way per hop, as in `tests/tcp.rs`; a test-only port hook marks data segments
//! CE at random.

use qossim::net::{marks, LinkId, PacketKind, PortHook, PortInfo};
use qossim::queue::{DropTail, Limit};
use qossim::time::{Time, PS_PER_MS, PS_PER_S};
use qossim::traffic::PacketTemplate;
use qossim::transport::{
    Congestion, DctcpParams, TcpConfig, TcpReceiver, TcpReceiverConfig, TcpRenoSender,
};
use qossim::{AgentHandle, Packet, Rng, World};
use std::cell::RefCell;
use std::rc::Rc;

mod common;

/// Marks each ECN-capable data segment CE independently with probability `p`, logging
/// the numbers of the segments it marked.
struct RandomMarker {
    p: f64,
    rng: Rng,
    marked: Rc<RefCell<Vec<u64>>>,
}
impl PortHook for RandomMarker {
    fn on_arrival(&mut self, pkt: &mut Packet, _: Time, _: &PortInfo) -> bool {
        if pkt.kind == PacketKind::Data && pkt.has(marks::ECN_ECT) && self.rng.bernoulli(self.p) {
            pkt.set(marks::ECN_CE);
            self.marked.borrow_mut().push(pkt.seq);
        }
        true
    }
    fn wants_departures(&self) -> bool {
        false
    }
}

/// One DCTCP connection h0 -> h1 over 100 Mb/s links (1 ms access, 9 ms bottleneck: a
/// round trip of about 20 ms, 250 segments in flight at the link's rate) with buffers
/// that never fill, every data segment marked CE with probability `p` at the bottleneck.
/// A world and its DCTCP sender.
type Connection = (World, AgentHandle<TcpRenoSender>);

fn random_marking(seed: u64, p: f64, g: f64) -> Connection {
    random_marking_with(seed, p, g, None).0
}

/// [`random_marking`] with the receiver's delayed ACKs (`delayed`), returning also the
/// log of marked segments.
fn random_marking_with(
    seed: u64,
    p: f64,
    g: f64,
    delayed: Option<Time>,
) -> (Connection, Rc<RefCell<Vec<u64>>>) {
    let mut w = World::new(seed);
    let h0 = w.net.add_node("h0");
    let r = w.net.add_node("r");
    let h1 = w.net.add_node("h1");
    let big = || Box::new(DropTail::new(Limit::Packets(100_000)));
    let (rate, ms) = (100_000_000, PS_PER_MS);
    w.net.add_link("h0-r", h0, r, rate, ms, big());
    let bottleneck: LinkId = w.net.add_link("r-h1", r, h1, rate, 9 * ms, big());
    w.net.add_link("h1-r", h1, r, rate, 9 * ms, big());
    w.net.add_link("r-h0", r, h0, rate, ms, big());
    let g_id = w.flows.add_group("tcp");
    let rcfg = TcpReceiverConfig {
        dctcp: true,
        delayed_ack: delayed,
        ..TcpReceiverConfig::default()
    };
    let rx = w.add_agent("rx", Box::new(TcpReceiver::new(rcfg)));
    let cfg = TcpConfig {
        group: g_id,
        ecn: true,
        congestion: Congestion::Dctcp(DctcpParams { g }),
        ..TcpConfig::default()
    };
    let tx = w.add_agent(
        "tx",
        Box::new(TcpRenoSender::new(
            cfg,
            PacketTemplate::new(h0, h1, rx.id()),
        )),
    );
    let rng = w.rng("mark");
    let marked: Rc<RefCell<Vec<u64>>> = Rc::default();
    let hook = RandomMarker {
        p,
        rng,
        marked: marked.clone(),
    };
    w.net.add_hook(bottleneck, Box::new(hook));
    ((w, tx), marked)
}

/// With every segment marked independently with probability `p`, α estimates `p`.
///
/// Derivation. Window `n` is a set of segments fixed when window `n − 1` ends (the
/// segments up to `snd_nxt` then), before any of them is acknowledged; their marks are
/// independent Bernoulli(p) draws, so given everything before, the window's marked
/// fraction `F_n` (`W_n` segments, no loss on this path, one ACK per segment) has mean
/// `p` and variance `p(1 − p)/W_n`. The `F_n − p` are martingale differences: the mean of
/// `F` over `N` windows has mean `p` and variance `p(1 − p) mean(1/W) / N`, and is
/// normal to first order; at 4.5 standard deviations (the realised `mean(1/W)` plugged
/// in) a correct model fails one check in 150 000. α is tied to F exactly: summing
/// `α_n − α_{n−1} = g (F_n − α_{n−1})` gives `mean α = mean F − (α_N − α_0)(1 − g)/(g N)`,
/// checked to rounding, so `|mean α − p|` may exceed F's bound by that last term only.
/// The overall marked share of the acknowledged segments is checked the same way
/// (binomial, `p(1 − p)/acked`).
///
/// Three marking probabilities (the window settles near `(1 + √3)/p` segments: 137, 27
/// and 9), 100 s after a 10-s warm-up, g = 1/16, and one run at g = 1/4.
#[test]
fn alpha_converges_to_an_independent_marking_probability() {
    for (p, g) in [
        (0.02, 1.0 / 16.0),
        (0.1, 1.0 / 16.0),
        (0.3, 1.0 / 16.0),
        (0.1, 0.25),
    ] {
        let (mut w, tx) = random_marking(7, p, g);
        w.set_warmup(10 * PS_PER_S);
        w.run_until(110 * PS_PER_S);
        let s = w.agents.get_mut(tx).unwrap();
        let st = s.stats();
        let d = s.dctcp().expect("a DCTCP sender");
        let m = d.stats();
        let n = m.windows as f64;
        let (alpha_mean, f_mean) = (m.alpha_sum / n, m.fraction_sum / n);
        let sd = (p * (1.0 - p) * (m.inv_window_sum / n) / n).sqrt();
        let edge = (d.alpha() - m.alpha_start) * (1.0 - g) / (g * n);
        let share = m.marked as f64 / m.acked as f64;
        let share_sd = (p * (1.0 - p) / m.acked as f64).sqrt();
        eprintln!(
            "p = {p}, g = {g}: {} windows, mean 1/W = {:.4}; mean F = {f_mean:.5} (sd {sd:.5}), \
             mean α = {alpha_mean:.5}, share {share:.5}; {} ECN reductions, {} retransmits, \
             cwnd {:.1}",
            m.windows,
            m.inv_window_sum / n,
            st.ecn_reductions,
            st.retransmits,
            s.cwnd()
        );
        assert_eq!(st.retransmits, 0, "the path loses nothing");
        assert!(m.windows > 1000, "{}", m.windows);
        assert!((f_mean - p).abs() <= 4.5 * sd, "p = {p}: mean F {f_mean}");
        assert!(
            (alpha_mean - (f_mean - edge)).abs() < 1e-9,
            "the identity: {alpha_mean} vs {}",
            f_mean - edge
        );
        assert!(
            (alpha_mean - p).abs() <= 4.5 * sd + edge.abs(),
            "p = {p}: mean α {alpha_mean}"
        );
        assert!(
            (share - p).abs() <= 4.5 * share_sd,
            "p = {p}: share {share}"
        );
    }
}

/// The receiver echoes CE exactly (RFC 8257, section 3.2), with an ACK per segment and
/// with delayed ACKs (its two-state machine: a change of CE state first sends the ACK
/// being delayed, with the old state): the segments the sender counts as marked, over the
/// windows that ended (which cover segments `0..acked` exactly, no loss on this path),
/// are exactly those the marker marked. An RFC 3168 receiver, which holds ECE from a mark
/// until CWR, would report more.
#[test]
fn the_receiver_echoes_ce_exactly_with_and_without_delayed_acks() {
    for delayed in [None, Some(100 * PS_PER_MS)] {
        let ((mut w, tx), marked) = random_marking_with(3, 0.1, 1.0 / 16.0, delayed);
        w.run_until(20 * PS_PER_S);
        let s = w.agents.get_mut(tx).unwrap();
        let m = s.dctcp().unwrap().stats();
        let truth = marked.borrow().iter().filter(|&&q| q < m.acked).count() as u64;
        eprintln!(
            "delayed ACKs {delayed:?}: {} segments in {} windows, {} marked, {truth} by the marker",
            m.acked, m.windows, m.marked
        );
        assert_eq!(s.stats().retransmits, 0);
        assert!(m.acked > 10_000);
        assert_eq!(m.marked, truth);
    }
}

/// A dumbbell whose 100 Mb/s, 10-ms bottleneck `r0-r1` has the queue `queue` (a TOML
/// inline table), loaded by `flows` long-lived connections s0 -> d0 (1500-B segments,
/// an ACK per segment, starts spread over 100 ms) with `tcp` lines added; access links
/// of 1 Gb/s and 1 ms: a round trip of 24 ms plus transmission times, so the link holds
/// C·RTT ≈ 200 segments in flight. The queue is sampled every millisecond.
fn step_bottleneck(queue: &str, flows: u32, tcp: &str, duration: &str, warmup: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration}"
warmup = "{warmup}"
[topology]
kind = "dumbbell"
hosts = 2
access_rate = "1Gbps"
access_delay = "1ms"
bottleneck_rate = "100Mbps"
bottleneck_delay = "10ms"
[links."r0-r1"]
queue = {queue}
[[traffic]]
name = "bulk"
from = "s0"
to = "d0"
model = "tcp"
flows = {flows}
packet_size = "1500B"
start_spread = "100ms"
{tcp}
[[metric]]
kind = "queue_length"
link = "r0-r1"
interval = "1ms"
"#
    )
}

/// The bottleneck's queue samples after the warm-up.
fn queue_after(out: &qossim::scenario::RunOutput, warmup_s: f64) -> Vec<f64> {
    let s = out
        .series
        .iter()
        .find(|s| s.name == "r0-r1.queue")
        .expect("the queue series");
    s.t.iter()
        .zip(&s.v)
        .filter(|(t, _)| **t >= warmup_s)
        .map(|(_, v)| *v)
        .collect()
}

/// What a run of [`step_bottleneck`] showed after the warm-up.
struct StepRun {
    /// The bottleneck's utilisation.
    util: f64,
    /// Smallest and largest queue sample, packets.
    q_min: f64,
    q_max: f64,
    /// Share of queue samples that found it empty.
    empty: f64,
    /// Drops at the bottleneck (every cause, whole run).
    drops: f64,
}

fn step_run(k: u32, flows: u32, congestion: &str) -> StepRun {
    let queue = format!("{{ kind = \"step\", k = \"{k}p\" }}");
    let tcp = format!("congestion = \"{congestion}\"\necn = true");
    let out = common::run(&step_bottleneck(&queue, flows, &tcp, "25s", "5s"), 1);
    let q = queue_after(&out, 5.0);
    let r = StepRun {
        util: common::num(&out, "link.r0-r1.utilization"),
        q_min: q.iter().copied().fold(f64::MAX, f64::min),
        q_max: q.iter().copied().fold(0.0, f64::max),
        empty: q.iter().filter(|v| **v == 0.0).count() as f64 / q.len() as f64,
        drops: common::num(&out, "link.r0-r1.drops"),
    };
    eprintln!(
        "{congestion}, K = {k}, N = {flows}: utilisation {:.6}, queue {}..{} (amplitude {}), \
         empty {:.4}, drops {}",
        r.util,
        r.q_min,
        r.q_max,
        r.q_max - r.q_min,
        r.empty,
        r.drops
    );
    r
}

/// DCTCP over a step-marking bottleneck against the DCTCP analysis (Alizadeh et al.,
/// section 3.3; RFC 8257's guidance on K).
///
/// The analysis: `N` synchronised flows through a link holding `B = C·RTT` segments in
/// flight; the queue exceeds `K` when the flows' windows sum to `B + K + 1` (here an
/// arrival is marked when it finds more than `K` queued); the flows learn of it one round
/// trip later, during which each window grows by at most one segment (congestion
/// avoidance adds `1/cwnd` per ACK, a round trip brings `cwnd` ACKs, so `floor(cwnd)`
/// rises by at most one), so the queue peaks at `Q_max ≤ K + 1 + N` and, since only a
/// queue above `K` produces the marks the flows react to, at `Q_max ≥ K + 1`. The
/// reductions (each flow by `α/2` of its window, `α ≈ √(2/W*)`) then lower the summed
/// window by `A = ½ √(2 N (B + K))` segments: the queue falls to `Q_min = Q_max − A`. When
/// `Q_min > 0` the link never idles, hence K > C·RTT/7 for full throughput: with `B =
/// 201` (24.15-ms round trip at 100 Mb/s, 1500-B segments) and `K = 40 > B/7 = 28.7`,
/// `A` = 15.5 (N = 2) and 34.7 (N = 10), so `Q_min` = 27.5 and 16.3 packets: the queue
/// should never be empty after the warm-up and the link busy all the time, i.e. the
/// utilisation within two packet times of 1 over the 20 s measured (a partly counted
/// packet at each end). The amplitude grows as √N: larger with ten flows than with two.
///
/// With `K = 5 < B/7`, `A` = 14.4 exceeds `Q_max ≤ 8`: the analysis predicts the queue
/// empties every cycle and the link idles. So does it with RFC 3168's halving (NewReno
/// with ECN) at `K = 40`: the summed window falls from about `B + K` to half of it,
/// far below `B`.
///
/// The buffer (1000 packets) never fills: no drops at all, so every reduction is a
/// reaction to marks.
#[test]
fn step_marking_keeps_the_link_busy_with_a_small_queue_as_the_analysis_predicts() {
    let tx = 1500.0 * 8.0 / 100e6;
    let full = 1.0 - 2.0 * tx / 20.0;
    let k = 40.0;
    let mut amplitude = Vec::new();
    for n in [2u32, 10] {
        let r = step_run(40, n, "dctcp");
        assert_eq!(r.drops, 0.0);
        assert!(
            r.q_max >= k + 1.0 && r.q_max <= k + 1.0 + n as f64,
            "N = {n}: peak {}",
            r.q_max
        );
        assert!(r.q_min > 0.0 && r.empty == 0.0, "N = {n}: min {}", r.q_min);
        assert!(r.util >= full, "N = {n}: utilisation {}", r.util);
        amplitude.push(r.q_max - r.q_min);
    }
    assert!(amplitude[1] > amplitude[0], "{amplitude:?}");
    // Below C·RTT/7 the queue empties and the link idles.
    let r = step_run(5, 2, "dctcp");
    assert_eq!(r.drops, 0.0);
    assert!(r.q_max <= 5.0 + 1.0 + 2.0, "peak {}", r.q_max);
    assert!(r.empty > 0.0 && r.util < full, "{} {}", r.empty, r.util);
    // Halving on marks at K = 40 does not keep the link busy.
    let r = step_run(40, 2, "newreno");
    assert_eq!(r.drops, 0.0);
    assert!(r.empty > 0.0 && r.util < full, "{} {}", r.empty, r.util);
}

/// Reads `flows = …` scenarios with `congestion = "dctcp"`: `ecn = true` is required,
/// `dctcp_g` is declared (bounds, default 1/16) and only allowed with DCTCP.
#[test]
fn dctcp_keys_are_read_and_checked() {
    let base = |tcp: &str| step_bottleneck("{ kind = \"step\", k = \"20p\" }", 1, tcp, "1s", "0s");
    let sc = common::parse(&base("congestion = \"dctcp\"\necn = true")).expect("valid");
    let tcp = |sc: &qossim::scenario::Scenario| match &sc.traffic[0].model {
        qossim::scenario::TrafficModel::Tcp(t) => t.congestion,
        m => panic!("{m:?}"),
    };
    assert_eq!(tcp(&sc), Congestion::Dctcp(DctcpParams { g: 1.0 / 16.0 }));
    let sc = common::parse(&base("congestion = \"dctcp\"\necn = true\ndctcp_g = 0.25")).unwrap();
    assert_eq!(tcp(&sc), Congestion::Dctcp(DctcpParams { g: 0.25 }));
    for (tcp, key, reason) in [
        (
            "congestion = \"dctcp\"",
            "congestion",
            "\"dctcp\" needs ecn = true",
        ),
        (
            "congestion = \"dctcp\"\necn = false",
            "congestion",
            "\"dctcp\" needs ecn = true",
        ),
        (
            "congestion = \"dctcp\"\necn = true\ndctcp_g = 0",
            "dctcp_g",
            "must be",
        ),
        (
            "congestion = \"dctcp\"\necn = true\ndctcp_g = 1.5",
            "dctcp_g",
            "must be",
        ),
        (
            "congestion = \"cubic\"\ndctcp_g = 0.1",
            "dctcp_g",
            "only with congestion = \"dctcp\"",
        ),
    ] {
        let d = common::parse(&base(tcp)).expect_err(tcp);
        assert_eq!(d.len(), 1, "{tcp}: {d:?}");
        let msg = d[0].to_string();
        assert!(
            msg.contains(&format!("traffic[0].{key}")) || msg.contains(&format!("traffic.0.{key}")),
            "{tcp}: {msg}"
        );
        assert!(msg.contains(reason), "{tcp}: {msg}");
    }
}

/// The step queue's keys: `k` in packets or bytes (required), `limit` with its default;
/// each mistake is one diagnostic on the queue's line at its key.
#[test]
fn step_queue_keys_are_read_and_checked() {
    let text =
        |queue: &str| step_bottleneck(queue, 1, "congestion = \"dctcp\"\necn = true", "1s", "0s");
    let spec = |queue: &str| common::link_queue(&text(queue), "r0-r1");
    let values = |q: qossim::scenario::QueueSpec| match q {
        qossim::scenario::QueueSpec::Declared { kind, values } => {
            assert_eq!(kind, "step");
            (values.limit("k"), values.limit("limit"))
        }
        q => panic!("{q:?}"),
    };
    assert_eq!(
        values(spec("{ kind = \"step\", k = \"20p\" }")),
        (Limit::Packets(20), Limit::Packets(1000))
    );
    assert_eq!(
        values(spec("{ kind = \"step\", k = \"30KB\", limit = \"150KB\" }")),
        (Limit::Bytes(30_000), Limit::Bytes(150_000))
    );
    for (queue, key, reason) in [
        ("{ kind = \"step\" }", "k", "missing"),
        (
            "{ kind = \"step\", k = \"20p\", limit = \"0p\" }",
            "limit",
            "positive",
        ),
        ("{ kind = \"step\", k = \"0B\" }", "k", "positive"),
        ("{ kind = \"step\", k = 20 }", "k", "expected"),
        ("{ kind = \"step\", k = \"20p\", kk = 1 }", "kk", "unknown"),
    ] {
        let t = text(queue);
        let d = common::parse(&t).expect_err(queue);
        assert_eq!(d.len(), 1, "{queue}: {d:#?}");
        let line = t.lines().position(|l| l.starts_with("queue")).unwrap() + 1;
        let path = format!("links.r0-r1.queue.{key}");
        assert_eq!(
            (d[0].line, d[0].path.as_str()),
            (line, path.as_str()),
            "{}",
            d[0]
        );
        assert!(d[0].reason.contains(reason), "{queue}: {}", d[0]);
    }
}

/// The long-run rate of [`law`]'s arithmetic, in segments per round trip.
struct Law {
    /// Segments per round (λR), the mean of the batches.
    per_round: f64,
    /// Standard error of `per_round` (batch means).
    se: f64,
    /// Largest window reached after the warm-up, segments.
    cwnd_max: f64,
}

/// The window arithmetic of a DCTCP sender (ACK per segment, no loss, every segment's
/// CE echoed on its own ACK) whose new segments are marked with probability `p`, with α
/// held at `p` (`ewma = false`) or following the sender's own estimator with gain `g`
/// (`ewma = true`, from α = p). Each outstanding segment carries its round: a segment
/// sent on the ACK of a round-k segment is in round k + 1. Runs `acks` ACKs, drops the
/// first tenth, and measures segments per round over 20 batches (the marks are drawn
/// from a seeded stream of the test's own).
fn law(p: f64, g: f64, ewma: bool, acks: u64) -> Law {
    use std::collections::VecDeque;
    let mut rng = Rng::from_seed(0x1a3);
    let mut alpha = p;
    let mut c: f64 = (2.0 / p).max(2.0);
    let (mut nxt, mut recover) = (0u64, 0u64);
    // The sender's observation window: its end, segments acknowledged and marked in it.
    let (mut obs_end, mut obs_acked, mut obs_marked) = (0u64, 0u64, 0u64);
    // Outstanding segments: (number, round, marked).
    let mut flight: VecDeque<(u64, u64, bool)> = VecDeque::new();
    while nxt < c.floor() as u64 {
        flight.push_back((nxt, 0, rng.bernoulli(p)));
        nxt += 1;
    }
    let warm = acks / 10;
    let batches = 20u64;
    let per = (acks - warm) / batches;
    let mut rates = Vec::new();
    let (mut round0, mut n, mut cwnd_max) = (0u64, 0u64, 0.0f64);
    for i in 0..acks {
        let (seq, round, marked) = flight.pop_front().expect("a window of at least 2");
        let ack = seq + 1;
        if ewma {
            obs_acked += 1;
            obs_marked += u64::from(marked);
            if ack > obs_end {
                alpha = (1.0 - g) * alpha + g * obs_marked as f64 / obs_acked as f64;
                (obs_acked, obs_marked, obs_end) = (0, 0, nxt);
            }
        }
        if marked && ack > recover {
            c = (c * (1.0 - alpha / 2.0)).max(2.0);
            recover = nxt;
        } else {
            c += 1.0 / c;
        }
        while nxt < ack + c.floor() as u64 {
            flight.push_back((nxt, round + 1, rng.bernoulli(p)));
            nxt += 1;
        }
        if i >= warm {
            if n == 0 {
                round0 = round;
            }
            n += 1;
            cwnd_max = cwnd_max.max(c);
            if n == per {
                rates.push(per as f64 / (round - round0) as f64);
                n = 0;
            }
        }
    }
    let (mean, se) = mean_se(&rates);
    Law {
        per_round: mean,
        se,
        cwnd_max,
    }
}

/// The mean of `x` and its standard error.
fn mean_se(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// The per-round law in which every round holding a mark cuts: `W ← W + 1` with
/// probability `(1 − p)^⌊W⌋`, else `W ← W (1 − p/2)`; the mean of `⌊W⌋` over rounds.
fn per_round_law(p: f64, rounds: u64) -> f64 {
    let mut rng = Rng::from_seed(0x1a4);
    let mut w: f64 = 2.0 / p;
    let mut sum = 0.0;
    for i in 0..rounds {
        if rng.uniform() < (1.0 - p).powf(w.floor()) {
            w += 1.0;
        } else {
            w = (w * (1.0 - p / 2.0)).max(2.0);
        }
        if i >= rounds / 10 {
            sum += w.floor();
        }
    }
    sum / (rounds - rounds / 10) as f64
}

/// DCTCP's throughput under independent random marking follows its law.
///
/// The law. Every new data segment is marked CE independently with probability `p`; the
/// path loses nothing, the receiver acknowledges every segment and echoes its CE state
/// exactly, so an ACK carries the mark of the segment it acknowledges. Hold α at its
/// long-run value `p` (`alpha_converges_to_an_independent_marking_probability`). Between two window reductions the sender is then
/// a renewal cycle:
/// - a reduction, on the ACK of a marked segment, sets `c ← max(c (1 − p/2), 2)` and
///   remembers `M = snd_max`. The `F = ⌊c⌋ − 1` segments still outstanding (the window
///   was full) cannot cause another reduction, marked or not: their ACKs do not pass
///   `M` (one reduction per window of data). The next reduction comes on the ACK of the
///   first marked segment from `M` on, `N` segments later, `N` geometric with mean
///   `1/p`, whatever the window;
/// - each of the other `F + N − 1` ACKs of the cycle adds `1/c` (congestion avoidance:
///   ssthresh is the reduced window), so `c²` grows by `2 + 1/c²` per ACK.
///
/// In fluid terms a cycle brings `F + N ≈ W + 1/p` ACKs, i.e. `1 + 1/(pW)` segments of
/// growth, and takes `pW/2`: they balance at `pW = 1 + √3`, `W ≈ 2.73/p`. The per-round
/// law in which any round holding a mark cuts (probability `1 − (1 − p)^W`) instead
/// lets the round in flight at a reduction cut again, which the rule of one reduction
/// per window forbids; its windows are 2.6 times smaller (printed, not used). A cycle
/// lasts `1 + 1/(1 + √3)` rounds: 0.732 reductions per round (printed beside the
/// simulated count).
///
/// Rate. Segments leave only when ACKs arrive, and the queues stay empty (the window
/// stays far below C·RTT = 252 segments, checked on the law's largest window), so every
/// segment is acknowledged exactly `R` after it leaves: 20 ms of propagation plus the
/// serialisation of a 1000-B segment and a 40-B ACK on two hops, 20.166 ms. A segment
/// sent on the ACK of a round-`k` segment belongs to round `k + 1`, every round lasts
/// `R`, so the rate is `λ = (segments per round) / R`. [`law`] runs the cycle's exact
/// arithmetic segment by segment, each segment carrying its round, and counts segments
/// per round over about 2·10⁵ rounds (its standard error from 20 batch means).
///
/// The law's approximation error. α is not constant: its moving average (g = 1/16)
/// fluctuates around `p` with a variance near `g/(2 − g) · p(1 − p)/W`. The cut is linear
/// in α, so a fluctuation independent of the window would leave the mean cut as it is;
/// what it does to the mean window (through the cycle's curvature and α's correlation
/// with the recent marks) is measured by running the same arithmetic with α following the sender's own estimator:
/// `|law_α − law_p|` is the stated approximation error. A segment sent back to back
/// behind another (twice when `⌊c⌋` steps up, once a round) waits 80 µs at the first
/// link, which can only lower the simulated rate, by at most `0.08/(20.166 W)` of it;
/// the segments in flight at both ends of the measurement shift it by at most one
/// window in 100 s.
///
/// The simulation: ten seeds, 100 s after a 10-s warm-up, `λR` per seed from the
/// segments acknowledged. The check, per `p`: `|mean − law_p| ≤ t₀.₉₉₉₅,₉ · se_seeds +
/// 4.5 (se_p + se_α) + |law_α − law_p| +` the two bounds above (t = 4.781 for nine
/// degrees of freedom: a correct law fails one check in 1000); and the refined law,
/// `|mean − law_α| ≤ t · se_seeds + 4.5 se_α +` the same bounds.
#[test]
fn dctcp_throughput_under_random_marking_follows_its_law() {
    const T_9: f64 = 4.781;
    let g = 1.0 / 16.0;
    let tx = 1000.0 * 8.0 / 100e6;
    let r = 0.020 + 2.0 * tx + 2.0 * 40.0 * 8.0 / 100e6;
    for p in [0.02, 0.05, 0.1, 0.3] {
        let acks = (2e5 * 2.73 / p) as u64;
        let fixed = law(p, g, false, acks);
        let moving = law(p, g, true, acks);
        let naive = per_round_law(p, 1_000_000);
        assert!(
            fixed.cwnd_max.max(moving.cwnd_max) < 200.0,
            "{}",
            fixed.cwnd_max
        );
        let mut per_seed = Vec::new();
        let mut cuts = 0u64;
        for seed in 1..=10u64 {
            let (mut w, tx_h) = random_marking(seed, p, g);
            w.run_until(10 * PS_PER_S);
            let s = w.agents.get_mut(tx_h).unwrap();
            let (una0, cuts0) = (s.snd_una(), s.stats().ecn_reductions);
            w.run_until(110 * PS_PER_S);
            let s = w.agents.get_mut(tx_h).unwrap();
            assert_eq!(s.stats().retransmits, 0, "the path loses nothing");
            per_seed.push((s.snd_una() - una0) as f64 / 100.0 * r);
            cuts += s.stats().ecn_reductions - cuts0;
        }
        let (mean, se) = mean_se(&per_seed);
        let rounds = 10.0 * 100.0 / r;
        let bounds = mean * tx / (r * fixed.per_round) + fixed.per_round / (100.0 / r);
        let approx = (moving.per_round - fixed.per_round).abs();
        let tol_p = T_9 * se + 4.5 * (fixed.se + moving.se) + approx + bounds;
        let tol_a = T_9 * se + 4.5 * moving.se + bounds;
        eprintln!(
            "p = {p}: simulated λR {mean:.3} (se {se:.3}, seeds {per_seed:.2?}); law α = p \
             {:.3} (se {:.3}), diff {:+.3} of ±{tol_p:.3}; law with α's estimator {:.3} \
             (se {:.3}), diff {:+.3} of ±{tol_a:.3}; fluid 2.73/p = {:.1}; per-round law \
             {naive:.2}; reductions per round {:.4} (fluid: {:.4})",
            fixed.per_round,
            fixed.se,
            mean - fixed.per_round,
            moving.per_round,
            moving.se,
            mean - moving.per_round,
            (1.0 + 3f64.sqrt()) / p,
            cuts as f64 / rounds,
            (1.0 + 3f64.sqrt()) / (2.0 + 3f64.sqrt()),
        );
        assert!(
            (mean - fixed.per_round).abs() <= tol_p,
            "p = {p}: law α = p"
        );
        assert!(
            (mean - moving.per_round).abs() <= tol_a,
            "p = {p}: law with α's estimator"
        );
    }
}
