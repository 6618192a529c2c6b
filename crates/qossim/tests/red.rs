//! RED and RIO drop behaviour against their defining formulas.
//!
//! The RED tests hold the average queue fixed: with `w_q = 1` the average is exactly the
//! number of packets queued at each arrival, and the test keeps that number at `Q` by
//! removing one packet after every accepted arrival. The drop process is then a renewal
//! process whose cycle (the number of arrivals from just after a drop up to and including
//! the next drop) has survival function
//! `P(X > n) = prod_{k=1..n} (1 - pa_k)`, with `pa_k` the probability the k-th arrival
//! after a drop sees. For the classic count correction, `pa_k = pb / (1 - k pb)` (1 once
//! `k pb >= 1`), so `P(X > n) = (1 - (n+1) pb) / (1 - pb)`: X is uniform on
//! `1 ..= 1/pb - 1` when `1/pb` is an integer, E[X] = 1/(2 pb) and the long-run drop rate is
//! `2 pb`. (With the other common convention, where the first arrival after a drop sees
//! `count = 0`, X is uniform on `1 ..= 1/pb` and the rate is `2 pb / (1 + pb)`; the test
//! tells the two apart.) The tests compute E[X] and Var[X] from the survival function
//! numerically, for any `pa_k` (gentle and byte mode included), and compare the mean of
//! the observed cycles with E[X] using the exact standard error `sqrt(Var[X] / n)` and a
//! 4-sigma bound (a correct implementation fails with probability about 6e-5).

use qossim::net::marks;
use qossim::queue::{
    Dequeue, DropCause, DropLog, DropObserver, QueueDisc, Red, RedCurve, RedParams, Rio, RioMode,
    RioParams,
};
use qossim::{Packet, Rng};
use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;

fn pkt(size: u32, in_profile: bool) -> Packet {
    Packet {
        size,
        marks: if in_profile { marks::IN_PROFILE } else { 0 },
        ..Default::default()
    }
}

/// Mean and variance of the renewal cycle X with `P(X > n) = prod_{k<=n} (1 - pa(k))`.
fn cycle_moments(pa: impl Fn(u64) -> f64) -> (f64, f64) {
    let (mut s, mut ex, mut ex2) = (1.0f64, 0.0f64, 0.0f64);
    let mut n = 0u64;
    while s > 1e-15 && n < 10_000_000 {
        ex += s;
        ex2 += (2 * n + 1) as f64 * s;
        n += 1;
        s *= 1.0 - pa(n).clamp(0.0, 1.0);
    }
    (ex, ex2 - ex * ex)
}

/// The classic corrected probability of the k-th arrival after a drop, written out from
/// the definition (independently of the library), with the count measured in units of
/// `unit` (1 in packet mode, size/mean in byte mode) and the byte-mode scaling `scale`.
fn classic_pa(pb: f64, k: u64, unit: f64, scale: f64) -> f64 {
    let c = k as f64 * unit;
    if c * pb >= 1.0 {
        1.0
    } else {
        (pb / (1.0 - c * pb) * scale).min(1.0)
    }
}

struct Held {
    gaps: Vec<u64>,
    early_random: u64,
    early_forced: u64,
    arrivals: u64,
}

/// Keeps a RED queue at `q` packets before every arrival and returns the drop cycles
/// observed after the first drop, until `n_gaps` cycles (or `max_arrivals`).
fn hold(red: &mut Red, q: usize, size: u32, n_gaps: usize, max_arrivals: u64) -> Held {
    let mut d = DropLog::default();
    let mut guard = 0;
    while red.len() < q {
        red.enqueue(pkt(size, false), 0, &mut d);
        guard += 1;
        assert!(guard < 1_000_000, "cannot fill the queue");
    }
    let c0 = red.counters(false);
    let mut gaps = Vec::with_capacity(n_gaps.min(1 << 20));
    let mut since: Option<u64> = None;
    let mut arrivals = 0;
    while gaps.len() < n_gaps && arrivals < max_arrivals {
        assert_eq!(red.len(), q);
        let before = d.early_total() + d.overflow_total();
        red.enqueue(pkt(size, false), 0, &mut d);
        arrivals += 1;
        let dropped = d.early_total() + d.overflow_total() > before;
        assert_eq!(red.avg(), q as f64);
        if let Some(n) = since.as_mut() {
            *n += 1;
        }
        if dropped {
            if let Some(n) = since {
                gaps.push(n);
            }
            since = Some(0);
        } else {
            assert!(matches!(red.dequeue(0), Dequeue::Packet(_)));
        }
    }
    let c1 = red.counters(false);
    assert_eq!(c1.overflow, c0.overflow, "no overflow expected");
    Held {
        gaps,
        early_random: c1.early_random - c0.early_random,
        early_forced: c1.early_forced - c0.early_forced,
        arrivals,
    }
}

fn held_red(curve: RedCurve, byte_mode: bool, seed: u64) -> Red {
    let p = RedParams::new(curve, 1000)
        .with_w_q(1.0)
        .with_byte_mode(byte_mode)
        .with_link(10_000_000, 1000);
    Red::new(p, Rng::stream(seed, "red-test"))
}

/// Compares the observed cycles with the theory; returns (observed mean, expected mean).
fn check_cycles(h: &Held, pa: impl Fn(u64) -> f64, what: &str) -> (f64, f64) {
    let (ex, var) = cycle_moments(pa);
    let n = h.gaps.len() as f64;
    let mean = h.gaps.iter().sum::<u64>() as f64 / n;
    let se = (var / n).sqrt();
    eprintln!(
        "{what}: cycles {n}, mean gap {mean:.4} vs E[X] {ex:.4} (se {se:.4}), drop rate {:.5} vs {:.5}",
        1.0 / mean,
        1.0 / ex
    );
    assert!(
        (mean - ex).abs() <= 4.0 * se,
        "{what}: mean cycle {mean} vs theory {ex} (4 se = {})",
        4.0 * se
    );
    (mean, ex)
}

#[test]
fn red_count_corrected_drop_rate() {
    // min 5, max 15, max_p 0.1, queue held at 10: pb = 0.05, 1/pb = 20.
    let curve = RedCurve::new(5.0, 15.0, 0.1);
    let pb = curve.pb(10.0);
    assert!((pb - 0.05).abs() < 1e-15);
    let mut red = held_red(curve, false, 1);
    let h = hold(&mut red, 10, 1000, 40_000, u64::MAX);
    let (mean, ex) = check_cycles(&h, |k| classic_pa(pb, k, 1.0, 1.0), "RED pb=0.05");
    // Closed form: uniform on 1..=19, mean 10, rate 2 pb.
    assert!((ex - 10.0).abs() < 1e-6);
    // The other count convention (uniform on 1..=20, mean 10.5) is rejected.
    assert!((mean - 10.5).abs() > 0.3);
    // Shape: no cycle longer than 1/pb arrivals, and every length 1..=19 occurs.
    assert!(h.gaps.iter().all(|&g| (1..=20).contains(&g)));
    for len in 1..=19u64 {
        assert!(h.gaps.contains(&len), "no cycle of length {len}");
    }
    assert_eq!(h.early_forced, 0);
    assert_eq!(h.early_random as usize, h.gaps.len() + 1);
}

#[test]
fn red_other_probabilities() {
    // Non-integer 1/pb: queue at 8 gives pb = 0.03 (1/pb = 33.3).
    let curve = RedCurve::new(5.0, 15.0, 0.1);
    let pb = curve.pb(8.0);
    let mut red = held_red(curve, false, 2);
    let h = hold(&mut red, 8, 1000, 20_000, u64::MAX);
    check_cycles(&h, |k| classic_pa(pb, k, 1.0, 1.0), "RED pb=0.03");
    // Below min_th nothing is dropped.
    let mut red = held_red(curve, false, 3);
    let h = hold(&mut red, 4, 1000, usize::MAX, 50_000);
    assert_eq!(h.early_random + h.early_forced, 0);
    assert_eq!(h.arrivals, 50_000);
}

#[test]
fn gentle_shape() {
    let plain = RedCurve::new(5.0, 15.0, 0.1);
    let gentle = plain.gentle(true);
    // The curve itself.
    for (avg, p_plain, p_gentle) in [
        (4.0, 0.0, 0.0),
        (10.0, 0.05, 0.05),
        (15.0, 1.0, 0.1),
        (22.5, 1.0, 0.55),
        (29.0, 1.0, 0.1 + 0.9 * 14.0 / 15.0),
        (30.0, 1.0, 1.0),
        (45.0, 1.0, 1.0),
    ] {
        assert!((plain.pb(avg) - p_plain).abs() < 1e-12, "plain at {avg}");
        assert!((gentle.pb(avg) - p_gentle).abs() < 1e-12, "gentle at {avg}");
    }
    // From max_th on plain RED drops everything (forced); gentle RED still drops with the
    // count-corrected probability, max_p at max_th and rising towards 2 max_th.
    let mut red = held_red(plain, false, 4);
    let h = hold(&mut red, 15, 1000, usize::MAX, 10_000);
    assert_eq!((h.early_forced, h.early_random), (10_000, 0));
    for (q, seed) in [(15usize, 5u64), (17, 6)] {
        let pb = gentle.pb(q as f64);
        let mut red = held_red(gentle, false, seed);
        let h = hold(&mut red, q, 1000, 20_000, u64::MAX);
        check_cycles(
            &h,
            |k| classic_pa(pb, k, 1.0, 1.0),
            &format!("gentle at {q}, pb={pb:.3}"),
        );
        assert_eq!(h.early_forced, 0);
    }
    // At 2 max_th gentle RED drops everything. (A queue held at 30 with this curve cannot
    // be filled with w_q = 1, since arrivals at 29 are dropped with probability ~1; a
    // curve with max_th = 1.5 reaches 2 max_th = 3 packets.)
    let small = RedCurve::new(0.5, 1.5, 0.01).gentle(true);
    let mut red = held_red(small, false, 11);
    let h = hold(&mut red, 3, 1000, usize::MAX, 10_000);
    assert_eq!((h.early_forced, h.early_random), (10_000, 0));
}

#[test]
fn byte_mode_shape() {
    let curve = RedCurve::new(5.0, 15.0, 0.1);
    let pb = curve.pb(10.0);
    // Mean-size packets: byte mode is packet mode.
    let mut red = held_red(curve, true, 7);
    let h = hold(&mut red, 10, 1000, 20_000, u64::MAX);
    check_cycles(&h, |k| classic_pa(pb, k, 1.0, 1.0), "byte mode, 1000 B");
    // Half-size packets: the count grows by half a packet per arrival and each decision is
    // scaled by 1/2, which is packet mode with pb/2: cycles uniform on 1..=39, E[X] = 20.
    let mut red = held_red(curve, true, 8);
    let h = hold(&mut red, 10, 500, 20_000, u64::MAX);
    let (_, ex_small) = check_cycles(&h, |k| classic_pa(pb, k, 0.5, 0.5), "byte mode, 500 B");
    assert!((ex_small - 20.0).abs() < 1e-6);
    // Double-size packets: packet mode with 2 pb, E[X] = 5.
    let mut red = held_red(curve, true, 9);
    let h = hold(&mut red, 10, 2000, 20_000, u64::MAX);
    let (_, ex_big) = check_cycles(&h, |k| classic_pa(pb, k, 2.0, 2.0), "byte mode, 2000 B");
    assert!((ex_big - 5.0).abs() < 1e-6);
    // So the drop rate per byte does not depend on the packet size (1e-4 per byte here),
    // whereas in packet mode it would be 4 times higher for the small packets.
    let mut red = held_red(curve, false, 10);
    let h = hold(&mut red, 10, 500, 20_000, u64::MAX);
    check_cycles(&h, |k| classic_pa(pb, k, 1.0, 1.0), "packet mode, 500 B");
}

/// Drives a RIO queue: each arrival is IN with probability `p_in`; after an arrival the
/// head leaves if more than `target` packets are queued. Returns the number of IN early
/// drops, and checks that each happened with the IN average at or above `minth_in`.
struct RioRun {
    in_arrivals: u64,
    out_arrivals: u64,
    in_early: u64,
    out_early: u64,
    out_avg_min: f64,
    out_avg_max: f64,
}

/// Counts the IN packets a port drops, (early, overflow), through the drop log's
/// observer point.
struct InDrops(Rc<Cell<(u64, u64)>>);

impl InDrops {
    fn watch(d: &mut DropLog) -> Rc<Cell<(u64, u64)>> {
        let c = Rc::new(Cell::new((0, 0)));
        d.observe(Box::new(InDrops(c.clone())));
        c
    }
}

impl DropObserver for InDrops {
    fn on_drop(&mut self, pkt: &Packet, cause: DropCause) {
        if pkt.has(marks::IN_PROFILE) {
            let (e, o) = self.0.get();
            match cause {
                DropCause::Early => self.0.set((e + 1, o)),
                DropCause::Overflow => self.0.set((e, o + 1)),
                _ => {}
            }
        }
    }
}

fn drive_rio(q: &mut Rio, rng: &mut Rng, p_in: f64, target: usize, n: u64) -> RioRun {
    let min_in = q.params().in_curve.min_th;
    let coupled = q.params().mode == RioMode::Coupled;
    let w = q.params().w_q;
    let mut d = DropLog::default();
    let c0 = (q.counters(true), q.counters(false));
    // Queue lengths the OUT-side average was last updated with (10/w updates cover all
    // but e^-10 of its weight).
    let window = (10.0 / w) as usize;
    let mut seen: VecDeque<usize> = VecDeque::with_capacity(window + 1);
    for _ in 0..n {
        let is_in = rng.uniform() < p_in;
        let out_q = if coupled { q.len() } else { q.len_out() };
        if coupled || !is_in {
            seen.push_back(out_q);
            if seen.len() > window {
                seen.pop_front();
            }
        }
        let before = q.counters(true).early();
        q.enqueue(pkt(500, is_in), 0, &mut d);
        if q.counters(true).early() > before {
            assert!(
                q.avg_in() >= min_in,
                "IN packet dropped early with IN average {} < minth_in {min_in}",
                q.avg_in()
            );
        }
        if q.len() > target {
            assert!(matches!(q.dequeue(0), Dequeue::Packet(_)));
        }
    }
    let (ci, co) = (q.counters(true), q.counters(false));
    assert_eq!(ci.overflow + co.overflow, 0);
    let lo = *seen.iter().min().unwrap() as f64;
    let hi = *seen.iter().max().unwrap() as f64;
    // Weight older than the window: (1-w)^window <= e^-10, times the largest possible
    // queue (the limit).
    let slack = (1.0 - w).powi(window as i32) * q.params().limit as f64;
    assert!(
        q.avg_out() >= lo - slack && q.avg_out() <= hi + slack,
        "OUT-side average {} outside the range [{lo}, {hi}] of the queue it averages",
        q.avg_out()
    );
    RioRun {
        in_arrivals: ci.arrivals - c0.0.arrivals,
        out_arrivals: co.arrivals - c0.1.arrivals,
        in_early: ci.early() - c0.0.early(),
        out_early: co.early() - c0.1.early(),
        out_avg_min: lo,
        out_avg_max: hi,
    }
}

#[test]
fn rio_protects_in_packets_below_minth_in() {
    // OUT: 40/80/0.5 on the total queue; IN: 20/60/0.1 on the IN queue. The queue is held
    // near 60 packets: the total average is far above minth_in (a RIO that judged IN
    // packets on the total average would drop them), while with 10% IN arrivals the IN
    // packets are only a small part of it.
    let params = RioParams::parse("40/80/0.5 20/60/0.1")
        .unwrap()
        .with_limit(200)
        .with_link(10_000_000, 500);
    let mut q = Rio::new(params, Rng::stream(11, "rio"));
    let mut rng = Rng::stream(11, "arrivals");
    let r1 = drive_rio(&mut q, &mut rng, 0.1, 60, 200_000);
    eprintln!(
        "RIO phase 1: IN {} arrivals, {} early drops; OUT {} arrivals, {} early drops; \
         avg_in {:.2}, avg total {:.2} (queue {}..{})",
        r1.in_arrivals,
        r1.in_early,
        r1.out_arrivals,
        r1.out_early,
        q.avg_in(),
        q.avg(),
        r1.out_avg_min,
        r1.out_avg_max
    );
    assert!(q.avg_in() < 20.0, "test premise: IN average below minth_in");
    assert!(q.avg() > 59.0, "test premise: total average above minth_in");
    assert_eq!(r1.in_early, 0, "IN packets dropped early below minth_in");
    assert!(
        r1.out_early as f64 > 0.3 * r1.out_arrivals as f64,
        "OUT packets should be dropped heavily"
    );
    // Phase 2: mostly IN traffic; the IN average rises above minth_in and IN packets are
    // dropped early, each time with the IN average at or above minth_in (checked per drop).
    let r2 = drive_rio(&mut q, &mut rng, 0.7, 60, 200_000);
    eprintln!(
        "RIO phase 2: IN {} arrivals, {} early drops; avg_in {:.2}",
        r2.in_arrivals,
        r2.in_early,
        q.avg_in()
    );
    assert!(q.avg_in() > 20.0);
    assert!(r2.in_early > 0);
}

#[test]
fn rio_decoupled_out_average_is_out_only() {
    let params = RioParams::parse("40/80/0.5 20/60/0.1")
        .unwrap()
        .with_limit(200)
        .with_mode(RioMode::Decoupled);
    let mut q = Rio::new(params, Rng::stream(12, "rio"));
    let mut rng = Rng::stream(12, "arrivals");
    // drive_rio checks the OUT average lies within the range of the OUT-only queue.
    let r = drive_rio(&mut q, &mut rng, 0.3, 60, 100_000);
    eprintln!(
        "RIO-D: avg_out {:.2} (OUT queue {}..{}), avg_in {:.2}, total queue {}",
        q.avg_out(),
        r.out_avg_min,
        r.out_avg_max,
        q.avg_in(),
        q.len()
    );
    assert!(
        r.out_avg_max < 60.0,
        "OUT-only queue must be below the total"
    );
    // The coupled queue with the same arrivals judges OUT packets on the total queue.
    let params = params.with_mode(RioMode::Coupled);
    let mut q = Rio::new(params, Rng::stream(12, "rio"));
    let mut rng = Rng::stream(12, "arrivals");
    let r = drive_rio(&mut q, &mut rng, 0.3, 60, 100_000);
    assert!(r.out_avg_min >= 60.0);
}

#[test]
fn rio_report_and_drop_log_agree() {
    let params = RioParams::parse("4/18/0.05 5/18/0.02")
        .unwrap()
        .with_limit(24)
        .with_w_q(0.02);
    let mut q = Rio::new(params, Rng::stream(13, "rio"));
    let mut d = DropLog::default();
    let in_drops = InDrops::watch(&mut d);
    let mut rng = Rng::stream(13, "x");
    for i in 0..50_000u64 {
        q.enqueue(pkt(1500, rng.uniform() < 0.5), i, &mut d);
        if i % 3 == 0 {
            q.dequeue(i);
        }
    }
    let (ci, co) = (q.counters(true), q.counters(false));
    assert_eq!(in_drops.get(), (ci.early(), ci.overflow));
    assert_eq!(d.early_total(), ci.early() + co.early());
    assert_eq!(d.overflow_total(), ci.overflow + co.overflow);
    let mut rep = Vec::new();
    q.report(&mut rep);
    let get = |k: &str| rep.iter().find(|(n, _)| n == k).map(|(_, v)| *v).unwrap();
    assert_eq!(get("rio_early_drops_in"), ci.early() as f64);
    assert_eq!(get("rio_overflow_drops_out"), co.overflow as f64);
    assert_eq!(get("rio_avg_in_pkts"), q.avg_in());
}

/// RED and RIO on a real port carrying TCP: packet conservation at the port (offered =
/// sent + dropped + queued), the drop log agreeing with the discipline's own counters,
/// and the discipline's report reaching the run summary. Half the flows are marked IN by
/// a host marker.
#[test]
fn red_family_on_a_port_under_tcp() {
    use qossim::time::{secs, PS_PER_MS};
    use qossim::traffic::PacketTemplate;
    use qossim::transport::{TcpConfig, TcpReceiver, TcpReceiverConfig, TcpRenoSender};
    use qossim::World;

    for rio in [false, true] {
        let mut w = World::new(21);
        let r0 = w.net.add_node("r0");
        let r1 = w.net.add_node("r1");
        let rate = 10_000_000;
        let qdisc: Box<dyn QueueDisc> = if rio {
            let p = RioParams::parse("10/30/0.1 20/30/0.02")
                .unwrap()
                .with_limit(60)
                .with_link(rate, 1000);
            Box::new(Rio::new(p, w.rng("rio")))
        } else {
            let p = RedParams::new(RedCurve::new(10.0, 30.0, 0.1), 60).with_link(rate, 1000);
            Box::new(Red::new(p, w.rng("red")))
        };
        let bn = w.net.add_link("bn", r0, r1, rate, 10 * PS_PER_MS, qdisc);
        let in_drops = InDrops::watch(&mut w.net.links[bn as usize].stats.drops);
        let big = || {
            Box::new(qossim::queue::DropTail::new(qossim::queue::Limit::Packets(
                10_000,
            )))
        };
        w.net
            .add_link("bn-back", r1, r0, rate, 10 * PS_PER_MS, big());
        let g = w.flows.add_group("tcp");
        for i in 0..4 {
            let h = w.net.add_node(&format!("h{i}"));
            let d = w.net.add_node(&format!("d{i}"));
            let delay = (5 + 10 * i) * PS_PER_MS;
            w.net
                .add_link(&format!("h{i}-r0"), h, r0, 100_000_000, delay, big());
            w.net
                .add_link(&format!("r0-h{i}"), r0, h, 100_000_000, delay, big());
            w.net
                .add_link(&format!("r1-d{i}"), r1, d, 100_000_000, PS_PER_MS, big());
            w.net
                .add_link(&format!("d{i}-r1"), d, r1, 100_000_000, PS_PER_MS, big());
            let rx = w.add_agent(
                &format!("rx{i}"),
                Box::new(TcpReceiver::new(TcpReceiverConfig::default())),
            );
            let cfg = TcpConfig {
                group: g,
                ..TcpConfig::default()
            };
            let mut tx = TcpRenoSender::new(cfg, PacketTemplate::new(h, d, rx.id()));
            if i % 2 == 0 {
                tx = tx.with_marker(Box::new(|p: &mut Packet, _| p.set(marks::IN_PROFILE)));
            }
            w.add_agent(&format!("tx{i}"), Box::new(tx));
        }
        w.run_until(secs(20.0));
        let summary = w.summary();
        let l = &mut w.net.links[bn as usize];
        let st = &l.stats;
        let queued = l.qdisc.len() as u64;
        assert_eq!(st.arrivals, st.tx_pkts + st.drops.pkts + queued);
        let (ci, co) = if rio {
            let q = (l.qdisc.as_mut() as &mut dyn std::any::Any)
                .downcast_mut::<Rio>()
                .unwrap();
            (q.counters(true), q.counters(false))
        } else {
            let q = (l.qdisc.as_mut() as &mut dyn std::any::Any)
                .downcast_mut::<Red>()
                .unwrap();
            (q.counters(true), q.counters(false))
        };
        let st = &w.net.links[bn as usize].stats;
        assert_eq!(ci.arrivals + co.arrivals, st.arrivals);
        assert_eq!(st.drops.early_total(), ci.early() + co.early());
        assert_eq!(st.drops.overflow_total(), ci.overflow + co.overflow);
        assert_eq!(in_drops.get().0, ci.early());
        assert!(
            st.drops.early_total() > 0,
            "TCP fills the queue: early drops expected"
        );
        let prefix = if rio { "rio" } else { "red" };
        let key = format!("link.bn.{prefix}_early_drops_out");
        assert_eq!(summary[&key].as_f64().unwrap(), co.early() as f64);
        eprintln!(
            "{prefix}: utilisation {:.3}, IN early {} overflow {}, OUT early {} overflow {}",
            summary["link.bn.utilization"].as_f64().unwrap(),
            ci.early(),
            ci.overflow,
            co.early(),
            co.overflow
        );
    }
}

/// One scripted arrival or departure at a RIO queue, and what the test expects after it.
enum Step {
    /// A packet arrives at `t_ms`: IN or OUT, and whether RIO keeps it.
    Arrive { t_ms: f64, is_in: bool, kept: bool },
    /// The head of the queue leaves at `t_ms`; it must be IN or OUT as given.
    Leave { t_ms: f64, is_in: bool },
}

/// Plays `script` on `q` and checks, after every arrival, the verdict and the two
/// averages against `expect` (IN average, OUT-side average), exactly.
fn play(q: &mut Rio, script: &[Step], expect: &[(f64, f64)]) {
    let ps = |ms: f64| (ms * qossim::time::PS_PER_MS as f64).round() as u64;
    let mut d = DropLog::default();
    let mut arrivals = 0;
    for (i, s) in script.iter().enumerate() {
        match *s {
            Step::Arrive { t_ms, is_in, kept } => {
                let before = q.len();
                q.enqueue(pkt(1000, is_in), ps(t_ms), &mut d);
                assert_eq!(q.len() > before, kept, "step {i}: verdict");
                let (e_in, e_out) = expect[arrivals];
                assert_eq!(q.avg_in(), e_in, "step {i}: IN average");
                assert_eq!(q.avg_out(), e_out, "step {i}: OUT-side average");
                arrivals += 1;
            }
            Step::Leave { t_ms, is_in } => match q.dequeue(ps(t_ms)) {
                Dequeue::Packet(p) => assert_eq!(p.has(marks::IN_PROFILE), is_in, "step {i}"),
                _ => panic!("step {i}: no packet left"),
            },
        }
    }
    assert_eq!(arrivals, expect.len());
}

/// RIO's IN handling on a scripted sequence, coupled and decoupled, with weight 1/2 so
/// every average is an exact binary fraction (computed by hand in the comments). The
/// link sends one 1000-byte packet per millisecond (8 Mb/s), the idle correction's slot.
/// OUT curve 1.3/2/0.5, IN curve 1.5/2.1/0.5: every decision of the script falls below
/// `min_th` or at or beyond `max_th`, so none is random.
///
/// What it pins down: an IN packet is judged on the IN average only (accepted while the
/// total average is beyond the OUT curve's `max_th`, dropped once the IN average reaches
/// its own `max_th`); an IN arrival updates the total average when coupled and leaves the
/// OUT-only average alone when decoupled; the IN average decays over the time no IN
/// packet was queued (from the departure of the last one, even while OUT packets remain),
/// the OUT-side average over the time its own packets were absent.
#[test]
fn rio_in_handling_on_a_scripted_sequence() {
    use Step::{Arrive, Leave};
    let script = [
        // t = 0: four OUT packets; the fourth finds the OUT-side average at 2.125 >= 2.
        Arrive {
            t_ms: 0.0,
            is_in: false,
            kept: true,
        },
        Arrive {
            t_ms: 0.0,
            is_in: false,
            kept: true,
        },
        Arrive {
            t_ms: 0.0,
            is_in: false,
            kept: true,
        },
        Arrive {
            t_ms: 0.0,
            is_in: false,
            kept: false,
        },
        // Four IN packets: the IN average is 0, 0.5, 1.25, then 2.125 >= 2.1 (dropped).
        Arrive {
            t_ms: 0.0,
            is_in: true,
            kept: true,
        },
        Arrive {
            t_ms: 0.0,
            is_in: true,
            kept: true,
        },
        Arrive {
            t_ms: 0.0,
            is_in: true,
            kept: true,
        },
        Arrive {
            t_ms: 0.0,
            is_in: true,
            kept: false,
        },
        Leave {
            t_ms: 1.0,
            is_in: false,
        },
        Leave {
            t_ms: 2.0,
            is_in: false,
        },
        // The last OUT packet leaves at 3 ms (OUT-only average idle from here).
        Leave {
            t_ms: 3.0,
            is_in: false,
        },
        Leave {
            t_ms: 4.0,
            is_in: true,
        },
        Leave {
            t_ms: 5.0,
            is_in: true,
        },
        // The last IN packet leaves at 6 ms: the queue is empty.
        Leave {
            t_ms: 6.0,
            is_in: true,
        },
        Arrive {
            t_ms: 10.5,
            is_in: false,
            kept: true,
        },
        Arrive {
            t_ms: 10.5,
            is_in: true,
            kept: true,
        },
        Arrive {
            t_ms: 10.5,
            is_in: false,
            kept: true,
        },
        Leave {
            t_ms: 11.0,
            is_in: false,
        },
        // The IN packet leaves at 12 ms; an OUT packet stays queued.
        Leave {
            t_ms: 12.0,
            is_in: true,
        },
        Arrive {
            t_ms: 20.5,
            is_in: true,
            kept: true,
        },
    ];
    let params = RioParams::new(RedCurve::new(1.3, 2.0, 0.5), RedCurve::new(1.5, 2.1, 0.5))
        .with_w_q(0.5)
        .with_limit(10)
        .with_link(8_000_000, 1000);
    let h = 0.5f64;
    // The IN average: 0, 0.5, 1.25, 2.125 at t = 0; decayed over 6 -> 10.5 ms (4 slots),
    // then over 12 -> 20.5 ms (8 slots), each time before the update with 0 IN queued.
    let in_a = 2.125 * h.powi(4) * h;
    let in_b = in_a * h.powi(8) * h;
    // Coupled: the total average moves on every arrival: 0, 0.5, 1.25, 2.125 (OUT), then
    // with 3, 4, 5, 6 packets queued for the IN ones; idle 6 -> 10.5 ms (4 slots); then
    // 0, 1 and 2 packets queued; at 20.5 ms one OUT packet is still queued (no decay).
    let t9 = 5.0703125 * h.powi(4) * h;
    let t10 = h * t9 + h * 1.0;
    let t11 = h * t10 + h * 2.0;
    let t12 = h * t11 + h * 1.0;
    let coupled = [
        (0.0, 0.0),
        (0.0, 0.5),
        (0.0, 1.25),
        (0.0, 2.125),
        (0.0, 2.5625),
        (0.5, 3.28125),
        (1.25, 4.140625),
        (2.125, 5.0703125),
        (2.125, t9),
        (in_a, t10),
        (in_a, t11),
        (in_b, t12),
    ];
    // The fourth IN arrival must see 5.0703125 = (4.140625 + 6) / 2: check the hand sums.
    assert_eq!(0.5 * 4.140625 + 0.5 * 6.0, 5.0703125);
    let mut q = Rio::new(params, Rng::stream(14, "rio"));
    play(&mut q, &script, &coupled);
    assert_eq!(q.counters(true).early_forced, 1);
    assert_eq!(q.counters(false).early_forced, 1);
    assert_eq!(
        q.counters(true).early_random + q.counters(false).early_random,
        0
    );

    // Decoupled: IN arrivals leave the OUT-only average at 2.125; the last OUT packet
    // leaves at 3 ms, so at 10.5 ms it has been idle 7 slots; at 20.5 ms nothing updates it.
    let o9 = 2.125 * h.powi(7) * h;
    let o10 = h * o9 + h * 1.0;
    let decoupled = [
        (0.0, 0.0),
        (0.0, 0.5),
        (0.0, 1.25),
        (0.0, 2.125),
        (0.0, 2.125),
        (0.5, 2.125),
        (1.25, 2.125),
        (2.125, 2.125),
        (2.125, o9),
        (in_a, o9),
        (in_a, o10),
        (in_b, o10),
    ];
    let mut q = Rio::new(params.with_mode(RioMode::Decoupled), Rng::stream(14, "rio"));
    play(&mut q, &script, &decoupled);
    assert_eq!(q.counters(true).early_forced, 1);
    assert_eq!(q.counters(false).early_forced, 1);
}
