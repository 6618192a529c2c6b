//! The DiffServ and TCP parts of the scenario language: RED and RIO queues, meters on
//! links, host profiles, TCP traffic, the dumbbell's per-host delays, the merging
//! topology and the queue-average metric. Each key is checked with good and bad input
//! (the diagnostic names the line, the key and the reason), then the built worlds are
//! checked against what the mechanisms guarantee.

use qossim::scenario::{self, MeterSpec, QueueSpec, TrafficModel};
use qossim::time::{tx_time, PS_PER_MS, PS_PER_S};

mod common;
use common::{num, parse, run};

/// The 1-based line of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in the text"))
        + 1
}

/// `text` is invalid, with a diagnostic at the line holding `at`, for `path`, whose
/// reason contains `reason`.
fn bad(text: &str, at: &str, path: &str, reason: &str) {
    let d = parse(text).expect_err("should be invalid");
    let line = line_of(text, at);
    assert!(
        d.iter()
            .any(|d| d.line == line && d.path == path && d.reason.contains(reason)),
        "expected s.toml:{line}: {path}: ..{reason}.. in\n{}",
        d.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

const BASE: &str = r#"
[run]
duration = "3s"
warmup = "1s"
[topology]
kind = "dumbbell"
hosts = 2
access_rate = "100Mbps"
access_delay = "1ms"
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
[links."r0-r1"]
queue = { kind = "rio", params = "20/40/0.05 30/40/0.02", limit = "60p", mean_pkt_size = "576B" }
meters = [{ kind = "policer", rate = "2Mbps", depth = "25KB" }]
[[traffic]]
name = "web"
from = "s0"
to = "d0"
model = "tcp"
packet_size = "576B"
wnd = 64
flows = 3
start_spread = "1s"
profile = { kind = "token_bucket", rate = "1Mbps", depth = "20KB" }
[[traffic]]
name = "udp"
from = "s1"
to = "d1"
model = "cbr"
size = "576B"
interval = "1ms"
profile = { kind = "tsw", target = "2Mbps", win = "500ms", rule = "over_average" }
[[metric]]
kind = "queue_average"
link = "r0-r1"
which = "in"
"#;

#[test]
fn good_keys_are_read() {
    let sc = parse(BASE).unwrap_or_else(|d| panic!("{d:#?}"));
    let l = &sc.topology.links[sc.topology.link("r0-r1").unwrap()];
    match &l.queue {
        QueueSpec::Rio(p) => {
            assert_eq!((p.out_curve.min_th, p.in_curve.min_th), (20.0, 30.0));
            assert_eq!((p.limit, p.mean_pkt_size, p.w_q), (60, 576, 0.002));
        }
        q => panic!("{q:?}"),
    }
    assert_eq!(
        l.meters,
        vec![MeterSpec::Policer {
            rate: 2_000_000,
            depth: 25_000
        }]
    );
    match &sc.traffic[0].model {
        TrafficModel::Tcp(t) => {
            assert_eq!((t.packet_size, t.wnd, t.delayed_ack), (576, 64, false));
            assert_eq!((t.min_rto, t.tick), (200 * PS_PER_MS, 10 * PS_PER_MS));
            assert_eq!((t.init_rto, t.start_spread), (3 * PS_PER_S, PS_PER_S));
        }
        m => panic!("{m:?}"),
    }
    assert_eq!(sc.traffic[0].flows, 3);
    assert!(matches!(
        sc.traffic[1].profile,
        Some(MeterSpec::Tsw {
            target: 2_000_000,
            win,
            rule: qossim::meter::OutRule::OverAverage
        }) if win == 500 * PS_PER_MS
    ));
    assert_eq!(sc.metrics[0].name, "r0-r1.queue_avg_in");
    // RED with every option.
    let red = BASE.replace(
        r#"queue = { kind = "rio", params = "20/40/0.05 30/40/0.02", limit = "60p", mean_pkt_size = "576B" }"#,
        r#"queue = { kind = "red", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.01, gentle = true, byte_mode = true, mean_pkt_size = "1000B", limit = "50p" }"#,
    )
    .replace("which = \"in\"", "which = \"total\"");
    let sc = parse(&red).unwrap_or_else(|d| panic!("{d:#?}"));
    match &sc.topology.links[sc.topology.link("r0-r1").unwrap()].queue {
        QueueSpec::Red(p) => {
            assert!(p.curve.gentle && p.byte_mode);
            assert_eq!(
                (p.curve.min_th, p.curve.max_th, p.curve.max_p),
                (5.0, 15.0, 0.1)
            );
            assert_eq!((p.w_q, p.limit, p.mean_pkt_size), (0.01, 50, 1000));
        }
        q => panic!("{q:?}"),
    }
}

/// The registry's queue kinds as the "unknown kind" message lists them.
fn registered_kinds() -> String {
    let names: Vec<String> = qossim::queue::DISCIPLINES
        .iter()
        .map(|k| k.name.to_string())
        .collect();
    qossim::decl::or_list(&names)
}

#[test]
fn red_and_rio_keys_are_validated() {
    let rio = r#"queue = { kind = "rio", params = "20/40/0.05 30/40/0.02", limit = "60p", mean_pkt_size = "576B" }"#;
    let with = |q: &str| BASE.replace(rio, q);
    let at = "queue = {";
    bad(
        &with(r#"queue = { kind = "rio", params = "40/20/0.05 30/40/0.02" }"#),
        at,
        "links.r0-r1.queue.params",
        "RED curve 40/20/0.05: min_th: must be below max_th (40 >= 20)",
    );
    bad(
        &with(r#"queue = { kind = "rio", params = "20/40/0.05" }"#),
        at,
        "links.r0-r1.queue.params",
        "expected \"minth_out/maxth_out/maxp_out minth_in/maxth_in/maxp_in\"",
    );
    bad(
        &with(r#"queue = { kind = "rio" }"#),
        at,
        "links.r0-r1.queue.params",
        "missing",
    );
    bad(
        &with(r#"queue = { kind = "rio", params = "20/40/0.05 30/40/0.02", mode = "loose" }"#),
        at,
        "links.r0-r1.queue.mode",
        "use \"coupled\" or \"decoupled\"",
    );
    bad(
        &with(r#"queue = { kind = "rio", params = "20/40/0.05 30/40/0.02", limit = "60KB" }"#),
        at,
        "links.r0-r1.queue.limit",
        "limited in packets",
    );
    bad(
        &with(r#"queue = { kind = "rio", params = "20/40/0.05 30/40/0.02", w_q = 0 }"#),
        at,
        "links.r0-r1.queue.w_q",
        "(0, 1]",
    );
    bad(
        &with(r#"queue = { kind = "rio", params = "20/40/0.05 30/40/0.02", gentle = "yes" }"#),
        at,
        "links.r0-r1.queue.gentle",
        "expected true or false",
    );
    bad(
        &with(r#"queue = { kind = "rio", params = "20/40/0.05 30/40/0.02", min_th = 3 }"#),
        at,
        "links.r0-r1.queue.min_th",
        "unknown key",
    );
    bad(
        &with(r#"queue = { kind = "red", min_th = 15, max_th = 5, max_p = 0.1 }"#),
        at,
        "links.r0-r1.queue.min_th",
        "must be below max_th",
    );
    bad(
        &with(r#"queue = { kind = "red", min_th = 5, max_th = 15 }"#),
        at,
        "links.r0-r1.queue.max_p",
        "missing",
    );
    bad(
        &with(r#"queue = { kind = "red", min_th = 5, max_th = 15, max_p = 1.5 }"#),
        at,
        "links.r0-r1.queue.max_p",
        "(0, 1]",
    );
    bad(
        &with(
            r#"queue = { kind = "red", min_th = 5, max_th = 15, max_p = 0.1, mean_pkt_size = 500 }"#,
        ),
        at,
        "links.r0-r1.queue.mean_pkt_size",
        "expected a string with a unit",
    );
    bad(
        &with(r#"queue = { kind = "red", min_th = "5p", max_th = 15, max_p = 0.1 }"#),
        at,
        "links.r0-r1.queue.min_th",
        "expected a number",
    );
    bad(
        &with(r#"queue = { kind = "red", min_th = 5, max_th = 15, max_p = 0.1, params = "x" }"#),
        at,
        "links.r0-r1.queue.params",
        "unknown key",
    );
    bad(
        &with(r#"queue = { kind = "wred" }"#),
        at,
        "links.r0-r1.queue.kind",
        &format!(
            "unknown queue kind \"wred\" (did you mean \"red\"?); use {}",
            registered_kinds()
        ),
    );
}

#[test]
fn meters_and_profiles_are_validated() {
    let meters = r#"meters = [{ kind = "policer", rate = "2Mbps", depth = "25KB" }]"#;
    let with = |m: &str| BASE.replace(meters, m);
    bad(
        &with(r#"meters = [{ kind = "policer", rate = "2Mbps" }]"#),
        "meters = [",
        "links.r0-r1.meters.0.depth",
        "missing",
    );
    bad(
        &with(r#"meters = [{ kind = "token_bucket", rate = "2", depth = "25KB" }]"#),
        "meters = [",
        "links.r0-r1.meters.0.rate",
        "no unit",
    );
    bad(
        &with(r#"meters = [{ kind = "tsw", target = "1Mbps", rule = "over_the_top" }]"#),
        "meters = [",
        "links.r0-r1.meters.0.rule",
        "over_target",
    );
    bad(
        &with(r#"meters = [{ kind = "tsw", target = "1Mbps", win = "0s" }]"#),
        "meters = [",
        "links.r0-r1.meters.0.win",
        "positive",
    );
    bad(
        &with(r#"meters = [{ kind = "tsw", traget = "1Mbps" }]"#),
        "meters = [",
        "links.r0-r1.meters.0.traget",
        "did you mean \"target\"",
    );
    bad(
        &with(r#"meters = [{ kind = "marker", rate = "1Mbps" }]"#),
        "meters = [",
        "links.r0-r1.meters.0.kind",
        "use policer, token_bucket or tsw",
    );
    bad(
        &with(r#"meters = { kind = "policer", rate = "2Mbps", depth = "25KB" }"#),
        "meters = {",
        "links.r0-r1.meters",
        "expected an array of tables",
    );
    let profile = r#"profile = { kind = "token_bucket", rate = "1Mbps", depth = "20KB" }"#;
    bad(
        &BASE.replace(
            profile,
            r#"profile = { kind = "policer", rate = "1Mbps", depth = "20KB" }"#,
        ),
        "profile = {",
        "traffic.0.profile.kind",
        "a policer cannot be a host profile",
    );
    bad(
        &BASE.replace(
            profile,
            r#"profile = { kind = "token_bucket", rate = "1Mbps", depth = "0B" }"#,
        ),
        "profile = {",
        "traffic.0.profile.depth",
        "at least one byte",
    );
    // No profile on flows created by call arrivals.
    let calls = BASE.replace(
        "[[metric]]",
        "[traffic.calls]\nrate = \"1/s\"\nholding = \"exp:1s\"\n[[metric]]",
    );
    bad(
        &calls,
        "profile = { kind = \"tsw\"",
        "traffic.1.profile",
        "not to flows created by `calls`",
    );
}

#[test]
fn tcp_keys_are_validated() {
    let tcp = |extra: &str| BASE.replace("wnd = 64", &format!("wnd = 64\n{extra}"));
    bad(
        &BASE.replace("packet_size = \"576B\"", "packet_size = \"40B\""),
        "packet_size = \"40B\"",
        "traffic.0.packet_size",
        "must be between 41B and 65535B, got 40B",
    );
    bad(
        &tcp("delayed_ack = 1"),
        "delayed_ack",
        "traffic.0.delayed_ack",
        "true or false",
    );
    bad(
        &tcp("min_rto = \"0s\""),
        "min_rto",
        "traffic.0.min_rto",
        "positive",
    );
    bad(
        &tcp("init_rto = \"3\""),
        "init_rto",
        "traffic.0.init_rto",
        "no unit",
    );
    bad(&tcp("tick = \"0ms\""), "tick", "traffic.0.tick", "positive");
    bad(
        &BASE.replace("start_spread = \"1s\"", "start_spread = \"-1s\""),
        "start_spread",
        "traffic.0.start_spread",
        "negative",
    );
    bad(
        &tcp("interval = \"1ms\""),
        "interval = \"1ms\"",
        "traffic.0.interval",
        "not used by model \"tcp\"",
    );
    bad(
        &tcp("stop = \"2s\""),
        "stop =",
        "traffic.0.stop",
        "not used by model \"tcp\"",
    );
    bad(
        &BASE.replace("wnd = 64", "wnd = 0"),
        "wnd = 0",
        "traffic.0.wnd",
        "must be between 1 and 4294967295, got 0",
    );
    bad(
        &BASE.replace("interval = \"1ms\"", "interval = \"1ms\"\nwnd = 5"),
        "wnd = 5",
        "traffic.1.wnd",
        "only used by model \"tcp\"",
    );
    bad(
        &BASE.replace(
            "[[traffic]]\nname = \"udp\"",
            "[traffic.calls]\nrate = \"1/s\"\nholding = \"exp:1s\"\n[[traffic]]\nname = \"udp\"",
        ),
        "[traffic.calls]",
        "traffic.0.calls",
        "no call arrivals",
    );
}

#[test]
fn topologies_and_metrics_are_validated() {
    bad(
        &BASE.replace("access_delay = \"1ms\"", "access_delays = [\"1ms\"]"),
        "access_delays",
        "topology.access_delays",
        "has 1 entries but there are 2 hosts",
    );
    bad(
        &BASE.replace("access_delay = \"1ms\"", "access_delays = [\"1ms\", 5]"),
        "access_delays",
        "topology.access_delays",
        "expected times",
    );
    bad(
        &BASE.replace("access_delay = \"1ms\"", "access_delays = [\"1ms\", \"5\"]"),
        "access_delays",
        "topology.access_delays",
        "no unit",
    );
    bad(
        &BASE.replace("which = \"in\"", "which = \"out\""),
        "which = ",
        "metric.0.which",
        "use \"total\" or \"in\"",
    );
    let red = BASE.replace(
        r#"queue = { kind = "rio", params = "20/40/0.05 30/40/0.02", limit = "60p", mean_pkt_size = "576B" }"#,
        r#"queue = { kind = "red", min_th = 5, max_th = 15, max_p = 0.1 }"#,
    );
    bad(
        &red,
        "link = \"r0-r1\"",
        "metric.0.link",
        "needs a rio queue",
    );
    bad(
        &BASE.replace("link = \"r0-r1\"", "link = \"s0-r0\""),
        "link = \"s0-r0\"",
        "metric.0.link",
        "has a droptail queue",
    );
    // Merging: defaults are the study's, rates and delays can be changed.
    let merging = r#"
[run]
duration = "1s"
[topology]
kind = "merging"
core_rate = "20Mbps"
bottleneck_delay = "5ms"
hosts = 3
"#;
    bad(merging, "hosts = 3", "topology.hosts", "unknown key");
    let sc = parse(&merging.replace("hosts = 3\n", "")).unwrap();
    let t = &sc.topology;
    assert_eq!(t.nodes.len(), 24);
    let link = |n: &str| &t.links[t.link(n).unwrap_or_else(|| panic!("{n}"))];
    assert_eq!(
        (link("h0-r0").rate, link("h0-r0").delay),
        (100_000_000, PS_PER_MS)
    );
    assert_eq!(link("h3-r1").rate, 100_000_000);
    assert_eq!(
        (link("r1-r4").rate, link("r1-r4").delay),
        (10_000_000, 3 * PS_PER_MS)
    );
    assert_eq!(link("r3-r5").delay, 3 * PS_PER_MS);
    assert_eq!(
        (link("r5-r6").rate, link("r5-r6").delay),
        (20_000_000, 3 * PS_PER_MS)
    );
    assert_eq!(
        (link("r6-r7").rate, link("r6-r7").delay),
        (1_544_000, 5 * PS_PER_MS)
    );
    assert_eq!(link("r7-h15").rate, 100_000_000);
    assert!(t.link("r0-r5").is_none() && t.link("r2-r4").is_none());
    // Dumbbell: one delay per host, on both of its access links.
    let sc = parse(&BASE.replace(
        "access_delay = \"1ms\"",
        "access_delays = [\"12ms\", \"37ms\"]",
    ))
    .unwrap();
    let t = &sc.topology;
    for (name, ms) in [
        ("s0-r0", 12),
        ("r0-s0", 12),
        ("r1-d0", 12),
        ("d1-r1", 37),
        ("s1-r0", 37),
    ] {
        assert_eq!(
            t.links[t.link(name).unwrap()].delay,
            ms * PS_PER_MS,
            "{name}"
        );
    }
}

fn single_tcp(wnd: u32) -> String {
    format!(
        r#"
[run]
duration = "25s"
warmup = "5s"
[topology]
kind = "dumbbell"
hosts = 1
access_rate = "100Mbps"
access_delay = "1ms"
bottleneck_rate = "10Mbps"
bottleneck_delay = "20ms"
[[traffic]]
name = "ftp"
from = "s0"
to = "d0"
model = "tcp"
packet_size = "576B"
wnd = {wnd}
"#
    )
}

/// A lossless path: goodput is min(wnd x payload / RTT, C x payload / size).
///
/// Window-limited (wnd = 20): the ACK clock makes the sender periodic with period RTT
/// (20 segments take 9.2 ms of the 44.6 ms RTT at the bottleneck, so no queue builds),
/// exactly `wnd` segments per period: over D = 20 s the count is within `wnd` segments
/// of `wnd D / RTT`, tolerance `(wnd + 1) payload 8 / D`. Link-limited (wnd = 200 >
/// BDP = 97 segments; the queue holds at most 103 < 1000 packets, no loss): the
/// bottleneck sends back to back, one segment per `size 8 / C`, tolerance
/// `2 payload 8 / D`.
#[test]
fn tcp_reaches_window_or_link_rate() {
    let (size, payload, d) = (576u32, 536.0, 20.0);
    let rtt = 2 * 22 * PS_PER_MS
        + 2 * tx_time(size, 100_000_000)
        + tx_time(size, 10_000_000)
        + 2 * tx_time(40, 100_000_000)
        + tx_time(40, 10_000_000);
    let rtt = rtt as f64 / PS_PER_S as f64;
    let out = run(&single_tcp(20), 1);
    let got = num(&out, "agent.tcp.ftp.0.rx.goodput_bps");
    let expect = 20.0 * payload * 8.0 / rtt;
    let tol = 21.0 * payload * 8.0 / d;
    assert!(
        (got - expect).abs() <= tol,
        "window-limited {got} vs {expect} ± {tol}"
    );
    assert_eq!(num(&out, "agent.tcp.ftp.0.retransmits"), 0.0);

    let out = run(&single_tcp(200), 1);
    let got = num(&out, "agent.tcp.ftp.0.rx.goodput_bps");
    let expect = 10e6 * payload / size as f64;
    let tol = 2.0 * payload * 8.0 / d;
    assert!(
        (got - expect).abs() <= tol,
        "link-limited {got} vs {expect} ± {tol}"
    );
    assert_eq!(num(&out, "agent.tcp.ftp.0.retransmits"), 0.0);
    assert!(num(&out, "link.r0-r1.queue_max_pkts") < 1000.0);
}

/// Connections start uniformly in [start, start + spread], each from its own stream.
#[test]
fn tcp_connections_start_in_the_spread() {
    let text = BASE.replace(
        "start_spread = \"1s\"",
        "start = \"0.5s\"\nstart_spread = \"1s\"",
    );
    let sc = parse(&text).unwrap();
    let mut w = scenario::build(&sc, 3).unwrap();
    w.run_until(PS_PER_S / 2);
    let sent = |w: &mut qossim::World, i: usize| w.flows.recs[i].sent_pkts;
    assert!((0..3).all(|i| sent(&mut w, i) == 0), "nothing before start");
    let starts: Vec<u64> = (0..3).map(|i| w.flows.recs[i].start).collect();
    for s in &starts {
        assert!((PS_PER_S / 2..=3 * PS_PER_S / 2).contains(s), "{s}");
    }
    assert!(starts[0] != starts[1] && starts[1] != starts[2]);
    w.run_until(2 * PS_PER_S);
    assert!((0..3).all(|i| sent(&mut w, i) > 0));
}

/// A token-bucket profile (r, b) on a CBR entry sending at 2r: the IN bytes over the run
/// T never exceed r T + b (exact integer bucket), and fall short of it by less than the
/// tokens that can be wasted or left over: those accrued before the first packet (at most
/// one spacing s), one packet, and one spacing of accrual: r T + b - size - 2 r s.
/// The profile meters its entry only: the unprofiled entry on the same access link
/// reaches the RIO queue as OUT, so the queue's IN arrivals are the profile's.
#[test]
fn token_bucket_profile_bounds_in_bytes() {
    let text = r#"
[run]
duration = "10s"
[topology]
kind = "dumbbell"
hosts = 1
access_rate = "100Mbps"
bottleneck_rate = "100Mbps"
[links."r0-r1"]
queue = { kind = "rio", params = "200/400/0.05 300/400/0.02" }
[[traffic]]
name = "v"
from = "s0"
to = "d0"
model = "cbr"
size = "500B"
interval = "2ms"
profile = { kind = "token_bucket", rate = "1Mbps", depth = "5KB" }
[[traffic]]
name = "other"
from = "s0"
to = "d0"
model = "cbr"
size = "500B"
interval = "1ms"
"#;
    let out = run(text, 4);
    let (r, b, size, s, t) = (1e6 / 8.0, 5000.0, 500.0, 0.002, 10.0);
    let in_bytes = num(&out, "link.s0-r0.profile.v.in_pkts") * size;
    let out_pkts = num(&out, "link.s0-r0.profile.v.out_pkts");
    assert!(in_bytes <= r * t + b, "{in_bytes} > {}", r * t + b);
    assert!(in_bytes >= r * t + b - size - 2.0 * r * s, "{in_bytes}");
    assert_eq!(num(&out, "group.v.in_sent_pkts"), in_bytes / size);
    assert_eq!(
        num(&out, "group.v.sent_pkts_measured"),
        in_bytes / size + out_pkts
    );
    assert_eq!(num(&out, "link.r0-r1.rio_arrivals_in"), in_bytes / size);
    assert!(out.summary.get("group.other.in_sent_pkts").is_none());
}

/// An all-IN CBR entry at R = 4 Mb/s through a policer (r = 1 Mb/s, depth d): the IN
/// packets kept take at most r T + d bytes and at least r T + d - size - 2 r s (as for
/// the profile above), the rest are demoted. The figures reported per link, per group and
/// as a percentage agree.
#[test]
fn policer_demotes_the_excess() {
    let text = r#"
[run]
duration = "20s"
[topology]
kind = "dumbbell"
hosts = 1
access_rate = "100Mbps"
bottleneck_rate = "100Mbps"
[links."r0-r1"]
meters = [{ kind = "policer", rate = "1Mbps", depth = "10KB" }]
[[traffic]]
name = "v"
from = "s0"
to = "d0"
model = "cbr"
size = "1000B"
interval = "2ms"
profile = { kind = "token_bucket", rate = "10Mbps", depth = "2KB" }
"#;
    let out = run(text, 5);
    let (r, d, size, s, t) = (1e6 / 8.0, 10_000.0, 1000.0, 0.002, 20.0);
    let sent = num(&out, "group.v.in_sent_pkts");
    assert_eq!(sent, num(&out, "group.v.sent_pkts_measured"), "all IN");
    let seen = num(&out, "link.r0-r1.group.v.policed_in");
    let demoted = num(&out, "link.r0-r1.group.v.demoted");
    // Packets still in flight at the end have been sent but not policed: at most 1.
    assert!(sent - seen <= 1.0, "{sent} {seen}");
    let kept = (seen - demoted) * size;
    assert!(
        kept <= r * t + d && kept >= r * t + d - size - 2.0 * r * s,
        "{kept}"
    );
    assert_eq!(num(&out, "group.v.demoted_pkts"), demoted);
    let pct = num(&out, "group.v.in_demoted_pct");
    assert!((pct - 100.0 * demoted / sent).abs() < 1e-9);
    // About 1 - r/R = 75% of the packets.
    assert!((pct - 75.0).abs() < 1.0, "{pct}");
    assert_eq!(num(&out, "link.r0-r1.policer_demoted_pkts"), demoted);
}

/// RIO's average queues are sampled every interval, never above the physical limit and,
/// under congestion from 30 TCP connections, well above zero; per-connection demotion
/// and drop counts are reported and consistent with the link's counters.
#[test]
fn rio_queue_average_series_and_drop_split() {
    let text = r#"
[run]
duration = "20s"
warmup = "5s"
[topology]
kind = "dumbbell"
hosts = 2
access_rate = "100Mbps"
access_delay = "5ms"
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
[links."r0-r1"]
queue = { kind = "rio", params = "20/40/0.05 30/50/0.02", limit = "60p", mean_pkt_size = "576B" }
meters = [{ kind = "policer", rate = "4Mbps", depth = "10KB" }]
[[traffic]]
name = "as"
from = "s0"
to = "d0"
model = "tcp"
flows = 15
start_spread = "1s"
profile = { kind = "token_bucket", rate = "400kbps", depth = "5KB" }
[[traffic]]
name = "be"
from = "s1"
to = "d1"
model = "tcp"
flows = 15
start_spread = "1s"
[[metric]]
kind = "queue_average"
link = "r0-r1"
interval = "100ms"
[[metric]]
kind = "queue_average"
link = "r0-r1"
which = "in"
interval = "100ms"
"#;
    let out = run(text, 6);
    for name in ["r0-r1.queue_avg", "r0-r1.queue_avg_in"] {
        let s = out.series.iter().find(|s| s.name == name).expect(name);
        assert_eq!(s.unit, "packets");
        assert_eq!(s.t.len(), 200, "{name}");
        assert!((s.t[0] - 0.1).abs() < 1e-12 && (s.t[199] - 20.0).abs() < 1e-9);
        assert!(s.v.iter().all(|&v| (0.0..=60.0).contains(&v)), "{name}");
    }
    let total = num(&out, "series.r0-r1.queue_avg.mean");
    let avg_in = num(&out, "series.r0-r1.queue_avg_in.mean");
    assert!(total > 10.0 && total <= 60.0, "{total}");
    assert!(avg_in > 0.0 && avg_in < total, "{avg_in} {total}");
    // Drop split: the groups' counts (after warm-up) add up to at most the link's (whole
    // run); BE packets are never IN.
    let g = |grp: &str, k: &str| num(&out, &format!("link.r0-r1.group.{grp}.{k}"));
    assert_eq!(g("be", "in_early") + g("be", "in_overflow"), 0.0);
    assert!(g("be", "out") > 0.0);
    let split: f64 = ["as", "be"]
        .iter()
        .map(|x| g(x, "in_early") + g(x, "in_overflow") + g(x, "out"))
        .sum();
    assert!(split > 0.0 && split <= num(&out, "link.r0-r1.drops"));
    // Per connection: the 15 AS connections' counts add up to the group's.
    let per = |k: &str| -> f64 {
        (0..15)
            .map(|i| num(&out, &format!("agent.tcp.as.{i}.{k}")))
            .sum()
    };
    assert_eq!(per("drops_out"), num(&out, "group.as.drops_out"));
    assert_eq!(per("demoted_pkts"), num(&out, "group.as.demoted_pkts"));
    assert_eq!(
        per("in_segments_measured"),
        num(&out, "group.as.in_sent_pkts")
    );
    for i in 0..15 {
        let p = num(&out, &format!("agent.tcp.as.{i}.in_demoted_pct"));
        assert!((0.0..=100.0).contains(&p));
    }
    assert!(out.summary.get("agent.tcp.be.0.in_demoted_pct").is_none());
    // Goodput per connection after warm-up: the connections share the bottleneck's
    // payload rate, plus at most what was in flight at the end of the warm-up (queue limit
    // 60 + BDP 10 Mb/s x 40 ms / 576 B = 87 packets) and is delivered in order after it.
    let sum: f64 = ["as", "be"]
        .iter()
        .flat_map(|g| (0..15).map(move |i| format!("agent.tcp.{g}.{i}.rx.goodput_bps")))
        .map(|k| num(&out, &k))
        .sum();
    let capacity = 10e6 * 536.0 / 576.0;
    let slack = (60.0 + 87.0) * 536.0 * 8.0 / 15.0;
    assert!(sum > 0.85 * capacity && sum <= capacity + slack, "{sum}");
}

/// The merging topology with the study's policers runs, and every IN packet of a
/// connection is policed first at its edge router.
#[test]
fn merging_scenario_runs() {
    let mut text = String::from(
        r#"
[run]
duration = "20s"
warmup = "5s"
[topology]
kind = "merging"
[links."r6-r7"]
queue = { kind = "rio", params = "4/18/0.05 5/18/0.02", limit = "24p", mean_pkt_size = "1500B" }
meters = [{ kind = "policer", rate = "800kbps", depth = "9000B" }]
"#,
    );
    for (l, r) in [
        ("r0-r4", 200),
        ("r1-r4", 200),
        ("r2-r5", 200),
        ("r3-r5", 200),
        ("r4-r6", 400),
        ("r5-r6", 400),
    ] {
        text += &format!(
            "[links.\"{l}\"]\nmeters = [{{ kind = \"policer\", rate = \"{r}kbps\", depth = \"9000B\" }}]\n"
        );
    }
    for i in 0..8 {
        text += &format!(
            "[[traffic]]\nname = \"c{i}\"\nfrom = \"h{i}\"\nto = \"h{}\"\nmodel = \"tcp\"\npacket_size = \"1500B\"\nstart_spread = \"1s\"\nprofile = {{ kind = \"token_bucket\", rate = \"100kbps\", depth = \"6000B\" }}\n",
            i + 8
        );
    }
    let out = run(&text, 7);
    let mut total = 0.0;
    for i in 0..8 {
        let edge = [
            "r0-r4", "r0-r4", "r1-r4", "r1-r4", "r2-r5", "r2-r5", "r3-r5", "r3-r5",
        ][i];
        let seen = num(&out, &format!("link.{edge}.group.c{i}.policed_in"));
        let sent = num(&out, &format!("agent.tcp.c{i}.0.in_segments_measured"));
        // Segments sent in the last few milliseconds may not have reached the policer.
        assert!(
            sent - seen >= 0.0 && sent - seen <= 5.0,
            "c{i}: {sent} {seen}"
        );
        total += num(&out, &format!("agent.tcp.c{i}.0.rx.goodput_bps"));
    }
    // As above: at most the payload rate plus the data in flight at the end of the warm-up
    // (24 queued + 4 on the wire at 1.544 Mb/s x 30 ms) over the 15 s measured.
    let capacity = 1.544e6 * 1460.0 / 1500.0;
    let slack = 28.0 * 1460.0 * 8.0 / 15.0;
    assert!(
        total > 0.8 * capacity && total <= capacity + slack,
        "{total}"
    );
}
