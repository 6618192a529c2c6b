//! Edge conditioners against their definitions: token-bucket conformance checked over
//! every window, TSW convergence and marking probability, policer demotion bounds derived
//! from token-bucket arithmetic.

use qossim::meter::{OutRule, Policer, TokenBucketProfiler, TswProfiler, TOKEN_UNITS_PER_BYTE};
use qossim::net::{marks, Packet};

use qossim::queue::{DropTail, Limit};
use qossim::time::{PS_PER_MS, PS_PER_S};
use qossim::traffic::{PacketTemplate, Sink, Source, SourceModel};
use qossim::{Rng, Time, World};

/// A mark bit the meters do not own: they must leave it as it is.
const OTHER: u16 = 1 << 9;

fn pkt(size: u32, m: u16) -> Packet {
    Packet {
        size,
        marks: m,
        ..Default::default()
    }
}

/// A bursty packet sequence of random sizes (40..=1500 bytes) offered at about
/// `factor` x `rate_bps` on average: a Poisson stream carrying 60% of the load merged
/// with an on-off stream (exponential on/off periods, 20% duty cycle) sending
/// back-to-back at 5x its mean rate while on. Returned sorted by time.
fn bursty_sequence(rng: &mut Rng, rate_bps: u64, factor: f64, duration: Time) -> Vec<(Time, u32)> {
    let mean_size = (40.0 + 1500.0) / 2.0;
    let bytes_per_s = rate_bps as f64 / 8.0 * factor;
    let mut out = Vec::new();
    // Poisson part.
    let pois_pps = 0.6 * bytes_per_s / mean_size;
    let mut t = 0.0f64;
    loop {
        t += rng.exp(1.0 / pois_pps);
        let at = (t * PS_PER_S as f64) as Time;
        if at >= duration {
            break;
        }
        out.push((at, 40 + rng.below(1461) as u32));
    }
    // On-off part: peak = 0.4 * offered / duty.
    let duty = 0.2;
    let peak_bps = 0.4 * bytes_per_s * 8.0 / duty;
    let (on_mean, off_mean) = (0.05, 0.2);
    let mut t = rng.exp(off_mean);
    while ((t * PS_PER_S as f64) as Time) < duration {
        let end = t + rng.exp(on_mean);
        while t < end {
            let size = 40 + rng.below(1461) as u32;
            let at = (t * PS_PER_S as f64) as Time;
            if at >= duration {
                break;
            }
            out.push((at, size));
            t += size as f64 * 8.0 / peak_bps;
        }
        t = end + rng.exp(off_mean);
    }
    out.sort_unstable();
    out
}

/// Largest excess, over all windows `[t_i, t_j]` between two selected packets
/// (`i <= j`), of the selected bytes in the window over `rate * (t_j - t_i) / 8`, in exact
/// token units. O(n): for a fixed `j` the worst `i` minimises `P_i - rate t_i`, where `P_i`
/// is the selected volume before packet `i`.
fn max_window_excess(pkts: &[(Time, u32)], rate_bps: u64) -> i128 {
    let mut prefix: i128 = 0;
    let mut best_start = i128::MAX;
    let mut worst = i128::MIN;
    for &(t, s) in pkts {
        let r_t = rate_bps as i128 * t as i128;
        best_start = best_start.min(prefix - r_t);
        prefix += s as i128 * TOKEN_UNITS_PER_BYTE as i128;
        worst = worst.max(prefix - r_t - best_start);
    }
    worst
}

#[test]
fn token_bucket_in_traffic_conforms_in_every_window() {
    let rate = 10_000_000u64;
    let depth = 20_000u64;
    let mut rng = Rng::from_seed(11);
    let seq = bursty_sequence(&mut rng, rate, 2.0, 120 * PS_PER_S);
    assert!(seq.len() > 100_000, "{} packets", seq.len());
    let mut prof = TokenBucketProfiler::new(rate, depth);
    let mut ins = Vec::new();
    let mut marked = Vec::with_capacity(seq.len());
    for &(t, s) in &seq {
        // Marks on entry must not matter: alternate IN and OUT on the way in.
        let mut p = pkt(
            s,
            if ins.len() % 2 == 0 {
                marks::IN_PROFILE
            } else {
                0
            },
        );
        let is_in = prof.meter(&mut p, t);
        assert_eq!(is_in, p.has(marks::IN_PROFILE));
        if is_in {
            ins.push((t, s));
        }
        marked.push(is_in);
    }
    let depth_units = depth as i128 * TOKEN_UNITS_PER_BYTE as i128;

    // Every window between IN packet times (the binding ones: a window whose ends are OUT
    // packets contains the same IN bytes in a longer span).
    let excess = max_window_excess(&ins, rate);
    assert!(
        excess <= depth_units,
        "excess {excess} > depth {depth_units}"
    );
    // The bound is reached to within one packet: the profiler lets the full burst through.
    assert!(excess > depth_units - 1500 * TOKEN_UNITS_PER_BYTE as i128);

    // Brute force O(n^2) over all packet times (IN or OUT) on a prefix, as a cross-check.
    let n = 3000;
    for i in 0..n {
        let mut bytes: i128 = 0;
        for j in i..n {
            if marked[j] {
                bytes += seq[j].1 as i128;
            }
            let allowed = rate as i128 * (seq[j].0 - seq[i].0) as i128 + depth_units;
            assert!(
                bytes * TOKEN_UNITS_PER_BYTE as i128 <= allowed,
                "window [{}, {}]: {bytes} B",
                seq[i].0,
                seq[j].0
            );
        }
    }

    // Overloaded: the IN traffic uses the contract. Long-run IN rate within 2% of r.
    let span = seq.last().unwrap().0 - seq[0].0;
    let in_rate = prof.counts.in_bytes as f64 * 8.0 / (span as f64 / PS_PER_S as f64);
    let offered =
        (prof.counts.in_bytes + prof.counts.out_bytes) as f64 * 8.0 / (span as f64 / 1e12);
    eprintln!(
        "token bucket: {} packets offered at {:.3} Mb/s, IN rate {:.4} Mb/s for r = {} Mb/s",
        seq.len(),
        offered / 1e6,
        in_rate / 1e6,
        rate / 1_000_000
    );
    assert!(
        (in_rate / rate as f64 - 1.0).abs() < 0.02,
        "IN rate {in_rate}"
    );
}

#[test]
fn token_bucket_profiler_as_port_hook_reports() {
    let mut w = World::new(5);
    let a = w.net.add_node("a");
    let b = w.net.add_node("b");
    let l = w.net.add_link(
        "ab",
        a,
        b,
        100_000_000,
        0,
        Box::new(DropTail::new(Limit::Packets(1000))),
    );
    w.net
        .add_hook(l, Box::new(TokenBucketProfiler::new(1_000_000, 3000)));
    let g = w.flows.add_group("g");
    let sink = w.add_agent("sink", Box::new(Sink));
    let flow = w.flows.open(g, 0);
    // 2 Mb/s CBR of 1000-byte packets every 4 ms against a 1 Mb/s profile.
    let model = SourceModel::Cbr {
        size: 1000,
        interval: 0.004,
    };
    let src = Source::new(
        &model,
        PacketTemplate::new(a, b, sink.id()),
        flow,
        0,
        10 * PS_PER_S,
        0.0,
        w.rng("src"),
    );
    w.add_agent("src", Box::new(src));
    w.run_until(20 * PS_PER_S);
    let s = w.summary();
    let in_pkts = s["link.ab.tb_in_pkts"].as_f64().unwrap();
    let out_pkts = s["link.ab.tb_out_pkts"].as_f64().unwrap();
    assert_eq!(in_pkts + out_pkts, 2500.0);
    // Packets at t = 0, 4, ..., 9996 ms; IN bytes <= 3000 + 1e6 * 9.996 / 8 = 1_252_500,
    // and (no tokens wasted after the first packet, fewer than 1.5 packets of tokens left
    // once the first packet is refused) > 1_252_500 - 1500: exactly 1252 IN packets.
    assert_eq!(in_pkts, 1252.0);
}

#[test]
fn tsw_converges_to_the_offered_rate() {
    let target = 1_000_000u64;
    let win = PS_PER_S;
    let cases = [
        (OutRule::OverAverage, 2u64, 1u64, 21u64),
        (OutRule::OverAverage, 2, 2, 22),
        (OutRule::OverTarget, 3, 2, 23),
        (OutRule::OverTarget, 4, 3, 24),
    ];
    for (rule, num, den, seed) in cases {
        // CBR of 1000-byte packets at num/den x target: every 8 den/num ms.
        let factor = num as f64 / den as f64;
        let gap = 8 * PS_PER_MS * den / num;
        let offered = target as f64 * factor;
        let mut m = TswProfiler::new(target, win, Rng::from_seed(seed)).with_rule(rule);
        let end = 400 * PS_PER_S;
        let settle = 10 * win;
        let (mut n, mut n_in) = (0u64, 0u64);
        let mut p_in_sum = 0.0; // sum of the IN probabilities of the counted packets
        let mut var_sum = 0.0;
        let mut worst: f64 = 0.0;
        let mut t = 0;
        while t < end {
            t += gap;
            let mut p = pkt(1000, 0);
            let is_in = m.meter(&mut p, t);
            if t >= settle {
                let avg = m.avg_bps();
                worst = worst.max((avg - offered).abs() / offered);
                let q = 1.0 - rule.out_probability(avg, target as f64);
                p_in_sum += q;
                var_sum += q * (1.0 - q);
                n += 1;
                n_in += is_in as u64;
            }
        }
        // The estimate stays within 1% of the offered rate after 10 windows.
        assert!(worst < 0.01, "factor {factor}: worst deviation {worst}");
        let frac = n_in as f64 / n as f64;
        let expect = 1.0 - rule.out_probability(offered, target as f64);
        // The IN count is a sum of independent Bernoulli draws with the probabilities
        // computed above: a 99.9% normal interval (z = 3.2905) around their sum, which
        // itself is within 1% of n x target/offered because the estimate is.
        let z = 3.2905;
        let hw = z * var_sum.sqrt();
        eprintln!(
            "TSW ({rule:?}) at {factor}x target: {n} packets, IN fraction {frac:.5} (expected {expect:.5}, \
             99.9% half-width {:.5}), worst rate deviation {:.2e}",
            hw / n as f64,
            worst
        );
        assert!(
            ((n_in as f64) - p_in_sum).abs() <= hw.max(0.5),
            "IN count {n_in} vs {p_in_sum}"
        );
        assert!((p_in_sum / n as f64 - expect).abs() <= 0.01 * expect);
        if num == den {
            assert_eq!(n_in, n, "a flow at its target is all IN");
        }
    }
}

#[test]
fn tsw_converges_from_far_off_start() {
    // Starting at the target, a flow at 4x target: the estimate approaches 4x with the
    // window's time constant; after 10 windows it is within 1%.
    let target = 500_000u64;
    let win = PS_PER_S / 2;
    let mut m = TswProfiler::new(target, win, Rng::from_seed(3));
    let gap = 4 * PS_PER_MS; // 1000 B every 4 ms = 2 Mb/s = 4x
    let mut t = 0;
    while t < 10 * win {
        t += gap;
        m.meter(&mut pkt(1000, 0), t);
    }
    let dev = (m.avg_bps() - 2e6).abs() / 2e6;
    assert!(dev < 0.01, "deviation {dev}");
}

/// Admitted IN bytes for a policer (`rate`, `depth`) facing IN packets whose spacing
/// is exactly the time `rate / 2` takes to send the previous one (2x the contract), and
/// the exact bounds of token-bucket arithmetic for it.
///
/// Tokens are conserved: `admitted = depth + rate (t_last - t_first) / 8 - left - wasted`.
/// Before the first refusal the bucket only drains; after it, the tokens found by an
/// arrival stay below 1.5 `s_max` (a refused packet leaves fewer than its size, to which
/// half its size is added; an accepted one lowers the level). So with `depth >= 1.5 s_max`
/// nothing is wasted after the first packet and fewer than 1.5 `s_max` are left over.
#[test]
fn policer_demotes_the_excess_of_in_traffic() {
    let rate = 1_000_000u64; // 1 byte of tokens per 8 us; 2x rate: 1 byte per 4 us.
    let s_max = 1500u32;
    let depth = 3 * s_max as u64;
    for (seed, fixed) in [(1u64, true), (2, false)] {
        let mut rng = Rng::from_seed(seed);
        let mut pol = Policer::new(rate, depth);
        let mut t: Time = PS_PER_MS;
        let t_first = t;
        let mut t_last = t;
        let (mut in_bytes, mut admitted_bytes, mut n_in, mut n_adm) = (0u64, 0u64, 0u64, 0u64);
        for _ in 0..50_000 {
            let s = if fixed {
                1000
            } else {
                40 + rng.below(s_max as u64 - 39) as u32
            };
            // An OUT packet with other marks in between: must pass untouched, take nothing.
            if rng.uniform() < 0.3 {
                let mut o = pkt(1500, marks::ECN_CE | OTHER);
                assert!(!pol.meter(&mut o, t));
                assert_eq!(o.marks, marks::ECN_CE | OTHER);
            }
            let mut p = pkt(s, marks::IN_PROFILE | OTHER);
            let ok = pol.meter(&mut p, t);
            if ok {
                assert_eq!(p.marks, marks::IN_PROFILE | OTHER);
                admitted_bytes += s as u64;
                n_adm += 1;
            } else {
                assert_eq!(p.marks, marks::DEMOTED | OTHER);
            }
            in_bytes += s as u64;
            n_in += 1;
            t_last = t;
            t += s as u64 * 4_000_000; // exactly s bytes at 2 Mb/s
        }
        assert_eq!(pol.in_seen, n_in);
        assert_eq!(pol.demoted, n_in - n_adm);
        let u = TOKEN_UNITS_PER_BYTE;
        let upper = depth as u128 * u + rate as u128 * (t_last - t_first) as u128;
        let lower = upper - (3 * s_max as u128 * u) / 2;
        let adm = admitted_bytes as u128 * u;
        assert!(adm <= upper && adm > lower, "admitted {admitted_bytes} B");
        let frac_bytes = 1.0 - admitted_bytes as f64 / in_bytes as f64;
        eprintln!(
            "policer ({}): {} IN packets, demoted {} ({:.5} of packets, {:.5} of bytes)",
            if fixed { "fixed sizes" } else { "random sizes" },
            n_in,
            pol.demoted,
            pol.demoted_fraction(),
            frac_bytes
        );
        if fixed {
            // With one size s the level left is below s (not 1.5 s): an accepted packet
            // leaves less than s / 2. 50_000 packets of 1000 B, 4 ms apart: admitted in
            // (4.5 + 24_999.5 - 1, 4.5 + 24_999.5] packets, i.e. exactly 25_004.
            assert_eq!(n_adm, 25_004);
            assert!((pol.demoted_fraction() - 0.5).abs() < 1e-3);
        } else {
            // Byte fraction demoted: 1/2 up to (depth + 1.5 s_max) / in_bytes.
            assert!(
                (frac_bytes - 0.5).abs() <= (depth as f64 + 1.5 * s_max as f64) / in_bytes as f64
            );
        }
    }
}
