//! The RPR ring end to end: long-term fairness of greedy stations, no throttling below
//! capacity, the allowed-rate limit, lossless client buffers for TCP, span capacity, and
//! the `[rpr]` section's diagnostics.

mod common;
use common::{accepted_keys, described_keys};
use qossim::scenario::RunOutput;
use serde_json::{Map, Value};
use std::path::Path;

fn run(text: &str) -> RunOutput {
    let sc = match qossim::parse(text, "s.toml", Path::new("."), &[]) {
        Ok(s) => s,
        Err(d) => panic!(
            "unexpected diagnostics:\n{}",
            d.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    qossim::run(&sc, None, &mut |_| true).expect("run")
}

fn num(m: &Map<String, Value>, k: &str) -> f64 {
    m.get(k)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("missing summary key {k}"))
}

/// Greedy UDP (CBR at line rate) from stations 0..senders to the last station.
fn greedy_udp(mode: &str, design: &str, senders: usize, rate_frac: f64, secs: f64) -> String {
    let interval_us = 1500.0 * 8.0 / (622e6 * rate_frac) * 1e6;
    let mut s = format!(
        r#"
[run]
duration = "{secs}s"
warmup = "0.2s"
[topology]
kind = "rpr_ring"
[rpr]
mode = "{mode}"
design = "{design}"
client_buffer = 2000
"#
    );
    for i in 0..senders {
        s += &format!(
            "[[traffic]]\nname = \"u{i}\"\nfrom = \"S{i}\"\nto = \"S5\"\nmodel = \"cbr\"\nsize = \"1500B\"\ninterval = \"{interval_us}us\"\n"
        );
    }
    s
}

fn default_scenario(mode: &str, design: &str, udp_mbps: f64, secs: f64) -> String {
    let interval_us = 1500.0 * 8.0 / (udp_mbps * 1e6) * 1e6;
    let mut s = format!(
        r#"
[run]
duration = "{secs}s"
warmup = "0.5s"
[topology]
kind = "rpr_ring"
[rpr]
mode = "{mode}"
design = "{design}"
watch = ["tcp0", "udp"]
trace_tcp = "tcp0"
[[traffic]]
name = "udp"
from = "S4"
to = "S5"
model = "cbr"
size = "1500B"
interval = "{interval_us}us"
"#
    );
    for i in 0..5 {
        s += &format!(
            "[[traffic]]\nname = \"tcp{i}\"\nfrom = \"S{i}\"\nto = \"S5\"\nmodel = \"tcp\"\nflows = 10\npacket_size = \"1500B\"\nwnd = 64\nstart_spread = \"10ms\"\n"
        );
    }
    s
}

const LINE: f64 = 622e6;

fn series<'a>(out: &'a RunOutput, name: &str) -> &'a qossim::metrics::Series {
    out.series
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("missing series {name}"))
}

const DESIGNS: [(&str, &str); 3] = [
    ("aggressive", "dual"),
    ("conservative", "single"),
    ("conservative", "dual"),
];

#[test]
fn greedy_stations_share_the_congested_span_equally_in_both_modes() {
    for (mode, design) in DESIGNS {
        let out = run(&greedy_udp(mode, design, 5, 1.0, 1.2));
        let m = &out.summary;
        for i in 0..5 {
            let got = num(m, &format!("rpr.station.{i}.throughput_bps"));
            let want = LINE / 5.0;
            assert!(
                (got - want).abs() <= 0.02 * want,
                "{mode}/{design}: station {i} got {got} b/s, fair share {want}"
            );
        }
        // The span is full: the fairness costs no capacity in the long term.
        let util = num(m, "link.S4-S5.utilization");
        assert!(util > 0.99, "{mode}/{design}: utilization {util}");
    }
}

#[test]
fn a_span_never_carries_more_than_its_rate() {
    for (mode, design) in DESIGNS {
        let mut text = greedy_udp(mode, design, 5, 1.0, 0.6);
        text += "[[metric]]\nkind = \"link_throughput\"\nlink = \"S4-S5\"\ninterval = \"1ms\"\n";
        let out = run(&text);
        let m = &out.summary;
        // The station hands its span one frame at a time: the link never queues.
        for i in 0..6 {
            let l = format!("link.S{i}-S{}.", (i + 1) % 6);
            assert_eq!(num(m, &(l.clone() + "queue_max_pkts")), 0.0, "{l}");
            assert_eq!(num(m, &(l + "drops")), 0.0);
        }
        // Bits started in any 1-ms interval: at most the frames that fit, plus the one
        // that may start at the interval's last instant.
        let s = series(&out, "S4-S5.throughput");
        let cap = LINE * 1e-3 + 1500.0 * 8.0;
        for (t, v) in s.t.iter().zip(&s.v) {
            assert!(
                v * 1e-3 <= cap,
                "{mode}/{design}: {v} b/s in the ms ending at {t}"
            );
        }
        assert!(s.v.iter().cloned().fold(0.0, f64::max) * 1e-3 > LINE * 1e-3 - 1500.0 * 8.0);
    }
}

#[test]
fn a_station_never_adds_faster_than_its_allowed_rate() {
    for (mode, design) in DESIGNS {
        let out = run(&greedy_udp(mode, design, 5, 1.0, 0.6));
        let mut limited_ms = 0;
        // Stations 0..3 send only across the congested span S4-S5.
        for i in 0..4 {
            let add = series(&out, &format!("rpr.S{i}.add_bps"));
            let allowed = series(&out, &format!("rpr.S{i}.allowed_max_bps"));
            for k in 0..add.v.len() {
                // In a 1-ms interval: the allowed rate at its highest over the interval,
                // plus the add shaper's credit at the interval's start (at most its limit,
                // one 1500-byte frame by default), plus the frame that may start on a
                // credit just short of its size.
                let bound = allowed.v[k] * 1e-3 + 2.0 * 1500.0 * 8.0;
                assert!(
                    add.v[k] * 1e-3 <= bound,
                    "{mode}/{design}: station {i} added {} b/s at {} with allowed {}",
                    add.v[k],
                    add.t[k],
                    allowed.v[k]
                );
                limited_ms += usize::from(allowed.v[k] < 0.5 * LINE);
            }
        }
        assert!(
            limited_ms > 1000,
            "{mode}/{design}: the limit was never active"
        );
    }
}

#[test]
fn below_capacity_nothing_is_throttled_and_the_allowed_rate_returns_to_line_rate() {
    for (mode, design) in DESIGNS {
        // 0–0.3 s: every station greedy (the span is congested and stations are limited);
        // afterwards each station offers 15% of the line rate, 75% in all.
        let mut text = greedy_udp(mode, design, 5, 1.0, 1.6).replace("0.2s", "1.1s");
        text = text.replace("model = \"cbr\"", "model = \"cbr\"\nstop = \"0.3s\"");
        let low = 1500.0 * 8.0 / (0.15 * LINE) * 1e6;
        for i in 0..5 {
            text += &format!(
                "[[traffic]]\nname = \"low{i}\"\nfrom = \"S{i}\"\nto = \"S5\"\nmodel = \"cbr\"\nsize = \"1500B\"\ninterval = \"{low}us\"\n"
            );
        }
        let out = run(&text);
        let m = &out.summary;
        for i in 0..5 {
            let allowed = series(&out, &format!("rpr.S{i}.allowed_bps"));
            let during: f64 = allowed
                .t
                .iter()
                .zip(&allowed.v)
                .filter(|(t, _)| **t > 0.1 && **t <= 0.3)
                .map(|(_, v)| *v)
                .fold(f64::INFINITY, f64::min);
            if i < 4 {
                assert!(during < 0.5 * LINE, "{mode}/{design}: S{i} never limited");
            }
            assert_eq!(*allowed.v.last().unwrap(), LINE, "{mode}/{design}: S{i}");
            // Measured after 1.1 s: everything offered is delivered (the client buffer
            // had drained), within the two frames the window's ends can cut.
            let got = num(m, &format!("group.low{i}.throughput_bps"));
            let want = 0.15 * LINE;
            let tol = 2.0 * 1500.0 * 8.0 / 0.5;
            assert!(
                (got - want).abs() <= tol,
                "{mode}/{design}: low{i} {got} vs {want}"
            );
            // No station was congested in the measured window.
            let c = num(m, &format!("agent.rpr.S{i}.congested_fraction"));
            assert_eq!(c, 0.0, "{mode}/{design}: S{i}");
        }
    }
}

#[test]
fn tcp_waits_in_the_client_buffer_and_is_never_dropped_by_the_mac() {
    for ((mode, design), r) in DESIGNS.iter().flat_map(|d| [(*d, 1.0), (*d, 100.0)]) {
        let out = run(&default_scenario(mode, design, r, 1.5));
        let m = &out.summary;
        for i in 0..6 {
            let p = format!("rpr.station.{i}.");
            assert_eq!(
                num(m, &(p.clone() + "client_drops")),
                0.0,
                "{mode}/{design}"
            );
            assert_eq!(num(m, &(p + "stq_drops")), 0.0);
        }
        for (k, v) in m {
            if k.starts_with("link.") && k.ends_with(".drops") {
                assert_eq!(v.as_f64(), Some(0.0), "{k}");
            }
            if k.starts_with("agent.tcp.") && k.ends_with(".retransmits") {
                assert_eq!(v.as_f64(), Some(0.0), "{mode}/{design}: {k}");
            }
        }
        // The windows wait in the client buffers: 10 connections x 64 segments at
        // stations 0..3, never more.
        for i in 0..4 {
            let c = num(m, &format!("rpr.station.{i}.client_max_pkts"));
            assert!(
                c > 100.0 && c <= 640.0,
                "{mode}/{design}: S{i} client max {c}"
            );
        }
        let j = num(m, "rpr.jain_index");
        assert!(j > 0.99, "{mode}/{design}: Jain {j}");
    }
    // A client buffer smaller than the windows does drop (at the client, not in transit).
    let small = default_scenario("aggressive", "dual", 100.0, 1.0).replace(
        "trace_tcp = \"tcp0\"",
        "trace_tcp = \"tcp0\"\nclient_buffer = 200",
    );
    let out = run(&small);
    assert!(num(&out.summary, "rpr.station.0.client_drops") > 0.0);
    assert_eq!(num(&out.summary, "rpr.station.0.stq_drops"), 0.0);
}

#[test]
fn same_scenario_and_seed_give_identical_outputs() {
    let text = default_scenario("aggressive", "dual", 200.0, 0.8);
    let a = run(&text);
    let b = run(&text);
    let strip = |m: &Map<String, Value>| {
        m.iter()
            .filter(|(k, _)| !k.contains("wall"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&a.summary), strip(&b.summary));
    assert_eq!(a.events, b.events);
    let sa = series(&a, "rpr.S3.stq_bytes");
    let sb = series(&b, "rpr.S3.stq_bytes");
    assert_eq!(sa.v, sb.v);
}

fn diagnostics(text: &str) -> Vec<String> {
    qossim::parse(text, "s.toml", Path::new("."), &[])
        .expect_err("should be invalid")
        .iter()
        .map(|d| d.to_string())
        .collect()
}

#[test]
fn bad_rpr_sections_get_one_clear_error_each() {
    let base = "[run]\nduration = \"1s\"\n[topology]\nkind = \"rpr_ring\"\n[rpr]\n";
    let d = diagnostics(&format!("{base}mode = \"eager\"\n"));
    assert_eq!(
        d,
        vec!["s.toml:6: rpr.mode: unknown mode \"eager\"; use \"aggressive\" or \"conservative\""]
    );
    let d = diagnostics(&format!("{base}age_coef = 0.5\nstq_lo = 0.1\n"));
    assert_eq!(d.len(), 2, "{d:?}");
    assert_eq!(d[0], "s.toml:6: rpr.age_coef: must be at least 1, got 0.5");
    assert!(
        d[1].starts_with("s.toml:7: rpr.stq_lo: unknown key (did you mean \"stq_low\"?)"),
        "{}",
        d[1]
    );
    let d = diagnostics(&format!("{base}stq_low = 0.3\n"));
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].contains("low <= medium <= high"), "{}", d[0]);
    let d = diagnostics(&format!("{base}watch = [\"nope\"]\n"));
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].starts_with("s.toml:6: rpr.watch: no traffic entry \"nope\""),
        "{}",
        d[0]
    );
    let d = diagnostics(
        "[run]\nduration = \"1s\"\n[topology]\nkind = \"pcn_single\"\nrate = \"10Mbps\"\n[rpr]\nmode = \"aggressive\"\n",
    );
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].contains("rpr_ring"), "{}", d[0]);
}

#[test]
fn the_conservative_head_changes_its_rate_at_most_once_per_fairness_round_trip() {
    for design in ["single", "dual"] {
        // Longer spans make the round trip (and the waiting) span many 1-ms samples.
        let text = greedy_udp("conservative", design, 5, 1.0, 1.0).replace(
            "kind = \"rpr_ring\"",
            "kind = \"rpr_ring\"\ndelay = \"2ms\"",
        );
        let out = run(&text);
        let frtt = num(&out.summary, "rpr.station.4.frtt_s");
        // Six 2-ms spans of the control ringlet at least.
        assert!(frtt >= 0.012, "{design}: measured round trip {frtt}");
        let fair = series(&out, "rpr.S4.fair_rate_bps");
        let mut changes = Vec::new();
        for k in 1..fair.v.len() {
            if fair.v[k] != fair.v[k - 1] && fair.t[k] > 0.2 {
                changes.push(fair.t[k]);
            }
        }
        assert!(
            changes.len() > 5,
            "{design}: the head never adjusted its rate"
        );
        // A change seen in the sample at t happened in (t − 1 ms, t].
        for w in changes.windows(2) {
            assert!(
                w[1] - w[0] > frtt - 1e-3 - 1e-9,
                "{design}: changes at {} and {} s, round trip {frtt}",
                w[0],
                w[1]
            );
        }
    }
}

#[test]
fn describe_lists_every_key_the_rpr_reader_accepts() {
    let text = default_scenario("aggressive", "dual", 200.0, 0.8)
        .replace("[rpr]\n", "[rpr]\nzz_unknown = 1\n");
    assert_eq!(accepted_keys(&text, "rpr"), described_keys("rpr"));
    // watch is a list of strings: an item of another type is reported at its line.
    let d = diagnostics(
        "[run]\nduration = \"1s\"\n[topology]\nkind = \"rpr_ring\"\n[rpr]\nwatch = [\n  \"a\",\n  3,\n]\n",
    );
    assert_eq!(
        d,
        vec!["s.toml:8: rpr.watch: expected a string, found integer"]
    );
}
