//! Endpoint admission end to end: on a lightly loaded link every flow is admitted and
//! nothing is lost (every algorithm and design); out-of-band push-out only ever removes
//! probes; marking never drops what the real queue can hold; the probing designs and
//! Measured Sum hold the loss down under overload where no admission control does not;
//! and the `[endpoint]` section's diagnostics.

mod common;

use common::{accepted_keys, described_keys, run};
use serde_json::{Map, Value};
use std::path::Path;

fn num(m: &Map<String, Value>, k: &str) -> f64 {
    m.get(k)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("missing summary key {k}"))
}

/// The study's single bottleneck: 10 Mb/s, 20 ms, 200 packets; EXP1 flows (256 kb/s
/// peak, exponential 500 ms on and off, 125-byte packets) arriving every `tau` seconds
/// on average and holding 300 s. `design` is "in_band" or "out_of_band"; `admission`
/// the `[endpoint]` entries (empty: none).
fn scenario(tau: f64, design: &str, admission: &str, secs: f64, warmup: f64) -> String {
    let queue = match design {
        "in_band" => "{ kind = \"droptail\", limit = \"200p\" }",
        _ => "{ kind = \"priority\", classes = 2, limit = \"200p\", push_out = true }",
    };
    let class = if design == "in_band" { 0 } else { 1 };
    format!(
        r#"[run]
duration = "{secs}s"
warmup = "{warmup}s"
[topology]
kind = "graph"
nodes = ["src", "r", "dst"]
rate = "1Gbps"
delay = "0.1ms"
[[topology.link]]
from = "src"
to = "r"
[[topology.link]]
from = "r"
to = "dst"
rate = "10Mbps"
delay = "20ms"
queue = {queue}
[[traffic]]
name = "ac"
from = "src"
to = "dst"
model = "onoff"
size = "125B"
interval = "3.90625ms"
on = "exp:500ms"
off = "exp:500ms"
class = {class}
per_flow = false
[traffic.calls]
rate = "{rate}/s"
holding = "exp:300s"
{admission}"#,
        rate = 1.0 / tau
    )
}

fn probe(algorithm: &str, eps: f64, class: u8, marking: bool) -> String {
    let mut s = format!(
        "[endpoint]\n[[endpoint.probe]]\ntraffic = \"ac\"\nalgorithm = \"{algorithm}\"\nepsilon = {eps}\nclass = {class}\n"
    );
    if marking {
        s += "[[endpoint.virtual_queue]]\nlink = \"r-dst\"\nfraction = 0.9\n";
    }
    s
}

#[test]
fn light_load_admits_everyone_and_loses_nothing() {
    for design in ["in_band", "out_of_band"] {
        for marking in [false, true] {
            for alg in ["simple", "early_reject", "slow_start"] {
                // Probes in class 0: with data's in-band, one class below it out-of-band.
                let text = scenario(60.0, design, &probe(alg, 0.0, 0, marking), 1500.0, 300.0);
                let out = run(&text, 1);
                let s = &out.summary;
                let what = format!("{design} marking={marking} {alg}");
                assert!(num(s, "endpoint.ac.offered_calls") >= 10.0, "{what}");
                assert_eq!(num(s, "endpoint.ac.blocked_calls"), 0.0, "{what}");
                assert_eq!(num(s, "endpoint.ac.data_lost"), 0.0, "{what}");
                assert_eq!(num(s, "endpoint.ac.probe_rejected"), 0.0, "{what}");
                assert_eq!(num(s, "link.r-dst.drops"), 0.0, "{what}");
            }
        }
    }
}

#[test]
fn out_of_band_push_out_removes_only_probes() {
    // Heavy load (a flow every second, 3.3 times the link) and a lax threshold.
    let text = scenario(
        1.0,
        "out_of_band",
        &probe("early_reject", 0.2, 0, false),
        900.0,
        100.0,
    );
    let sc = common::parse(&text).expect("valid");
    let mut w = qossim::build(&sc, 7).expect("build");
    w.run_until(qossim::time::secs(900.0));
    let l = w.net.link_id("r-dst").unwrap();
    let d = &w.net.links[l as usize].stats.drops;
    assert!(d.pushed_out[0] > 0, "probes were pushed out: {d:?}");
    assert_eq!(d.pushed_out[1], 0, "data is never pushed out: {d:?}");
    assert!(w.check_invariants().is_empty());
}

#[test]
fn marking_marks_before_the_real_queue_drops() {
    // The virtual queue runs at 90 %: it marks at loads the real queue still carries.
    let text = scenario(
        3.5,
        "in_band",
        &probe("slow_start", 0.05, 0, true),
        1500.0,
        300.0,
    );
    let out = run(&text, 1);
    let s = &out.summary;
    let marked = num(s, "link.r-dst.vq_marked");
    let seen = num(s, "link.r-dst.vq_seen");
    let drops = num(s, "link.r-dst.drops");
    assert!(marked > 0.0 && marked < seen, "{marked} of {seen}");
    assert!(drops < marked, "drops {drops}, marks {marked}");
}

#[test]
fn admission_control_holds_loss_down_under_overload() {
    // E1's load (110 % of the link): without admission the queue overflows all the time.
    let none = run(&scenario(3.5, "in_band", "", 1500.0, 300.0), 1);
    let loss_none = {
        let s = &none.summary;
        1.0 - num(s, "group.ac.rx_pkts") / num(s, "group.ac.sent_pkts")
    };
    assert!(loss_none > 0.05, "{loss_none}");
    let probing = run(
        &scenario(
            3.5,
            "in_band",
            &probe("slow_start", 0.01, 0, false),
            1500.0,
            300.0,
        ),
        1,
    );
    let mbac = run(
        &scenario(
            3.5,
            "in_band",
            "[endpoint]\n[[endpoint.mbac]]\ntraffic = \"ac\"\nlink = \"r-dst\"\ntarget = 0.9\n",
            1500.0,
            300.0,
        ),
        1,
    );
    for (name, out) in [("probing", &probing), ("mbac", &mbac)] {
        let s = &out.summary;
        let loss = num(s, "endpoint.ac.data_loss");
        let util = num(s, "endpoint.ac.data_bps") / 10e6;
        assert!(
            loss < loss_none / 5.0,
            "{name}: loss {loss} against {loss_none}"
        );
        assert!(num(s, "endpoint.ac.blocking") > 0.02, "{name}");
        assert!(util > 0.6 && util < 1.0, "{name}: utilization {util}");
    }
}

#[test]
fn measured_sum_over_a_path_admits_only_what_every_link_has_room_for() {
    // Two measured links: r-dst (10 Mb/s, υ = 0.9) and the 1 Gb/s access link src-r with
    // υ = 0.001, i.e. 1 Mb/s of room. A request is admitted only where both fit, so the
    // admitted load is held to about 1 Mb/s (estimates are measured rates, so a little
    // above is possible while flows are silent), far below what r-dst alone admits.
    let entry = |link: &str, target: f64| {
        format!("[[endpoint.mbac]]\ntraffic = \"ac\"\nlink = \"{link}\"\ntarget = {target}\n")
    };
    let both = format!(
        "[endpoint]\n{}{}",
        entry("r-dst", 0.9),
        entry("src-r", 0.001)
    );
    let out = run(&scenario(3.5, "in_band", &both, 1500.0, 300.0), 1);
    let s = &out.summary;
    let bps = num(s, "endpoint.ac.data_bps");
    assert!(bps > 0.3e6 && bps < 1.5e6, "{bps}");
    // About 86 flows offered in E1's load, fewer than 12 fit: most are blocked.
    assert!(num(s, "endpoint.ac.blocking") > 0.8);
    // Measuring the same link twice for one entry is refused.
    let twice = format!("[endpoint]\n{}{}", entry("r-dst", 0.9), entry("r-dst", 0.9));
    let d = diagnostics(&scenario(3.5, "in_band", &twice, 10.0, 1.0));
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].contains("already measured at this link"), "{d:?}");
}

fn diagnostics(text: &str) -> Vec<String> {
    match qossim::parse(text, "s.toml", Path::new("."), &[]) {
        Ok(_) => panic!("accepted"),
        Err(d) => d.iter().map(|d| d.to_string()).collect(),
    }
}

#[test]
fn mistakes_in_the_endpoint_section_are_reported_once_at_their_line() {
    let good = scenario(
        3.5,
        "in_band",
        &probe("slow_start", 0.01, 0, true),
        10.0,
        1.0,
    );
    for (from, to, want) in [
        (
            "algorithm = \"slow_start\"",
            "algorithm = \"fast\"",
            "endpoint.probe.0.algorithm: unknown algorithm \"fast\"",
        ),
        ("epsilon = 0.01", "epsilon = 2", "endpoint.probe.0.epsilon"),
        (
            "traffic = \"ac\"",
            "traffic = \"x\"",
            "no traffic entry \"x\"",
        ),
        (
            "link = \"r-dst\"",
            "link = \"dst-q\"",
            "unknown link \"dst-q\"",
        ),
        (
            "fraction = 0.9",
            "fraction = 0",
            "fraction: must be in (0, 1], got 0",
        ),
        (
            "fraction = 0.9",
            "fraction = 0.9\nshared = true",
            "shared: needs per_class = true",
        ),
        (
            "fraction = 0.9",
            "fraction = 0.9\nper_class = true\nmark_pushed_out = true",
            "mark_pushed_out: needs shared = true",
        ),
        (
            "class = 0\n",
            "class = 0\nspeed = 1\n",
            "speed: unknown key",
        ),
    ] {
        assert!(good.contains(from), "{from}");
        let d = diagnostics(&good.replacen(from, to, 1));
        assert_eq!(d.len(), 1, "{to}: {d:?}");
        assert!(d[0].contains(want), "{to}: {d:?}");
    }
    // Admission needs call arrivals.
    let static_flows = good.replace("[traffic.calls]\n", "[unused]\n");
    let d = diagnostics(&static_flows);
    assert!(
        d.iter().any(|m| m.contains("has no call arrivals")),
        "{d:?}"
    );
}

/// The `[endpoint]` part of a valid scenario with one entry of `section` (its array's
/// name), to which lines may be added after its header.
fn one_entry(section: &str) -> String {
    let entry = match section {
        "endpoint.probe" => "traffic = \"ac\"\n",
        "endpoint.mbac" => "traffic = \"ac\"\nlink = \"r-dst\"\n",
        "endpoint.virtual_queue" => "link = \"r-dst\"\n",
        other => panic!("no entry for {other}"),
    };
    format!("[endpoint]\n[[{section}]]\n{entry}")
}

/// A value of `p`'s type outside its declared bounds, as a scenario writes it, or `None`
/// when its bounds admit every value of its type.
fn out_of_bounds(p: &qossim::decl::Param) -> Option<String> {
    use qossim::decl::{Bounds, Type};
    let x = match p.bounds {
        Bounds::Any => return None,
        Bounds::Positive | Bounds::PositiveAtMost(_) => 0.0,
        Bounds::AtLeast(lo) | Bounds::AboveUpTo(lo, _) if lo >= 0.0 => lo,
        Bounds::Between(_, hi) | Bounds::AboveUpTo(_, hi) => hi + 1.0,
        Bounds::AtLeast(lo) => lo - 1.0,
    };
    Some(match p.ty {
        Type::Number | Type::Integer => format!("{x}"),
        Type::Time => format!("\"{x}s\""),
        Type::Rate => format!("\"{x}bps\""),
        Type::Size => format!("\"{x}B\""),
        other => panic!("{}: no out-of-bounds value of a {other:?}", p.key),
    })
}

#[test]
fn an_out_of_bounds_endpoint_key_is_refused_with_its_declared_reason_at_its_line() {
    let mut checked = 0;
    for section in qossim::mechanisms::endpoint::params::DECLARED {
        for p in section.params {
            let Some(bad) = out_of_bounds(p) else {
                continue;
            };
            let entry = format!("{}{} = {bad}\n", one_entry(section.name), p.key);
            let text = scenario(3.5, "in_band", &entry, 10.0, 1.0);
            let line = text
                .lines()
                .position(|l| l == format!("{} = {bad}", p.key))
                .unwrap()
                + 1;
            // The type's own parser refuses some (a zero rate): its reason then.
            let want = match p.parse(bad.trim_matches('"')) {
                Ok(v) => p.check(&v).expect("out of bounds"),
                Err(reason) => reason,
            };
            let d = match qossim::parse(&text, "s.toml", Path::new("."), &[]) {
                Ok(_) => panic!("{}.{} = {bad} was accepted", section.name, p.key),
                Err(d) => d,
            };
            assert_eq!(d.len(), 1, "{}.{} = {bad}: {d:?}", section.name, p.key);
            assert_eq!(
                (d[0].line, d[0].path.as_str(), d[0].reason.as_str()),
                (
                    line,
                    format!("{}.0.{}", section.name, p.key).as_str(),
                    want.as_str()
                )
            );
            checked += 1;
        }
    }
    // epsilon, probe_time, interval, rate, class; target, sample, window, rate; fraction.
    assert_eq!(checked, 10);
}

#[test]
fn describe_lists_every_key_the_endpoint_reader_accepts() {
    let declared = qossim::mechanisms::endpoint::params::DECLARED;
    for section in declared {
        let entry = format!("{}zz_unknown = 1\n", one_entry(section.name));
        let text = scenario(3.5, "in_band", &entry, 10.0, 1.0);
        assert_eq!(
            accepted_keys(&text, &format!("{}.0", section.name)),
            described_keys(section.name),
            "{}",
            section.name
        );
    }
    // `[endpoint]` itself holds the arrays, one declared section each.
    let text = scenario(3.5, "in_band", "[endpoint]\nzz_unknown = 1\n", 10.0, 1.0);
    let mut arrays: Vec<String> = declared
        .iter()
        .map(|s| s.name.strip_prefix("endpoint.").unwrap().to_string())
        .collect();
    arrays.sort();
    assert_eq!(accepted_keys(&text, "endpoint"), arrays);
}
