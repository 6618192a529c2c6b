//! The engine against queueing theory: M/M/1 and M/D/1 (Pollaczek-Khinchine), Little's law
//! on a random tree of queues, Erlang-B for M/M/c/c and the mean of M/G/infinity.
//!
//! Every comparison is a confidence interval over independent seeds: each seed gives one
//! estimate, the K estimates give a Student-t interval, and the theoretical value must lie
//! inside it. Intervals are two-sided 99.9% intervals: the file makes about twenty
//! comparisons, so the chance that a correct engine fails any of them is about 2%, while
//! each interval is still only a few percent wide (printed with `--nocapture`), so a
//! model error of that size is caught.

use qossim::metrics::{t975, t_interval};
use qossim::net::{LinkId, Packet, PortHook, PortInfo};
use qossim::queue::{DropTail, Limit};
use qossim::time::{secs, Time, NEVER, PS_PER_S};
use qossim::traffic::{
    Arrivals, FlowGenerator, Holding, MaxActive, PacketTemplate, Sink, SizeDist, Source,
    SourceModel,
};
use qossim::{Rng, World};
use std::collections::VecDeque;

/// Upper 0.9995 quantile of Student's t with `df` degrees of freedom (two-sided 99.9%).
/// Standard table values.
fn t9995(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        636.62, 31.599, 12.924, 8.610, 6.869, 5.959, 5.408, 5.041, 4.781, 4.587, 4.437, 4.318,
        4.221, 4.140, 4.073, 4.015, 3.965, 3.922, 3.883, 3.850, 3.819, 3.792, 3.768, 3.745, 3.725,
        3.707, 3.690, 3.674, 3.659, 3.646,
    ];
    TABLE[df as usize - 1]
}

/// A 99.9% Student-t interval over per-seed estimates.
struct Ci {
    mean: f64,
    hw: f64,
}

fn ci(xs: &[f64]) -> Ci {
    let e = t_interval(xs);
    let df = e.n - 1;
    Ci {
        mean: e.mean,
        hw: e.half_width / t975(df) * t9995(df),
    }
}

/// Asserts that `theory` lies in the 99.9% interval of the per-seed values `xs`.
fn check(what: &str, xs: &[f64], theory: f64) {
    let c = ci(xs);
    let rel = if theory != 0.0 {
        format!(" ({:.2}%)", 100.0 * c.hw / theory.abs())
    } else {
        String::new()
    };
    eprintln!(
        "{what}: measured {:.6} +- {:.6}{rel}, theory {:.6}, K = {}",
        c.mean,
        c.hw,
        theory,
        xs.len()
    );
    assert!(
        (c.mean - theory).abs() <= c.hw,
        "{what}: theory {theory} outside {} +- {}",
        c.mean,
        c.hw
    );
    // The comparison must be informative: an interval wider than 10% of the value it is
    // compared with would pass almost anything.
    let scale = if theory != 0.0 {
        theory.abs()
    } else {
        c.mean.abs().max(c.hw)
    };
    assert!(
        c.hw < 0.1 * scale || theory == 0.0,
        "{what}: interval too wide"
    );
}

/// Independent replications.
const SEEDS: u64 = 20;

fn seeds() -> impl Iterator<Item = u64> {
    (0..SEEDS).map(|k| 1000 + 7919 * k)
}

/// Pollaczek-Khinchine mean wait in queue for Poisson arrivals at `lambda` per second and
/// service times with first and second moments `es` (s) and `es2` (s^2).
fn pk_wq(lambda: f64, es: f64, es2: f64) -> f64 {
    let rho = lambda * es;
    assert!(rho < 1.0);
    lambda * es2 / (2.0 * (1.0 - rho))
}

/// Service-time moments on a link of `rate_bps` for packet sizes `size`.
fn service_moments(size: SizeDist, rate_bps: u64) -> (f64, f64) {
    let per_byte = 8.0 / rate_bps as f64;
    (
        size.mean() * per_byte,
        size.second_moment() * per_byte * per_byte,
    )
}

/// A link with a huge drop-tail buffer: no loss, so the queue is the infinite-buffer queue
/// of the theory.
fn fifo() -> Box<DropTail> {
    Box::new(DropTail::new(Limit::Packets(10_000_000)))
}

struct SingleQueue {
    /// Mean sojourn (creation to delivery), seconds.
    w: f64,
    /// Time-average number waiting (not in service).
    lq: f64,
    /// Delivered packets measured.
    n: u64,
}

/// One Poisson source of `lambda` packets/s with sizes `size` into one link of `rate`,
/// zero propagation delay, measured from `warmup` to `end`.
fn single_queue(
    seed: u64,
    lambda: f64,
    size: SizeDist,
    rate: u64,
    warmup: Time,
    end: Time,
) -> SingleQueue {
    let mut w = World::new(seed);
    let a = w.net.add_node("a");
    let b = w.net.add_node("b");
    let l = w.net.add_link("ab", a, b, rate, 0, fifo());
    let g = w.flows.add_group("poisson");
    let sink = w.add_agent("sink", Box::new(Sink));
    let flow = w.flows.open(g, 0);
    let model = SourceModel::Poisson { rate: lambda, size };
    let src = Source::new(
        &model,
        PacketTemplate::new(a, b, sink.id()),
        flow,
        0,
        NEVER,
        0.0,
        w.rng("source"),
    );
    w.add_agent("source", Box::new(src));
    w.set_warmup(warmup);
    w.run_until(end);
    let m = w.summary();
    assert_eq!(w.net.links[l as usize].stats.drops.pkts, 0);
    let n = w.flows.groups[g as usize].delay.count();
    SingleQueue {
        w: if n > 0 {
            num(&m, "group.poisson.delay_mean_s")
        } else {
            0.0
        },
        lq: num(&m, "link.ab.queue_mean_pkts"),
        n,
    }
}

/// M/G/1 on one link: mean sojourn W = Wq + E[S] and mean queue Lq = lambda Wq.
fn mg1(label: &str, size: SizeDist, rho: f64, seconds: u64) {
    // 8 Mb/s: a 1000-byte packet takes exactly 1 ms; one byte exactly 1 us.
    let rate = 8_000_000u64;
    let (es, es2) = service_moments(size, rate);
    let lambda = rho / es;
    let wq = pk_wq(lambda, es, es2);
    let warmup = 5 * PS_PER_S;
    let end = warmup + seconds * PS_PER_S;
    let runs: Vec<SingleQueue> = seeds()
        .map(|s| single_queue(s, lambda, size, rate, warmup, end))
        .collect();
    let ws: Vec<f64> = runs.iter().map(|r| r.w).collect();
    let lqs: Vec<f64> = runs.iter().map(|r| r.lq).collect();
    let n: u64 = runs.iter().map(|r| r.n).sum();
    eprintln!("{label} rho {rho}: {n} packets measured over {SEEDS} seeds");
    check(&format!("{label} rho {rho} sojourn W (s)"), &ws, wq + es);
    check(
        &format!("{label} rho {rho} queue Lq (pkts)"),
        &lqs,
        lambda * wq,
    );
}

#[test]
fn mm1_geometric_sizes() {
    // Geometric sizes of mean 1000 B: E[S^2] = m (2m - 1) bytes^2 (exact), so the queue is
    // M/G/1 with nearly exponential service; Pollaczek-Khinchine with the exact moments.
    mg1("M/M/1", SizeDist::Geometric(1000.0), 0.5, 100);
    mg1("M/M/1", SizeDist::Geometric(1000.0), 0.8, 200);
}

#[test]
fn md1_fixed_sizes() {
    // Wq = rho / (2 mu (1 - rho)) is the P-K formula with E[S^2] = E[S]^2.
    let (es, _) = service_moments(SizeDist::Fixed(1000), 8_000_000);
    for rho in [0.5, 0.8] {
        let mu = 1.0 / es;
        let lambda = rho * mu;
        assert!((pk_wq(lambda, es, es * es) - rho / (2.0 * mu * (1.0 - rho))).abs() < 1e-15);
    }
    mg1("M/D/1", SizeDist::Fixed(1000), 0.5, 100);
    mg1("M/D/1", SizeDist::Fixed(1000), 0.8, 200);
}

/// Records each packet's arrival at a port and, when it starts transmission, its wait
/// (drop-tail is FIFO and nothing is dropped, so departures match arrivals in order).
struct WaitObserver {
    arrivals: VecDeque<Time>,
    from: Time,
    waits: u128,
    departures: u64,
}

impl PortHook for WaitObserver {
    fn on_arrival(&mut self, _pkt: &mut Packet, now: Time, _port: &PortInfo) -> bool {
        self.arrivals.push_back(now);
        true
    }
    fn wants_departures(&self) -> bool {
        true
    }
    fn on_departure(&mut self, _pkt: &mut Packet, now: Time) {
        let a = self
            .arrivals
            .pop_front()
            .expect("departure without arrival");
        if now >= self.from {
            self.waits += (now - a) as u128;
            self.departures += 1;
        }
    }
}

/// A random in-tree of five links towards one destination, with four Poisson sources:
/// ```text
/// h0 -L0-> r1 -L2-> r2 -L4-> d
/// h1 -L1-> r1       ^
///   (source at r1)  |
/// h2 -------L3------+
/// ```
/// Source sizes and rates, link utilisations (hence rates) and propagation delays are
/// drawn from a fixed stream: the scenario is random but the same for every replication.
struct Tree {
    rates: [u64; 5],
    delays: [Time; 5],
    sizes: [SizeDist; 4],
    lambdas: [f64; 4],
}

fn random_tree() -> Tree {
    let mut r = Rng::from_seed(0x7ee);
    let sizes = [0; 4].map(|_: u8| {
        if r.uniform() < 0.5 {
            SizeDist::Fixed(100 + r.below(1400) as u32)
        } else {
            SizeDist::Geometric(r.range(200.0, 1200.0))
        }
    });
    let bps = [0; 4].map(|_: u8| r.range(1e6, 5e6));
    let lambdas = [0, 1, 2, 3].map(|j| bps[j] / 8.0 / sizes[j].mean());
    // Links crossed by each source: h0 (L0 L2 L4), h1 (L1 L2 L4), r1 (L2 L4), h2 (L3 L4).
    let crosses: [&[usize]; 4] = [&[0, 2, 4], &[1, 2, 4], &[2, 4], &[3, 4]];
    let mut load = [0.0; 5];
    for (j, links) in crosses.iter().enumerate() {
        for &l in links.iter() {
            load[l] += bps[j];
        }
    }
    // Each link runs at a random utilisation between 0.3 and 0.85.
    let rates = load.map(|x| (x / r.range(0.3, 0.85)).round() as u64);
    let delays = [0; 5].map(|_: Time| r.below(5_000_000_000));
    Tree {
        rates,
        delays,
        sizes,
        lambdas,
    }
}

struct TreeRun {
    /// Per link: time-average queue (engine), and sum of waits / measured time (observer).
    lq: [f64; 5],
    lambda_w: [f64; 5],
}

fn run_tree(t: &Tree, seed: u64, warmup: Time, end: Time) -> TreeRun {
    let mut w = World::new(seed);
    let names = ["h0", "h1", "h2", "r1", "r2", "d"];
    let n: Vec<u32> = names.iter().map(|s| w.net.add_node(s)).collect();
    let (h0, h1, h2, r1, r2, d) = (n[0], n[1], n[2], n[3], n[4], n[5]);
    let ends = [(h0, r1), (h1, r1), (r1, r2), (h2, r2), (r2, d)];
    let links: Vec<LinkId> = ends
        .iter()
        .enumerate()
        .map(|(i, &(a, b))| {
            w.net
                .add_link(&format!("L{i}"), a, b, t.rates[i], t.delays[i], fifo())
        })
        .collect();
    let mut observers = Vec::new();
    for &l in &links {
        let obs = WaitObserver {
            arrivals: VecDeque::new(),
            from: warmup,
            waits: 0,
            departures: 0,
        };
        observers.push(w.net.add_hook(l, Box::new(obs)));
    }
    let g = w.flows.add_group("all");
    let sink = w.add_agent("sink", Box::new(Sink));
    for (j, &src_node) in [h0, h1, r1, h2].iter().enumerate() {
        let flow = w.flows.open(g, 0);
        let model = SourceModel::Poisson {
            rate: t.lambdas[j],
            size: t.sizes[j],
        };
        let name = format!("src{j}");
        let src = Source::new(
            &model,
            PacketTemplate::new(src_node, d, sink.id()),
            flow,
            0,
            NEVER,
            0.0,
            w.rng(&name),
        );
        w.add_agent(&name, Box::new(src));
    }
    w.set_warmup(warmup);
    w.run_until(end);
    let summary = w.summary();
    let span = (end - warmup) as f64;
    let mut out = TreeRun {
        lq: [0.0; 5],
        lambda_w: [0.0; 5],
    };
    for (i, &l) in links.iter().enumerate() {
        assert_eq!(w.net.links[l as usize].stats.drops.pkts, 0);
        out.lq[i] = num(&summary, &format!("link.L{i}.queue_mean_pkts"));
        let obs = w.net.hook_mut(observers[i]);
        assert!(obs.departures > 0);
        out.lambda_w[i] = obs.waits as f64 / span;
    }
    out
}

#[test]
fn littles_law_on_a_random_tree() {
    let t = random_tree();
    let warmup = 5 * PS_PER_S;
    let end = warmup + 60 * PS_PER_S;
    let runs: Vec<TreeRun> = seeds().map(|s| run_tree(&t, s, warmup, end)).collect();
    for l in 0..5 {
        // Little's law for the waiting room of each link: the engine's time-average queue
        // length equals the arrival rate times the mean wait measured packet by packet.
        // Per seed they differ only by the ages of the packets queued at the two ends of
        // the measurement window, which have the same distribution: zero mean.
        let diff: Vec<f64> = runs.iter().map(|r| r.lq[l] - r.lambda_w[l]).collect();
        let lq: Vec<f64> = runs.iter().map(|r| r.lq[l]).collect();
        eprintln!(
            "L{l}: rate {:.3} Mb/s, Lq {:.5}",
            t.rates[l] as f64 / 1e6,
            ci(&lq).mean
        );
        check(&format!("L{l} Lq - lambda Wq (pkts)"), &diff, 0.0);
        // Informative: the interval on the difference is a small fraction of Lq itself.
        assert!(ci(&diff).hw < 0.01 * ci(&lq).mean);
    }
    // Links fed by a single Poisson source are M/G/1 queues: Pollaczek-Khinchine too.
    for (l, j) in [(0usize, 0usize), (1, 1), (3, 3)] {
        let (es, es2) = service_moments(t.sizes[j], t.rates[l]);
        let lq = t.lambdas[j] * pk_wq(t.lambdas[j], es, es2);
        let xs: Vec<f64> = runs.iter().map(|r| r.lq[l]).collect();
        check(
            &format!("L{l} (M/G/1, {:?}) Lq (pkts)", t.sizes[j]),
            &xs,
            lq,
        );
    }
}

/// Erlang-B blocking by the stable recursion B(E, 0) = 1,
/// B(E, k) = E B(E, k-1) / (k + E B(E, k-1)).
fn erlang_b(e: f64, c: usize) -> f64 {
    (1..=c).fold(1.0, |b, k| e * b / (k as f64 + e * b))
}

/// A call generator on a fast link whose calls each send a single 64-byte packet (the
/// packet traffic is irrelevant); returns the world's summary at `end`.
fn call_world(
    seed: u64,
    rate: f64,
    holding: Holding,
    c: Option<usize>,
    warmup: Time,
    end: Time,
) -> serde_json::Map<String, serde_json::Value> {
    let mut w = World::new(seed);
    let a = w.net.add_node("a");
    let b = w.net.add_node("b");
    w.net.add_link("ab", a, b, 10_000_000_000, 0, fifo());
    let g = w.flows.add_group("calls");
    let sink = w.add_agent("sink", Box::new(Sink));
    let model = SourceModel::Cbr {
        size: 64,
        interval: 1e6,
    };
    let mut gen = FlowGenerator::new(
        "calls",
        seed,
        model,
        PacketTemplate::new(a, b, sink.id()),
        g,
        Arrivals::Poisson { rate },
        holding,
        0.0,
    )
    .measure_from(warmup);
    if let Some(c) = c {
        gen = gen.with_admission(Box::new(MaxActive(c)));
    }
    w.add_agent("gen", Box::new(gen));
    w.run_until(end);
    w.summary()
}

fn num(m: &serde_json::Map<String, serde_json::Value>, k: &str) -> f64 {
    m.get(k)
        .and_then(|v| v.as_f64())
        .unwrap_or_else(|| panic!("summary has no number {k}"))
}

#[test]
fn mmcc_blocking_is_erlang_b() {
    // Known values of the recursion, to pin the helper.
    assert!((erlang_b(10.0, 10) - 0.214_582).abs() < 1e-6);
    assert!((erlang_b(1.0, 1) - 0.5).abs() < 1e-15);
    for (e, c) in [(10.0, 10usize), (5.0, 8)] {
        let hold = 1.0;
        let warmup = secs(20.0);
        let end = warmup + secs(2000.0);
        let mut blocking = Vec::new();
        let mut offered = 0.0;
        for s in seeds() {
            let m = call_world(s, e / hold, Holding::Exp(hold), Some(c), warmup, end);
            blocking.push(num(&m, "agent.gen.blocking"));
            offered += num(&m, "agent.gen.offered_calls");
        }
        eprintln!("M/M/{c}/{c} E = {e}: {offered} calls offered over {SEEDS} seeds");
        check(
            &format!("M/M/{c}/{c} E = {e} blocking"),
            &blocking,
            erlang_b(e, c),
        );
    }
}

#[test]
fn mginf_mean_active_is_lambda_times_holding() {
    for holding in [Holding::Exp(0.5), Holding::Fixed(0.5)] {
        let lambda = 20.0;
        let warmup = secs(10.0);
        let end = warmup + secs(500.0);
        let active: Vec<f64> = seeds()
            .map(|s| {
                num(
                    &call_world(s, lambda, holding, None, warmup, end),
                    "agent.gen.active_mean",
                )
            })
            .collect();
        check(
            &format!("M/G/inf {holding:?} mean active"),
            &active,
            lambda * holding.mean(),
        );
    }
}

#[test]
fn measurement_window_is_what_the_theory_assumes() {
    // The delays above are end to end: with zero propagation delay and an idle link, a
    // packet's delay is exactly its transmission time.
    let r = single_queue(
        1,
        0.01,
        SizeDist::Fixed(1000),
        8_000_000,
        0,
        2000 * PS_PER_S,
    );
    assert!(r.n > 0);
    assert_eq!(r.w, 1e-3);
    assert_eq!(r.lq, 0.0);
}
