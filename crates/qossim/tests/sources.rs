//! Long-run sending rates of the on-off sources against their nominal means.
//!
//! An on-off source sends on the ticks of a packet clock that keeps running through its
//! silences, so an on period of length `L` holds `L / interval` packets on average and the
//! long-run rate is `size x 8 / interval x on-fraction`. A source that instead starts
//! every on period with a packet sends `ceil(L / interval)`: half a packet too many per on
//! period, 2.9% above nominal for the 20-ms VBR codec.

use qossim::metrics::{t975, t_interval};
use qossim::queue::{DropTail, Limit};
use qossim::time::{secs, NEVER, PS_PER_S};
use qossim::traffic::{named_model, PacketTemplate, Period, Sink, Source, SourceModel};
use qossim::World;

/// Upper 0.9995 quantile of Student's t with 19 degrees of freedom (two-sided 99.9%).
const T9995_19: f64 = 3.883;

/// Bits per second sent per flow by `flows` sources of `model` over `seconds`.
fn rate_per_flow(model: &SourceModel, flows: u32, seconds: u64, seed: u64) -> f64 {
    let mut w = World::new(seed);
    let a = w.net.add_node("a");
    let b = w.net.add_node("b");
    w.net.add_link(
        "ab",
        a,
        b,
        100_000_000_000,
        0,
        Box::new(DropTail::new(Limit::Packets(10_000_000))),
    );
    let g = w.flows.add_group("src");
    let sink = w.add_agent("sink", Box::new(Sink));
    for i in 0..flows {
        let flow = w.flows.open(g, 0);
        let src = Source::new(
            model,
            PacketTemplate::new(a, b, sink.id()),
            flow,
            0,
            NEVER,
            0.0,
            w.rng(&format!("source{i}")),
        );
        w.add_agent("source", Box::new(src));
    }
    let end = seconds * PS_PER_S;
    w.run_until(end);
    let bytes = w.flows.groups[g as usize].sent_bytes as f64;
    bytes * 8.0 / (flows as f64 * seconds as f64)
}

/// The nominal mean lies in the 99.9% Student-t interval of 20 independent per-seed rates,
/// and that interval is narrower than `max_rel_hw` of the mean.
fn check_rate(name: &str, model: &SourceModel, flows: u32, seconds: u64, max_rel_hw: f64) {
    let xs: Vec<f64> = (0..20u64)
        .map(|k| rate_per_flow(model, flows, seconds, 500 + 104_729 * k))
        .collect();
    let e = t_interval(&xs);
    assert_eq!(e.n, 20);
    let hw = e.half_width / t975(e.n - 1) * T9995_19;
    let nominal = model.mean_bps();
    eprintln!(
        "{name}: {:.1} +- {:.1} b/s per flow (99.9%), nominal {nominal:.1} ({:+.2}%)",
        e.mean,
        hw,
        100.0 * (e.mean - nominal) / nominal
    );
    assert!(
        (e.mean - nominal).abs() <= hw,
        "{name}: nominal {nominal} outside {} +- {hw}",
        e.mean
    );
    assert!(hw < max_rel_hw * nominal, "{name}: interval too wide");
}

/// The four on-off voice codecs. For the 20-ms codecs the interval (about 1.2% half-width)
/// is narrower than half the bias of a source that starts every on period with a packet
/// (2.5% to 2.9%), so that bias is caught.
#[test]
fn on_off_voice_codecs_send_their_nominal_mean() {
    for name in ["VBR", "G.711-VBR-20ms", "G.711-VBR-10ms", "G.729-VBR"] {
        let m = named_model(name).unwrap();
        assert!(matches!(m, SourceModel::OnOff { .. }), "{name} is on-off");
        let bias = match &m {
            SourceModel::OnOff { interval, on, .. } => 0.5 * interval / on.mean(),
            _ => unreachable!(),
        };
        let max_hw = if bias > 0.02 { bias / 2.0 } else { 0.05 };
        check_rate(name, &m, 40, 100, max_hw);
    }
}

/// The synthetic video source (1500 B every 1 ms while on).
#[test]
fn svd_sends_its_nominal_mean() {
    let m = named_model("SVD").unwrap();
    check_rate("SVD", &m, 10, 50, 0.05);
}

/// Exact arithmetic: fixed on periods of 10.5 ms and off periods of 20.2 ms with a 1-ms
/// clock. Successive on periods start 30.7 ms apart, so their phase against the clock
/// cycles through ten values 0.1 ms apart; half of them hold 11 ticks and half 10, i.e.
/// 10.5 on average, exactly the on length over the interval. Over 1000 cycles a source
/// sends 10 500 packets (to within the one partial cycle at each end), where one that
/// starts every on period with a packet sends 11 000.
#[test]
fn fixed_periods_send_exactly_on_length_over_interval() {
    let m = SourceModel::OnOff {
        size: 100,
        interval: 0.001,
        on: Period::Fixed(0.0105),
        off: Period::Fixed(0.0202),
    };
    assert_eq!(secs(0.0105) + secs(0.0202), secs(0.0307));
    for seed in [1u64, 2, 3, 4] {
        let mut w = World::new(seed);
        let a = w.net.add_node("a");
        let b = w.net.add_node("b");
        w.net.add_link(
            "ab",
            a,
            b,
            1_000_000_000,
            0,
            Box::new(DropTail::new(Limit::Packets(1_000_000))),
        );
        let g = w.flows.add_group("src");
        let sink = w.add_agent("sink", Box::new(Sink));
        let flow = w.flows.open(g, 0);
        let src = Source::new(
            &m,
            PacketTemplate::new(a, b, sink.id()),
            flow,
            0,
            NEVER,
            0.0,
            w.rng("source"),
        );
        w.add_agent("source", Box::new(src));
        w.run_until(1000 * secs(0.0307));
        let pkts = w.flows.groups[g as usize].sent_pkts as i64;
        eprintln!("seed {seed}: {pkts} packets in 1000 cycles");
        assert!(
            (pkts - 10_500).abs() <= 11,
            "{pkts} packets, expected 10500"
        );
    }
}
