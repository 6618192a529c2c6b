//! `[pcn]` and the PCN topologies in the scenario language: what valid sections mean,
//! the exact diagnostics of invalid ones, and that a scenario-built PCN domain runs
//! exactly like the same domain assembled by hand through `PcnDomain`.

use qossim::mechanisms::pcn::scenario::{Demand, RateOrFraction};
use qossim::mechanisms::pcn::PcnSpec;
use qossim::mechanisms::pcn::*;
use qossim::scenario::{self, Scenario};
use qossim::time::{secs, Time, PS_PER_MS};
use qossim::traffic::{named_model, ActiveCall, Arrivals, FlowGenerator, Holding};
use qossim::World;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

fn parse(text: &str) -> Scenario {
    match qossim::parse(text, "s.toml", Path::new("."), &[]) {
        Ok(s) => s,
        Err(d) => panic!(
            "unexpected diagnostics:\n{}",
            d.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

/// Every diagnostic of `text`, formatted `FILE:LINE: key.path: reason`.
fn diagnostics(text: &str) -> Vec<String> {
    qossim::parse(text, "s.toml", Path::new("."), &[])
        .expect_err("should be invalid")
        .iter()
        .map(|d| d.to_string())
        .collect()
}

/// The topology kinds the reader knows, as its diagnostic lists them: the core's, then
/// each registered family's, the last after "or".
fn known_kinds() -> String {
    let mut kinds = vec![
        "single_link",
        "dumbbell",
        "merging",
        "star",
        "parking_lot",
        "chain",
        "tree",
        "ring",
        "graph",
    ];
    for family in qossim::mechanisms::FAMILIES {
        kinds.extend(family.topology_kinds());
    }
    let (last, rest) = kinds.split_last().expect("kinds");
    format!("{} or {last}", rest.join(", "))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

// ---------------------------------------------------------------------------------------
// Valid sections

#[test]
fn single_link_admission_defaults() {
    let sc = parse(
        r#"
[run]
duration = "10s"
[topology]
kind = "pcn_single"
rate = "T3"
[pcn]
ra = 0.5
[pcn.traffic]
model = "CBR"
overload = 2
"#,
    );
    assert_eq!(sc.topology.nodes, vec!["A", "B"]);
    assert_eq!(sc.topology.links.len(), 1);
    assert_eq!(sc.topology.links[0].name, "A-B");
    assert_eq!(sc.topology.links[0].delay, PS_PER_MS);
    let p = sc.mechanism::<PcnSpec>().unwrap();
    assert_eq!(p.bottlenecks, vec![0]);
    let a = p.admission.as_ref().unwrap();
    assert_eq!(a.ra, RateOrFraction::Fraction(0.5));
    assert_eq!(a.curve, MarkingCurve::Ramp);
    assert_eq!(a.thresholds, VqThresholds::default());
    assert_eq!(a.cle, CleMode::PerPacket { w: 0.01 });
    assert_eq!(a.cle_threshold, 0.5);
    assert!(p.termination.is_none());
    assert_eq!(p.ieas.len(), 1);
    let i = &p.ieas[0];
    assert_eq!((i.name.as_str(), i.ingress, i.egress), ("A-B", 0, 1));
    assert_eq!(i.demand, Demand::Overload(2.0));
    assert_eq!(i.holding, Holding::Exp(60.0));
    assert_eq!((i.share, i.jitter), (1.0, 0.0));
    assert_eq!(i.arrivals, CallArrivals::Poisson);
    assert!(p.per_iea && !p.iea_series);
    assert_eq!(p.sample_interval, 50 * PS_PER_MS);
}

#[test]
fn rtt_star_termination_with_weights() {
    let sc = parse(
        r#"
[run]
duration = "30s"
[topology]
kind = "pcn_rtt"
rate = "OC3"
ingresses = 4
access_delays = { from = "1ms", to = "100ms" }
bottleneck_delay = "10ms"
[pcn]
termination = { rt = "70Mbps", t_fail = "20s", rounding = "nearest", depth = "40KB", ignore_stale_reports = true }
[pcn.traffic]
model = "MIX"
arrivals = "batch"
offered = 0.75
weights = [1, 1, 1, 2]
jitter = 0.01
"#,
    );
    // The network of `rtt_star`: ingresses, D, F; access links 100x faster.
    assert_eq!(sc.topology.nodes, vec!["I1", "I2", "I3", "I4", "D", "F"]);
    let delays: Vec<Time> = sc.topology.links[..4].iter().map(|l| l.delay).collect();
    assert_eq!(delays, spread_delays(4, PS_PER_MS, 100 * PS_PER_MS));
    assert_eq!(sc.topology.links[0].rate, 100 * 155_520_000);
    let b = &sc.topology.links[4];
    assert_eq!(
        (b.name.as_str(), b.rate, b.delay),
        ("D-F", 155_520_000, 10 * PS_PER_MS)
    );
    let p = sc.mechanism::<PcnSpec>().unwrap();
    assert!(p.admission.is_none());
    let t = p.termination.as_ref().unwrap();
    assert_eq!(t.rt, RateOrFraction::Rate(70_000_000));
    assert_eq!(t.before, RateOrFraction::Fraction(1.0));
    assert_eq!(t.t_fail, secs(20.0));
    assert_eq!(t.rounding, Rounding::Nearest);
    assert!(t.ignore_stale_reports);
    assert!(t.stop_arrivals);
    let names: Vec<&str> = p.ieas.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, vec!["I1-F", "I2-F", "I3-F", "I4-F"]);
    let shares: Vec<f64> = p.ieas.iter().map(|i| i.share).collect();
    assert_eq!(shares, vec![0.2, 0.2, 0.2, 0.4]);
    assert!(p.ieas.iter().all(|i| i.arrivals == CallArrivals::Batch));
    assert_eq!(
        p.ieas[0].demand,
        Demand::Offered(RateOrFraction::Fraction(0.75))
    );
}

/// Two-sided `1 - 2 * tail` interval of a Poisson count with mean `mu`: the largest `lo`
/// with P(X < lo) <= tail and the smallest `hi` with P(X > hi) <= tail (exact sums).
fn poisson_interval(mu: f64, tail: f64) -> (u64, u64) {
    let (mut k, mut pmf, mut cdf) = (0u64, (-mu).exp(), 0.0);
    let mut lo = 0;
    loop {
        if cdf <= tail {
            lo = k;
        }
        cdf += pmf;
        if 1.0 - cdf <= tail {
            return (lo, k);
        }
        k += 1;
        pmf *= mu / k as f64;
    }
}

#[test]
fn rtt_star_with_three_egresses_has_an_aggregate_per_ingress_and_egress() {
    // 4 ingresses x 3 egresses; the load at failure of each of the 12 aggregates is a
    // Poisson count with mean offered x link / (flow rate x holding) / 12 x holding x
    // (1 - exp(-t_fail / holding)); a model with one aggregate per ingress, or demand not
    // divided among all 12, puts every count far outside its interval.
    let text = r#"
[run]
duration = "30.5s"
[topology]
kind = "pcn_rtt"
rate = "T3"
ingresses = 4
egresses = 3
access_delay = "1ms"
[pcn]
per_iea = true
termination = { rt = 0.5, t_fail = "30s" }
[pcn.traffic]
model = "CBR"
offered = 0.75
holding = "exp:10s"
"#;
    let sc = parse(text);
    assert_eq!(
        sc.topology.nodes,
        vec!["I1", "I2", "I3", "I4", "D", "F", "E1", "E2", "E3"]
    );
    let fan: Vec<(&str, u64, Time)> = sc.topology.links[5..]
        .iter()
        .map(|l| (l.name.as_str(), l.rate, l.delay))
        .collect();
    let fast = 100 * 44_736_000;
    assert_eq!(
        fan,
        vec![("F-E1", fast, 0), ("F-E2", fast, 0), ("F-E3", fast, 0)]
    );
    let p = sc.mechanism::<PcnSpec>().unwrap();
    let names: Vec<&str> = p.ieas.iter().map(|i| i.name.as_str()).collect();
    let expected: Vec<String> = (1..=4)
        .flat_map(|i| (1..=3).map(move |e| format!("I{i}-E{e}")))
        .collect();
    assert_eq!(names, expected);
    assert!(p.ieas.iter().all(|i| close(i.share, 1.0 / 12.0)));
    let links: Vec<&str> = p
        .bottlenecks
        .iter()
        .map(|&l| sc.topology.links[l].name.as_str())
        .collect();
    assert_eq!(links, vec!["D-F"]);

    let out = scenario::run(&sc, Some(3), &mut |_| true).unwrap();
    let s = &out.summary;
    let mu = 0.75 * 44_736_000.0 / 64_000.0 / 12.0 * (1.0 - (-3.0f64).exp());
    let (lo, hi) = poisson_interval(mu, 0.0005);
    let mut sum = 0;
    for name in &expected {
        let n = s[&format!("pcn.iea.{name}.load_flows")].as_u64().unwrap();
        assert!(
            (lo..=hi).contains(&n),
            "{name}: {n} flows at failure, Poisson({mu:.1}) 99.9% interval [{lo}, {hi}]"
        );
        sum += n;
    }
    assert_eq!(s["pcn.bottleneck.D-F.load_flows"].as_u64().unwrap(), sum);
    let (lo, hi) = poisson_interval(12.0 * mu, 0.0005);
    assert!((lo..=hi).contains(&sum), "{sum} flows in all, [{lo}, {hi}]");
    // One egress: the same network without E1..E3, one aggregate per ingress.
    let one = parse(&text.replace("egresses = 3\n", ""));
    let p1 = one.mechanism::<PcnSpec>().unwrap();
    let names: Vec<&str> = p1.ieas.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, vec!["I1-F", "I2-F", "I3-F", "I4-F"]);
}

#[test]
fn parking_lot_split_and_explicit_aggregates_on_a_graph() {
    let sc = parse(
        r#"
[run]
duration = "30s"
[topology]
kind = "pcn_parking_lot"
rate = "10Mbps"
bottlenecks = 3
[pcn]
ra = "4Mbps"
marking = "step"
thresholds = { min = "1ms", max = "5ms", limit = "10ms" }
cle = { mode = "interval", w = 0.5 }
[pcn.traffic]
model = "VBR"
overload = 3
split = "2:1"
"#,
    );
    let p = sc.mechanism::<PcnSpec>().unwrap();
    let links: Vec<&str> = p
        .bottlenecks
        .iter()
        .map(|&l| sc.topology.links[l].name.as_str())
        .collect();
    assert_eq!(links, vec!["R0-R1", "R1-R2", "R2-R3"]);
    let a = p.admission.as_ref().unwrap();
    assert_eq!(a.ra, RateOrFraction::Rate(4_000_000));
    assert_eq!(a.curve, MarkingCurve::Step);
    assert_eq!(a.thresholds, VqThresholds::from_ms(1.0, 5.0, 10.0));
    assert_eq!(
        a.cle,
        CleMode::Interval {
            w: 0.5,
            period: 100 * PS_PER_MS
        }
    );
    assert_eq!(a.cle_threshold, 0.05);
    let ieas: Vec<(&str, f64)> = p.ieas.iter().map(|i| (i.name.as_str(), i.share)).collect();
    assert_eq!(ieas.len(), 4);
    assert_eq!(ieas[0].0, "IL-EL");
    assert!(close(ieas[0].1, 2.0 / 3.0));
    for (k, (name, share)) in ieas[1..].iter().enumerate() {
        assert_eq!(*name, format!("I{}-E{}", k + 1, k + 1));
        assert!(close(*share, 1.0 / 3.0));
    }

    // Any topology: bottlenecks by name, aggregates listed.
    let sc = parse(
        r#"
[run]
duration = "10s"
[topology]
kind = "dumbbell"
hosts = 2
access_rate = "1Gbps"
bottleneck_rate = "OC3"
[pcn]
bottlenecks = ["r0-r1"]
ra = 0.4
per_iea = false
[[pcn.iea]]
ingress = "s0"
egress = "d0"
model = "trace"
trace = "synthetic-mpeg"
overload = 4
share = 0.25
[[pcn.iea]]
name = "calls"
ingress = "s1"
egress = "d1"
model = "CBR"
call_rate = "3/s"
holding = "fixed:20s"
"#,
    );
    let p = sc.mechanism::<PcnSpec>().unwrap();
    assert_eq!(p.bottlenecks, vec![sc.topology.link("r0-r1").unwrap()]);
    assert!(!p.per_iea);
    assert_eq!(p.ieas[0].name, "s0-d0");
    assert_eq!(p.ieas[0].share, 0.25);
    assert!((p.ieas[0].model.mean_bps() - 769_000.0).abs() < 1.0);
    assert_eq!(p.ieas[1].name, "calls");
    assert_eq!(p.ieas[1].demand, Demand::CallRate(3.0));
    assert_eq!(p.ieas[1].holding, Holding::Fixed(20.0));
}

// ---------------------------------------------------------------------------------------
// Diagnostics

#[test]
fn problems_in_the_pcn_section_are_all_reported_with_their_lines() {
    let text = r#"[run]
duration = "10s"
[topology]
kind = "pcn_rtt"
rate = "OC3"
ingresses = 3
[pcn]
bottlenecks = ["D-G", "D-F"]
rA = 0.5
thresholds = { min = "15ms", max = "5ms" }
termination = { rt = 1.5, rounding = "sideways", t_fail = "12s", ignore_stale_reports = "yes" }
[pcn.traffic]
model = "CBR"
offered = 0.5
call_rate = "2/s"
weights = [1, 2]
"#;
    let want = vec![
        "s.toml:8: pcn.bottlenecks: unknown link \"D-G\"; links are: I1-D, I2-D, I3-D, D-F",
        "s.toml:9: pcn.rA: unknown key (did you mean \"ra\"?); expected one of: bottlenecks, cle, iea, iea_series, marking, per_iea, ra, sample_interval, termination, thresholds, traffic",
        // The typo leaves no admission control, so the thresholds have no use.
        "s.toml:10: pcn.thresholds: only used with admission control: give pcn.ra (the configured-admissible-rate)",
        "s.toml:11: pcn.termination.ignore_stale_reports: expected true or false, found string",
        "s.toml:11: pcn.termination.rounding: unknown rounding \"sideways\"; use \"up\", \"down\" or \"nearest\"",
        "s.toml:11: pcn.termination.rt: a fraction of the link rate must be in (0, 1], got 1.5",
        "s.toml:11: pcn.termination.t_fail: must be before the end of the run (run.duration)",
        "s.toml:15: pcn.traffic.call_rate: give only one of `overload`, `offered` and `call_rate`",
        "s.toml:16: pcn.traffic.weights: has 2 entries but the topology has 3 aggregates (I1-F, I2-F, I3-F)",
    ];
    assert_eq!(diagnostics(text), want);
}

/// `[run]` and a topology, then `rest`: the `[pcn]` part starts on line 6.
fn with_topology(topology: &str, rest: &str) -> String {
    format!("[run]\nduration = \"10s\"\n[topology]\n{topology}\n{rest}")
}

#[test]
fn pcn_section_diagnostics() {
    let single = "kind = \"pcn_single\"\nrate = \"T3\"";
    let rtt = "kind = \"pcn_rtt\"\nrate = \"T3\"\ningresses = 2";
    let dumbbell =
        "kind = \"dumbbell\"\nhosts = 1\nbottleneck_rate = \"T3\"\naccess_rate = \"OC3\"";
    let traffic = "[pcn.traffic]\nmodel = \"CBR\"\noffered = 0.5\n";
    // The kinds every registered family adds follow the core's, in registry order.
    let unknown_kind = format!(
        "s.toml:4: topology.kind: unknown topology \"pcn_ring\" (did you mean \"pcn_single\"?); use {}",
        known_kinds()
    );
    let cases: Vec<(String, Vec<&str>)> = vec![
        (with_topology(single, &format!("[pcn]\nmarking = \"step\"\n{traffic}")), vec!["s.toml:7: pcn.marking: only used with admission control: give pcn.ra (the configured-admissible-rate)"]),
        (with_topology(single, &format!("[pcn]\nra = 0.5\ncle = {{ mode = \"ewma\" }}\n{traffic}")), vec!["s.toml:8: pcn.cle.mode: unknown mode \"ewma\"; use \"per_packet\" or \"interval\""]),
        (with_topology(single, &format!("[pcn]\nra = 0.5\ncle = {{ w = 0, interval = \"10ms\" }}\n{traffic}")), vec!["s.toml:8: pcn.cle.interval: only used with mode = \"interval\"", "s.toml:8: pcn.cle.w: must be in (0, 1], got 0"]),
        (with_topology(single, &format!("[pcn]\nra = \"fast\"\n{traffic}")), vec!["s.toml:7: pcn.ra: expected a rate such as \"155.52Mbps\", \"64kbps\" or \"OC3\", got \"fast\"; or give a fraction of the link rate, e.g. 0.5"]),
        (with_topology(single, &format!("[pcn]\ntermination = {{ rt = 0.5, t_fail = \"10s\" }}\n{traffic}")), vec!["s.toml:7: pcn.termination.t_fail: must be before the end of the run (run.duration)"]),
        (with_topology(single, "[pcn]\n[pcn.traffic]\nmodel = \"CBR\"\noverload = 2\n"), vec!["s.toml:9: pcn.traffic.overload: is a multiple of pcn.ra, which is not given; use `offered` or `call_rate`"]),
        (with_topology(single, "[pcn]\nra = 0.5\n[pcn.traffic]\nmodel = \"tcp\"\noverload = 2\n"), vec!["s.toml:9: pcn.traffic.model: PCN aggregates carry open-loop real-time flows; model \"tcp\" is not supported here"]),
        (with_topology(single, "[pcn]\nra = 0.5\n[pcn.traffic]\nmodel = \"CBR\"\n"), vec!["s.toml:8: pcn.traffic.overload: missing: give `overload` (demand as a multiple of ra), `offered` (a fraction of the bottleneck rate, or a rate) or `call_rate` (e.g. \"2/s\")"]),
        (with_topology(single, "[pcn]\nra = 0.5\n"), vec!["s.toml:6: pcn.iea: missing: describe the aggregates with [[pcn.iea]] entries, or with [pcn.traffic] on a pcn_* topology"]),
        (with_topology(rtt, "[pcn]\n[pcn.traffic]\nmodel = \"CBR\"\noffered = 0.5\nsplit = \"2:1\"\n"), vec!["s.toml:11: pcn.traffic.split: divides a parking lot's demand between its long and short aggregates; use `weights` on other topologies"]),
        (with_topology(rtt, &format!("[pcn]\n{traffic}[[pcn.iea]]\ningress = \"I1\"\negress = \"F\"\nmodel = \"CBR\"\noffered = 0.5\n")), vec!["s.toml:11: pcn.iea: give either [pcn.traffic] (one aggregate per ingress of a pcn_* topology) or [[pcn.iea]] entries, not both"]),
        (with_topology(dumbbell, &format!("[pcn]\n{traffic}")), vec!["s.toml:8: pcn.bottlenecks: missing (required: the links whose PCN traffic is marked, e.g. [\"r0-r1\"])", "s.toml:9: pcn.traffic: [pcn.traffic] generates one aggregate per ingress of a pcn_single, pcn_rtt or pcn_parking_lot topology; with topology \"dumbbell\" list the aggregates as [[pcn.iea]]"]),
        (with_topology(dumbbell, "[pcn]\nbottlenecks = [\"r0-r1\"]\n[[pcn.iea]]\ningress = \"s0\"\negress = \"s0\"\nmodel = \"CBR\"\ncall_rate = \"1/s\"\nshare = 2\n"), vec!["s.toml:15: pcn.iea.0.share: scales `overload` or `offered`; a `call_rate` is the aggregate's own"]),
        (with_topology(dumbbell, "[pcn]\n[[pcn.iea]]\ningress = \"s9\"\negress = \"d0\"\nmodel = \"CBR\"\ncall_rate = \"1/s\"\n"), vec!["s.toml:8: pcn.bottlenecks: missing (required: the links whose PCN traffic is marked, e.g. [\"r0-r1\"])", "s.toml:10: pcn.iea.0.ingress: unknown node \"s9\"; nodes are: s0, r0, r1, d0"]),
        (with_topology(dumbbell, "[[traffic]]\nname = \"v\"\nfrom = \"s0\"\nto = \"d0\"\nmodel = \"CBR\"\n[pcn]\nbottlenecks = [\"r0-r1\"]\n[[pcn.iea]]\nname = \"v\"\ningress = \"s0\"\negress = \"d0\"\nmodel = \"CBR\"\ncall_rate = \"1/s\"\n[[pcn.iea]]\nname = \"v\"\ningress = \"s0\"\negress = \"d0\"\nmodel = \"CBR\"\ncall_rate = \"1/s\"\n"), vec!["s.toml:16: pcn.iea.0.name: a traffic entry is already called \"v\" (aggregates and traffic entries name flow groups)", "s.toml:22: pcn.iea.1.name: two aggregates are called \"v\""]),
        (with_topology("kind = \"pcn_ring\"\nrate = \"T3\"", ""), vec![unknown_kind.as_str()]),
        (with_topology("kind = \"pcn_rtt\"\nrate = \"T3\"\naccess_delay = \"2ms\"\naccess_delays = [\"1ms\"]", ""), vec!["s.toml:3: topology.ingresses: missing (required: ingress nodes I1..IN)", "s.toml:7: topology.access_delays: give either access_delay (all equal) or access_delays, not both"]),
        (with_topology("kind = \"pcn_parking_lot\"\nbottlenecks = 0", ""), vec!["s.toml:3: topology.rate: missing (required: the bottleneck rate, e.g. \"OC3\")", "s.toml:5: topology.bottlenecks: must be between 1 and 1000, got 0"]),
        (with_topology(single, "[links.\"A-C\"]\nrate = \"T1\"\n[links.\"A-B\"]\nspeed = \"T1\"\n"), vec!["s.toml:6: links.A-C: unknown link \"A-C\"; links are: A-B", "s.toml:9: links.A-B.speed: unknown key; expected one of: delay, queue, rate"]),
    ];
    for (text, want) in cases {
        assert_eq!(diagnostics(&text), want, "{text}");
    }
}

// ---------------------------------------------------------------------------------------
// Scenario-built against hand-built domains

/// Every entry of `world` is in `run` with the same value (a scenario run adds its own
/// figures, the `pcn.*` keys among them, to the world's summary).
fn assert_includes(run: &Map<String, Value>, world: &Map<String, Value>) {
    for (k, v) in world {
        assert_eq!(run.get(k), Some(v), "{k}");
    }
    assert!(run.keys().any(|k| k.starts_with("pcn.")));
}

const RTT_ADMISSION: &str = r#"
[run]
duration = "25s"
warmup = "8s"
[topology]
kind = "pcn_rtt"
rate = "10Mbps"
ingresses = 3
access_delays = ["2ms", "15ms", "40ms"]
bottleneck_delay = "5ms"
[pcn]
ra = 0.5
cle = { mode = "interval", w = 0.3, threshold = 0.05 }
[pcn.traffic]
model = "VBR"
overload = 5
weights = [1, 2, 1]
holding = "exp:10s"
jitter = 0.01
"#;

#[test]
fn scenario_admission_domain_equals_the_hand_built_one() {
    let seed = 17;
    let sc = parse(RTT_ADMISSION);
    // Through the scenario.
    let mut ws = scenario::build(&sc, seed).unwrap();
    ws.run_until(sc.run.duration);
    let from_scenario = ws.summary();
    let out = scenario::run(&sc, Some(seed), &mut |_| true).unwrap();
    // By hand.
    let ms = PS_PER_MS;
    let mut w = World::new(seed);
    let topo = rtt_star(&mut w, 10_000_000, 5 * ms, &[2 * ms, 15 * ms, 40 * ms]);
    let link = topo.bottlenecks[0];
    let ra = 5_000_000u64;
    let vbr = named_model("VBR").unwrap();
    let mut dom = PcnDomain::new(CleMode::interval(0.3))
        .sar_period(100 * ms)
        .sample_interval(50 * ms)
        .admission_marking(link, ra, VqThresholds::default(), MarkingCurve::Ramp);
    for (a, weight) in topo.ieas.iter().zip([1.0, 2.0, 1.0]) {
        let share = weight / 4.0;
        let lambda = call_rate_for_overload(5.0 * share, ra as f64, vbr.mean_bps(), 10.0);
        let mut cfg = IngressConfig::new(vbr.clone(), CallArrivals::Poisson.arrivals(lambda));
        cfg.holding = Holding::Exp(10.0);
        cfg.jitter = 0.01;
        cfg.cle_threshold = 0.05;
        cfg.measure_from = secs(8.0);
        dom = dom.iea(&a.name, a.ingress, a.egress, cfg);
    }
    let h = dom.build(&mut w).unwrap();
    // The scenario's warm-up (one broadcast to every port).
    w.set_warmup(secs(8.0));
    w.run_until(secs(25.0));
    let by_hand = w.summary();
    assert!(by_hand["events"].as_u64().unwrap() > 100_000);
    assert_eq!(from_scenario, by_hand, "identical runs");
    // ... and the run through `scenario::run` adds the study's figures to the same.
    assert_includes(&out.summary, &by_hand);
    let acc = admission_accuracy(h.throughput(&w, link).unwrap(), 8.0, ra as f64);
    let s = &out.summary;
    assert_eq!(
        s["pcn.bottleneck.D-F.over_admission_pct"].as_f64().unwrap(),
        acc.over_admission_pct
    );
    assert_eq!(
        s["pcn.bottleneck.D-F.sd_over_ra"].as_f64().unwrap(),
        acc.sd_over_ra
    );
    assert_eq!(s["pcn.bottleneck.D-F.samples"].as_u64().unwrap(), 340);
    assert_eq!(s["pcn.bottleneck.D-F.ra_bps"].as_u64().unwrap(), ra);
    let mut blocked = 0.0;
    for a in &topo.ieas {
        let ing = h.ingress(&mut w, &a.name).unwrap();
        let key = format!("pcn.iea.{}.rtt_s", a.name);
        assert!(close(
            s[&key].as_f64().unwrap(),
            ing.signalling().round_trip() as f64 / 1e12
        ));
        blocked += s[&format!("pcn.iea.{}.blocked", a.name)].as_f64().unwrap();
    }
    assert!(blocked > 0.0, "5x overload blocks calls");
    assert_eq!(s["pcn.blocked"].as_f64().unwrap(), blocked);
}

const PLT_TERMINATION: &str = r#"
[run]
duration = "14s"
[topology]
kind = "pcn_parking_lot"
rate = "10Mbps"
bottlenecks = 2
[pcn]
termination = { rt = 0.5, t_fail = "12s" }
[pcn.traffic]
model = "CBR"
# 3.6 x (1 - exp(-12/60)) = 0.65 of each bottleneck active at failure, above Rt = 0.5.
offered = 3.6
split = "2:1"
holding = "exp:60s"
"#;

#[test]
fn scenario_termination_domain_equals_the_hand_built_one() {
    let seed = 5;
    let sc = parse(PLT_TERMINATION);
    let mut ws = scenario::build(&sc, seed).unwrap();
    ws.run_until(sc.run.duration);
    let from_scenario = ws.summary();
    let out = scenario::run(&sc, Some(seed), &mut |_| true).unwrap();
    // By hand.
    let link = 10_000_000u64;
    let t_fail = secs(12.0);
    let mut w = World::new(seed);
    let topo = parking_lot(&mut w, 2, link);
    let cbr = named_model("CBR").unwrap();
    let mut dom = PcnDomain::new(CleMode::per_packet())
        .sar_period(100 * PS_PER_MS)
        .sample_interval(50 * PS_PER_MS);
    for &l in &topo.bottlenecks {
        dom = dom.termination_marking(l, link, 256 * 160);
    }
    for (k, a) in topo.ieas.iter().enumerate() {
        let share = if k == 0 { 2.0 / 3.0 } else { 1.0 / 3.0 };
        let lambda = 3.6 * share * link as f64 / (cbr.mean_bps() * 60.0);
        let mut cfg = IngressConfig::new(cbr.clone(), Arrivals::Poisson { rate: lambda });
        cfg.admission_control = false;
        cfg.stop_arrivals = t_fail;
        dom = dom.iea(&a.name, a.ingress, a.egress, cfg);
    }
    let h = dom.build(&mut w).unwrap();
    // The load at failure, taken just before the termination rates change.
    let agents: Vec<_> = h.ingresses.iter().map(|i| i.agent).collect();
    let at_failure: Rc<RefCell<Vec<Vec<ActiveCall>>>> = Rc::default();
    let snap = at_failure.clone();
    w.schedule_action(t_fail, move |w: &mut World| {
        let now = w.sched.now();
        *snap.borrow_mut() = agents
            .iter()
            .map(|&a| {
                let gen = w.agents.get_mut::<FlowGenerator>(a).unwrap();
                gen.active_calls()
                    .iter()
                    .filter(|f| f.end > now)
                    .copied()
                    .collect()
            })
            .collect();
    });
    let rates = h
        .termination_markers
        .iter()
        .map(|&m| (m, link / 2))
        .collect();
    schedule_termination_rates(&mut w, t_fail, rates);
    w.run_until(secs(14.0));
    let by_hand = w.summary();
    assert_eq!(from_scenario, by_hand, "identical runs");
    assert_includes(&out.summary, &by_hand);

    // The termination figures, from first principles.
    let s = &out.summary;
    let load: Vec<f64> = at_failure
        .borrow()
        .iter()
        .map(|f| f.len() as f64 * 64_000.0)
        .collect();
    let terminated: Vec<f64> = h
        .ingresses
        .iter()
        .map(|i| {
            let ing = PcnIngress::of(&mut w, i.agent).unwrap();
            ing.terminations()
                .iter()
                .map(|e| e.terminated)
                .sum::<usize>() as f64
                * 64_000.0
        })
        .collect();
    assert!(
        terminated.iter().all(|&t| t > 0.0),
        "every aggregate terminates"
    );
    let rt = link as f64 / 2.0;
    let paths = topo.paths();
    let expected = expected_termination(&load, &paths, &[rt, rt]);
    for (k, a) in topo.ieas.iter().enumerate() {
        let p = format!("pcn.iea.{}.", a.name);
        let get = |x: &str| s[&format!("{p}{x}")].as_f64().unwrap();
        assert_eq!(get("load_flows"), load[k] / 64_000.0);
        assert_eq!(get("terminated_flows"), terminated[k] / 64_000.0);
        assert!(close(get("actual"), terminated[k] / load[k]));
        assert!(close(get("expected"), expected.iea[k]));
        let optimal = paths[k]
            .iter()
            .map(|&b| {
                let lb: f64 = (0..3)
                    .filter(|&i| paths[i].contains(&b))
                    .map(|i| load[i])
                    .sum();
                optimal_fraction(lb, rt)
            })
            .fold(0.0, f64::max);
        assert!(close(get("optimal"), optimal));
        assert!(close(
            get("a_minus_o_pts"),
            (get("actual") - optimal) * 100.0
        ));
    }
    for (b, name) in ["R0-R1", "R1-R2"].iter().enumerate() {
        let p = format!("pcn.bottleneck.{name}.");
        let get = |x: &str| s[&format!("{p}{x}")].as_f64().unwrap();
        let crossing: Vec<usize> = (0..3).filter(|&i| paths[i].contains(&b)).collect();
        let lb: f64 = crossing.iter().map(|&i| load[i]).sum();
        let tb: f64 = crossing.iter().map(|&i| terminated[i]).sum();
        assert_eq!(get("load_bps"), lb);
        assert!(close(get("actual"), tb / lb));
        assert!(close(get("optimal"), optimal_fraction(lb, rt)));
        assert!(close(get("expected"), expected.bottleneck[b]));
        assert!(close(
            get("over_termination_pct"),
            over_termination_percent(tb / lb, optimal_fraction(lb, rt))
        ));
        assert_eq!(get("rt_bps"), rt);
    }
}
