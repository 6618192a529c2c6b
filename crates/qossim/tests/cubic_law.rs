//! CUBIC's long-run throughput in its cubic region under random loss, against a law
//! computed from RFC 9438's window arithmetic.

use qossim::time::{to_secs, PS_PER_S};
use qossim::transport::{Congestion, CubicParams, TcpConfig, TcpReceiverConfig};
use qossim::Rng;
use std::collections::{BTreeSet, VecDeque};

#[path = "common/tcp_path.rs"]
mod tcp_path;
use tcp_path::{delivered, setup, Lossy, Path};

/// RFC 9438's window state between congestion events, as the law runs it.
struct CubicLaw {
    c: f64,
    beta: f64,
    cwnd: f64,
    w_max: f64,
    w_est: f64,
    k: f64,
    origin: f64,
    epoch: Option<f64>,
    /// ACKs grown on the Reno-friendly estimate, and all ACKs grown.
    reno_acks: u64,
    acks: u64,
}

impl CubicLaw {
    fn new(cp: CubicParams, cwnd: f64) -> Self {
        CubicLaw {
            c: cp.c,
            beta: cp.beta,
            cwnd,
            w_max: cwnd,
            w_est: cwnd,
            k: 0.0,
            origin: cwnd,
            epoch: None,
            reno_acks: 0,
            acks: 0,
        }
    }

    /// A congestion event with `flight` segments outstanding: fast convergence, then
    /// cwnd = max(β flight, 2).
    fn reduce(&mut self, flight: f64) {
        let b = self.beta;
        self.w_max = if self.cwnd < self.w_max {
            self.cwnd * (1.0 + b) / 2.0
        } else {
            self.cwnd
        };
        self.cwnd = (b * flight).max(2.0);
        self.epoch = None;
    }

    /// One ACK of new data in congestion avoidance at time `now` (s), RTT `r`.
    fn ack(&mut self, now: f64, r: f64) {
        let epoch = *self.epoch.get_or_insert_with(|| {
            if self.cwnd < self.w_max {
                self.k = ((self.w_max - self.cwnd) / self.c).cbrt();
                self.origin = self.w_max;
            } else {
                self.k = 0.0;
                self.origin = self.cwnd;
            }
            self.w_est = self.cwnd;
            now
        });
        let t = now - epoch;
        let b = self.beta;
        let alpha = if self.w_est >= self.w_max {
            1.0
        } else {
            3.0 * (1.0 - b) / (1.0 + b)
        };
        self.w_est += alpha / self.cwnd;
        let wc = |t: f64| self.c * (t - self.k).powi(3) + self.origin;
        self.acks += 1;
        if wc(t) < self.w_est {
            self.reno_acks += 1;
            self.cwnd = self.w_est.max(self.cwnd);
        } else {
            let target = wc(t + r).clamp(self.cwnd, 1.5 * self.cwnd);
            self.cwnd += (target - self.cwnd) / self.cwnd;
        }
    }
}

/// What a law computed.
struct Law {
    /// New segments per round trip (mean of 20 batches).
    per_rtt: f64,
    /// Its standard error (batch means).
    se: f64,
    /// Share of growth ACKs on the Reno-friendly estimate.
    reno_share: f64,
    /// Reductions counted.
    epochs: u64,
}

impl Law {
    /// The law from its batch rates, the sender's ACK counts against those at the end of
    /// the warm-up (`reno0`: Reno-friendly growth ACKs, all growth ACKs) and the epochs.
    fn of(rates: &[f64], cu: &CubicLaw, reno0: (u64, u64), epochs: u64) -> Law {
        let (per_rtt, se) = mean_se(rates);
        Law {
            per_rtt,
            se,
            reno_share: (cu.reno_acks - reno0.0) as f64 / (cu.acks - reno0.1) as f64,
            epochs,
        }
    }
}

/// The mean and standard error of `x`.
fn mean_se(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// The segment-level law: every new segment lost with probability `p`, acknowledged
/// (or, lost, leaving its slot empty) exactly `r` after it leaves; a loss is detected at
/// the third later ACK; detection outside recovery of a segment at or above `recover`
/// reduces (RFC 9438 through [`CubicLaw::reduce`], flight = snd_nxt − snd_una) and enters
/// SACK recovery: the hole is resent at once, new segments leave while
/// `cwnd − pipe ≥ 1` (pipe = segments outstanding), no growth; recovery ends, with
/// cwnd = ssthresh, on the ACK of the last resent hole below `recover`. A hole at or
/// above `recover` found during recovery is resent then and reduces at the exit (the
/// sender finds it lost on the next ACK). Retransmissions are not lost. Runs `epochs`
/// reductions, drops the first tenth, measures over 20 batches of time.
fn segment_law(p: f64, cp: CubicParams, r: f64, epochs: u64, seed: u64) -> Law {
    // (seq, sent, lost, retransmission)
    let mut q: VecDeque<(u64, f64, bool, bool)> = VecDeque::new();
    let mut rng = Rng::from_seed(seed);
    let mut cu = CubicLaw::new(cp, 1.0 / p.sqrt());
    let mut nxt = 0u64;
    let mut holes: BTreeSet<u64> = BTreeSet::new();
    let mut pending: VecDeque<(u64, u32)> = VecDeque::new();
    let (mut in_rec, mut recover, mut deferred) = (false, 0u64, false);
    let mut cuts = 0u64;
    let warm = epochs / 10;
    let (mut t0, mut n0) = (f64::NAN, 0u64);
    let mut marks: Vec<(f64, u64)> = Vec::new();
    let mut reno0 = (0u64, 0u64);
    let send =
        |q: &mut VecDeque<(u64, f64, bool, bool)>, nxt: &mut u64, now: f64, rng: &mut Rng| {
            q.push_back((*nxt, now, rng.bernoulli(p), false));
            *nxt += 1;
        };
    while (q.len() as f64) < cu.cwnd.floor() {
        send(&mut q, &mut nxt, 0.0, &mut rng);
    }
    while cuts < epochs {
        let (seq, sent, lost, retx) = q.pop_front().expect("a window of at least 2");
        let now = sent + r;
        if lost {
            holes.insert(seq);
            pending.push_back((seq, 3));
            continue;
        }
        // An ACK arrives: count down the detections.
        let mut found = Vec::new();
        for e in pending.iter_mut() {
            e.1 -= 1;
        }
        while pending.front().is_some_and(|e| e.1 == 0) {
            found.push(pending.pop_front().unwrap().0);
        }
        if retx {
            holes.remove(&seq);
        }
        for h in found {
            if !in_rec && h >= recover {
                let una = *holes.iter().next().unwrap();
                cu.reduce((nxt - una) as f64);
                cuts += 1;
                if cuts == warm {
                    t0 = now;
                    n0 = nxt;
                    reno0 = (cu.reno_acks, cu.acks);
                }
                in_rec = true;
                recover = nxt;
            } else if h >= recover {
                deferred = true;
            }
            q.push_back((h, now, false, true));
        }
        if in_rec && holes.range(..recover).next().is_none() {
            in_rec = false;
            if deferred {
                deferred = false;
                let una = *holes.iter().next().unwrap();
                cu.reduce((nxt - una) as f64);
                cuts += 1;
                in_rec = true;
                recover = nxt;
            }
        } else if !in_rec && holes.is_empty() && !retx {
            cu.ack(now, r);
        }
        if in_rec || !holes.is_empty() {
            while cu.cwnd - q.len() as f64 >= 1.0 && in_rec {
                send(&mut q, &mut nxt, now, &mut rng);
            }
        } else {
            while (q.len() as f64) < cu.cwnd.floor() {
                send(&mut q, &mut nxt, now, &mut rng);
            }
        }
        if cuts >= warm && !t0.is_nan() {
            marks.push((now, nxt));
        }
    }
    let t_end = marks.last().unwrap().0;
    let batches = 20;
    let span = (t_end - t0) / batches as f64;
    let mut rates = Vec::new();
    let (mut bt, mut bn) = (t0, n0);
    let mut i = 0;
    for b in 1..=batches {
        let edge = t0 + span * b as f64;
        while i + 1 < marks.len() && marks[i + 1].0 <= edge {
            i += 1;
        }
        let (t, n) = marks[i];
        rates.push((n - bn) as f64 / (t - bt) * r);
        (bt, bn) = (t, n);
    }
    Law::of(&rates, &cu, reno0, cuts - warm)
}

/// The round-level law: rounds of one RTT; a round of `⌊W⌋` segments holds a loss with
/// probability `1 − (1 − p)^⌊W⌋`; without one the window follows the per-ACK arithmetic
/// of [`CubicLaw::ack`] with all of the round's ACKs at its start time; with one it
/// delivers the segments before the first loss, reduces on flight `⌊W⌋` and spends one
/// recovery round sending `⌊βW⌋` new segments (losses in that round ignored).
fn round_law(p: f64, cp: CubicParams, r: f64, epochs: u64, seed: u64) -> Law {
    let mut rng = Rng::from_seed(seed);
    let mut cu = CubicLaw::new(cp, 1.0 / p.sqrt());
    let (mut now, mut cuts) = (0.0f64, 0u64);
    let warm = epochs / 10;
    let per = (epochs - warm) / 20;
    let (mut bt, mut bn, mut n) = (0.0, 0u64, 0u64);
    let mut rates = Vec::new();
    let mut reno0 = (0u64, 0u64);
    while cuts < epochs {
        let w = cu.cwnd.floor() as u64;
        let first = rng.geometric(1.0 / p);
        if first >= w {
            for j in 0..w {
                cu.ack(now + r * j as f64 / w as f64, r);
            }
            n += w;
            now += r;
        } else {
            for j in 0..first {
                cu.ack(now + r * j as f64 / w as f64, r);
            }
            cu.reduce(w as f64);
            cuts += 1;
            n += w + (cu.cwnd - 1.0).floor().max(0.0) as u64;
            now += 2.0 * r;
            if cuts == warm {
                (bt, bn) = (now, n);
                reno0 = (cu.reno_acks, cu.acks);
            } else if cuts > warm && (cuts - warm).is_multiple_of(per) {
                rates.push((n - bn) as f64 / (now - bt) * r);
                (bt, bn) = (now, n);
            }
        }
    }
    Law::of(&rates, &cu, reno0, cuts - warm)
}

/// Segments per RTT of a CUBIC SACK flow with parameters `cp`, loss `p`, seed `seed`,
/// over [warm, end] seconds, and the RTT.
fn simulate(p: f64, cp: CubicParams, seed: u64, warm: u64, end: u64) -> (f64, f64) {
    let path = Path {
        access_bps: 100_000_000,
        access_delay: qossim::time::PS_PER_MS,
        bottleneck_bps: 100_000_000,
        bottleneck_delay: 49 * qossim::time::PS_PER_MS,
        buffer: 100_000,
    };
    let r = to_secs(path.base_rtt(1000, 40));
    let cfg = TcpConfig {
        congestion: Congestion::Cubic(cp),
        sack: true,
        ..TcpConfig::default()
    };
    let rcfg = TcpReceiverConfig {
        sack: true,
        ..TcpReceiverConfig::default()
    };
    let mut s = setup(seed, &path, cfg, rcfg);
    let rng = s.w.rng("loss");
    s.w.net.add_hook(s.bottleneck, Box::new(Lossy { p, rng }));
    s.w.run_until(warm * PS_PER_S);
    let a = delivered(&mut s);
    s.w.run_until(end * PS_PER_S);
    let b = delivered(&mut s);
    ((b - a) as f64 / (end - warm) as f64 * r, r)
}

/// CUBIC's throughput under random loss in its cubic region follows its law.
///
/// The law. Each new data segment is lost independently with probability `p`; the path
/// queues nothing (100 Mb/s, about 1250 segments in flight at the link's rate against
/// windows of at most a few hundred), so every segment is acknowledged exactly
/// `R` = 100 ms plus the serialisations (100.166 ms) after it leaves. The sender (SACK,
/// an ACK per segment) reduces once per window of data: at the third ACK after a hole,
/// with flight = snd_nxt − snd_una, W_max lowered by fast convergence, cwnd = 0.7 flight;
/// it stays in recovery, sending while cwnd − pipe ≥ 1 and not growing, until the
/// resent holes are acknowledged, about one RTT; then each ACK grows the window by RFC
/// 9438's arithmetic (the curve C (t − K)³ + W_max from the epoch's first ACK, the target
/// one RTT ahead clamped to [cwnd, 1.5 cwnd], the Reno-friendly estimate with α =
/// 3(1 − β)/(1 + β) until it passes W_max, then 1). The number of segments between
/// losses is geometric. [`segment_law`] runs exactly this, segment by segment, with its
/// own loss stream, for 8000 reductions (the first tenth dropped), and measures new
/// segments per RTT over 20 batches of time (its standard error `se_seg`).
///
/// Its approximations: detection at the third later ACK rather than by RFC 6675's
/// `IsLost` bookkeeping, pipe counted as the segments outstanding, lost retransmissions
/// (probability `p` per loss event: one in 5000 or more) and the timeouts they cause
/// ignored, and a hole found during recovery above `recover` reducing at the exit. Their
/// size is bounded by computing the law a second way, [`round_law`]: whole rounds, the
/// losses of a round drawn at once, the round's ACKs all at its start time, a recovery
/// round of ⌊βW⌋ new segments. `|segment law − round law|` (its standard error
/// `se_rnd`) is taken as the law's approximation error.
///
/// The cubic region: at 100 ms and p = 1e-4 and 2e-4 the law's rate is well above Reno's
/// sqrt(1.5/p) (122 and 87 segments per RTT), and the law's own accounting puts at most
/// a fifth of the growth ACKs on the Reno-friendly estimate (both asserted).
///
/// The simulation: ten seeds, one flow each, 300 s (p = 1e-4) or 200 s (p = 2e-4) after a
/// 20-s warm-up, about 60 and 50 loss epochs per seed (600 and 500 in all); segments
/// delivered per RTT per seed. The check, per `p`: `|mean − segment law| ≤ t₀.₉₉₅,₉ ·
/// sqrt(se_seeds² + se_seg² + se_rnd²) + |segment law − round law|` (t = 3.250 for nine
/// degrees of freedom: a correct law fails one check in 100).
///
/// Results (this test's runs): p = 1e-4: simulated 211.7 (se 5.8) segments per RTT
/// against the law's 214.0 (se 2.4; round law 215.1), tolerance ±23.4; p = 2e-4: 122.2
/// (se 4.4) against 129.9 (se 1.2; round law 128.5), ±16.8. A sender with C = 0.2 in place
/// of 0.4 (the law unchanged) gave 180.9 at p = 1e-4 and failed the check (−33.1 against
/// ±19.8); one with β = 0.5 gave 174.7 and failed too (−39.3 against ±22.8).
/// Longer runs outside the suite (800 s after the warm-up, seeds 11 to 20) gave 131.6
/// (se 2.4) at p = 2e-4 and 215.8 (se 3.4) at p = 1e-4: the shortfall of 7.7 at 2e-4
/// above (1.8 of its standard errors) is the seeds' scatter, not a bias.
#[test]
fn cubic_throughput_under_random_loss_follows_its_law() {
    const T_9: f64 = 3.250;
    let cp = CubicParams::default();
    for (p, end) in [(1e-4, 320u64), (2e-4, 220)] {
        let r = 0.1 + 2.0 * (1000.0 + 40.0) * 8.0 / 100e6;
        let seg = segment_law(p, cp, r, 8_000, 7);
        let rnd = round_law(p, cp, r, 8_000, 8);
        let mut per_seed = Vec::new();
        for seed in 1..=10u64 {
            per_seed.push(simulate(p, cp, seed, 20, end).0);
        }
        let (mean, se) = mean_se(&per_seed);
        let reno = (1.5 / p).sqrt();
        let approx = (seg.per_rtt - rnd.per_rtt).abs();
        let tol = T_9 * (se * se + seg.se * seg.se + rnd.se * rnd.se).sqrt() + approx;
        eprintln!(
            "p = {p}: simulated {mean:.2} (se {se:.2}, seeds {per_seed:.1?}) segments/RTT; \
             segment law {:.2} (se {:.2}, {} epochs, Reno-friendly share {:.3}); round law \
             {:.2} (se {:.2}, share {:.3}); Reno sqrt(1.5/p) {reno:.1}; diff {:+.2} of ±{tol:.2}",
            seg.per_rtt,
            seg.se,
            seg.epochs,
            seg.reno_share,
            rnd.per_rtt,
            rnd.se,
            rnd.reno_share,
            mean - seg.per_rtt,
        );
        assert!(seg.per_rtt > reno && seg.reno_share < 0.25, "cubic region");
        assert!((mean - seg.per_rtt).abs() <= tol, "p = {p}");
    }
}
