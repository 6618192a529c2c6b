//! The scenario language: valid files build and run; each kind of bad input gets a
//! diagnostic naming the file, line, key and reason.

use qossim::scenario::{self, Diagnostic};
use std::path::Path;

fn diags(text: &str) -> Vec<Diagnostic> {
    qossim::parse(text, "s.toml", Path::new("."), &[]).expect_err("should be invalid")
}

const OK: &str = r#"
[run]
duration = "2s"
warmup = "0.5s"
[topology]
kind = "dumbbell"
hosts = 2
access_rate = "100Mbps"
bottleneck_rate = "10Mbps"
[[traffic]]
name = "v"
from = "s0"
to = "d1"
model = "CBR"
flows = 10
[[metric]]
kind = "link_throughput"
link = "r0-r1"
"#;

#[test]
fn valid_scenario_runs_and_measures() {
    let sc = qossim::parse(OK, "s.toml", Path::new("."), &[]).unwrap();
    let out = scenario::run(&sc, Some(3), &mut |_| true).unwrap();
    // 10 flows x 64 kb/s cross the bottleneck.
    let thr = out.summary["link.r0-r1.throughput_bps"].as_f64().unwrap();
    assert!((thr - 640_000.0).abs() / 640_000.0 < 0.01, "{thr}");
    // The metric's series, then the traffic entry's delay distribution.
    let names: Vec<&str> = out.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["r0-r1.throughput", "group.v.delay_cdf"]);
}

#[test]
fn overrides_change_values_and_are_blamed_on_set() {
    let o = vec![("traffic.0.flows".to_string(), "20".to_string())];
    let sc = qossim::parse(OK, "s.toml", Path::new("."), &o).unwrap();
    assert_eq!(sc.traffic[0].flows, 20);
    let bad = vec![(
        "topology.bottleneck_rate".to_string(),
        "\"fast\"".to_string(),
    )];
    let d = qossim::parse(OK, "s.toml", Path::new("."), &bad).unwrap_err();
    assert_eq!(d[0].file, "--set");
    assert_eq!(d[0].path, "topology.bottleneck_rate");
}

fn expect(text: &str, line: usize, path: &str, needle: &str) {
    let d = diags(text);
    assert!(
        d.iter()
            .any(|d| d.line == line && d.path == path && d.reason.contains(needle)),
        "expected {line}:{path}: ..{needle}.. in {:#?}",
        d
    );
    for x in &d {
        assert!(x.to_string().starts_with("s.toml:") || x.file == "--set");
    }
}

#[test]
fn every_problem_is_reported_with_its_line() {
    let text = OK
        .replace("hosts = 2", "hosts = 2\nhost = 3")
        .replace("link = \"r0-r1\"", "link = \"r0-r1\"\ninterval = \"50\"")
        .replace("to = \"d1\"", "to = \"d9\"");
    let d = diags(&text);
    assert!(d.len() >= 3, "{d:#?}");
    expect(&text, 8, "topology.host", "did you mean \"hosts\"");
    expect(&text, 20, "metric.0.interval", "no unit");
    expect(&text, 14, "traffic.0.to", "unknown node \"d9\"");
}

#[test]
fn malformed_inputs() {
    expect(
        &OK.replace("\"2s\"", "\"-2s\""),
        3,
        "run.duration",
        "negative",
    );
    expect(
        &OK.replace("\"2s\"", "2"),
        3,
        "run.duration",
        "expected a string with a unit",
    );
    expect(
        &OK.replace("\"100Mbps\"", "\"0Mbps\""),
        8,
        "topology.access_rate",
        "positive",
    );
    expect(
        &OK.replace("\"10Mbps\"", "\"10Mbs\""),
        9,
        "topology.bottleneck_rate",
        "unknown rate unit",
    );
    expect(
        &OK.replace("flows = 10", "flows = -1"),
        15,
        "traffic.0.flows",
        "negative",
    );
    expect(
        &OK.replace("\"dumbbell\"", "\"bell\""),
        6,
        "topology.kind",
        "unknown topology",
    );
    expect(
        &OK.replace("\"r0-r1\"", "\"r0-r9\""),
        18,
        "metric.0.link",
        "unknown link",
    );
    expect(
        &OK.replace("\"CBR\"", "\"G.712\""),
        14,
        "traffic.0.model",
        "unknown model",
    );
    expect(
        &OK.replace("warmup = \"0.5s\"", "warmup = \"5s\""),
        4,
        "run.warmup",
        "shorter",
    );
    let bad_trace = OK.replace(
        "model = \"CBR\"",
        "model = \"trace\"\ntrace = \"/nonexistent.txt\"",
    );
    expect(&bad_trace, 15, "traffic.0.trace", "cannot read trace");
    let syntax = diags("[run\nduration=1");
    assert_eq!(syntax[0].path, "(syntax)");
}

#[test]
fn disconnected_routes_are_rejected() {
    let text = r#"
[run]
duration = "1s"
[topology]
kind = "graph"
nodes = ["a", "b", "c"]
rate = "1Mbps"
[[topology.link]]
from = "a"
to = "b"
duplex = false
[[traffic]]
name = "x"
from = "b"
to = "a"
model = "CBR"
"#;
    expect(text, 15, "traffic.0.to", "no route from b to a");
    let routed = text.replace(
        "model = \"CBR\"",
        "model = \"CBR\"\nroute = [\"b\", \"c\", \"a\"]",
    );
    expect(&routed, 17, "traffic.0.route", "route does not connect");
}

#[test]
fn reference_scenario_file_is_valid() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/reference.toml");
    let sc = qossim::load(
        &p,
        &[
            ("run.duration".into(), "\"0.5s\"".into()),
            ("run.warmup".into(), "\"0.1s\"".into()),
        ],
    )
    .unwrap();
    assert_eq!(sc.traffic[0].flows, 1000);
    assert_eq!(
        sc.topology.links[sc.topology.link("n1-n2").unwrap()].rate,
        155_520_000
    );
}

#[test]
fn flows_without_their_own_records_count_the_same_in_their_group() {
    let with = qossim::parse(OK, "s.toml", Path::new("."), &[]).unwrap();
    let o = [("traffic.0.per_flow".to_string(), "false".to_string())];
    let without = qossim::parse(OK, "s.toml", Path::new("."), &o).unwrap();
    assert!(with.traffic[0].per_flow && !without.traffic[0].per_flow);
    let a = scenario::run(&with, Some(5), &mut |_| true).unwrap();
    let b = scenario::run(&without, Some(5), &mut |_| true).unwrap();
    // Every figure of the run is the same but those only records of their own give: the
    // flows one by one (flow.*) and the jitter between consecutive packets of a flow.
    let shared = |m: &serde_json::Map<String, serde_json::Value>| {
        m.iter()
            .filter(|(k, _)| !k.starts_with("flow.") && !k.ends_with(".jitter_mean_s"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert!(a.summary.contains_key("flow.v.9.jitter_mean_s"));
    assert!(!b.summary.keys().any(|k| k.starts_with("flow.")));
    assert_eq!(shared(&a.summary), shared(&b.summary));
    let wa = qossim::build(&with, 5).unwrap();
    let wb = qossim::build(&without, 5).unwrap();
    assert_eq!(wa.flows.recs.len(), 10);
    assert_eq!(wb.flows.recs.len(), 1, "the ten flows share one record");
}

#[test]
fn per_flow_false_is_refused_where_flows_are_measured_one_by_one() {
    let tcp = OK
        .replace("model = \"CBR\"", "model = \"tcp\"")
        .replace("flows = 10\n", "flows = 10\nper_flow = false\n");
    let d = diags(&tcp);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        d[0].to_string(),
        "s.toml:16: traffic.0.per_flow: TCP connections always keep their own records"
    );
    let profiled = OK.replace(
        "flows = 10\n",
        "flows = 10\nper_flow = false\nprofile = { kind = \"token_bucket\", rate = \"1Mbps\", depth = \"3000B\" }\n",
    );
    let d = diags(&profiled);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].to_string().ends_with(
            "traffic.0.per_flow: a host profile meters each flow: its flows keep their own records"
        ),
        "{}",
        d[0]
    );
}

/// `per_flow = false` on generated calls: one shared flow record instead of one per
/// call, and every group count exactly as with per-call records.
#[test]
fn calls_without_per_flow_records_count_the_same() {
    let text = |per_flow: bool| {
        format!(
            r#"
[run]
duration = "200s"

[topology]
kind = "single_link"
rate = "10Mbps"
delay = "20ms"
queue = {{ kind = "droptail", limit = "200p" }}

[[traffic]]
name = "exp1"
from = "a"
to = "b"
model = "onoff"
size = "125B"
interval = "3.90625ms"
per_flow = {per_flow}
[traffic.calls]
arrivals = "poisson"
rate = "1/s"
holding = "exp:30s"
"#
        )
    };
    let run = |per_flow: bool| {
        let sc = qossim::parse(&text(per_flow), "s.toml", Path::new("."), &[]).unwrap();
        let mut w = qossim::scenario::build(&sc, 4).unwrap();
        w.run_until(sc.run.duration);
        let summary = w.summary();
        (w.flows.recs.len(), summary)
    };
    let (per_call, a) = run(true);
    let (shared, b) = run(false);
    assert!(per_call > 150, "about one record per call: {per_call}");
    assert_eq!(shared, 1);
    let groups = |m: &serde_json::Map<String, serde_json::Value>| {
        m.iter()
            .filter(|(k, _)| k.starts_with("group.") || k.starts_with("link."))
            .filter(|(k, _)| !k.ends_with(".jitter_mean_s")) // needs records of their own
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(groups(&a), groups(&b));
}

/// `run.link_metrics` selects the links the summary reports; a wrong name or value is
/// one diagnostic on its line.
#[test]
fn link_metrics_select_the_links_reported() {
    let text = |sel: &str| {
        format!(
            "[run]\nduration = \"1s\"\nlink_metrics = {sel}\n\n[topology]\nkind = \"chain\"\n\
             length = 3\nrate = \"10Mbps\"\ndelay = \"1ms\"\n\n[[traffic]]\nname = \"v\"\n\
             from = \"n0\"\nto = \"n3\"\nmodel = \"CBR\"\nflows = 2\n"
        )
    };
    let links = |sel: &str| {
        let sc = qossim::parse(&text(sel), "s.toml", Path::new("."), &[]).unwrap();
        let out = scenario::run(&sc, Some(1), &mut |_| true).unwrap();
        let mut names: Vec<String> = out
            .summary
            .keys()
            .filter_map(|k| {
                k.strip_prefix("link.")
                    .map(|r| r.split('.').next().unwrap().to_string())
            })
            .collect();
        names.dedup();
        (names, out.summary.get("group.v.rx_pkts").cloned())
    };
    let (all, rx_all) = links("\"all\"");
    assert_eq!(all.len(), 6);
    let (none, rx_none) = links("\"none\"");
    assert!(none.is_empty());
    let (some, _) = links("[\"n1-n2\", \"n2-n1\"]");
    assert_eq!(some, vec!["n1-n2".to_string(), "n2-n1".to_string()]);
    assert_eq!(rx_all, rx_none, "only the report changes, not the run");
    for (sel, path, reason) in [
        ("[\"n1-n9\"]", "run.link_metrics.0", "unknown link"),
        (
            "[\"n1-n2\", 3]",
            "run.link_metrics.1",
            "expected a link name",
        ),
        ("\"some\"", "run.link_metrics", "expected \"all\""),
    ] {
        let d = diags(&text(sel));
        assert_eq!(d.len(), 1, "{sel}: {d:#?}");
        assert_eq!(d[0].path, path);
        assert_eq!(d[0].line, 3);
        assert!(d[0].reason.contains(reason), "{}", d[0].reason);
    }
}

/// A scenario estimated to need more memory than is available is refused before it is
/// built, with the estimate; one that fits runs.
#[test]
fn too_big_for_the_memory_is_refused_up_front() {
    let text = "[run]\nduration = \"0.1s\"\n\n[topology]\nkind = \"chain\"\nlength = 2\n\
                rate = \"10Mbps\"\ndelay = \"1ms\"\n\n[[traffic]]\nname = \"v\"\nfrom = \"n0\"\n\
                to = \"n2\"\nmodel = \"CBR\"\nflows = 10000\n";
    let sc = qossim::parse(text, "big.toml", Path::new("."), &[]).unwrap();
    let need = scenario::memory_estimate(&sc);
    // Links, flows and the entry's record, and the packets the queues may hold: the
    // sources can send no more than their 10 Mb/s access link carries in 0.1 s (781.25
    // packets of 160 B; the four queues admit 4 000), no series.
    let queued = 1e7 * 0.1 / 8.0 / 160.0 * scenario::budget::bytes_per_queued_packet() as f64;
    let fixed = 4 * scenario::BYTES_PER_LINK
        + 10_000 * scenario::BYTES_PER_FLOW
        + scenario::budget::BYTES_PER_ENTRY;
    assert_eq!(need, (fixed as f64 + queued) as u64);
    let opts = |avail: u64| scenario::RunOptions {
        memory_available: Some(avail),
        ..Default::default()
    };
    let err = scenario::run_with(&sc, Some(1), &mut |_| true, &opts(need - 1)).unwrap_err();
    assert!(
        err.starts_with("big.toml: this scenario needs about"),
        "{err}"
    );
    assert!(scenario::run_with(&sc, Some(1), &mut |_| true, &opts(need)).is_ok());
}

/// Building a scenario of many flows reports its progress every
/// `BUILD_PROGRESS_STEP` flows and at the end; a small one builds silently.
#[test]
fn building_many_flows_reports_progress() {
    let text = |flows: u64| {
        format!(
            "[run]\nduration = \"1ms\"\n\n[topology]\nkind = \"chain\"\nlength = 1\n\
             rate = \"10Mbps\"\ndelay = \"1ms\"\n\n[[traffic]]\nname = \"v\"\nfrom = \"n0\"\n\
             to = \"n1\"\nmodel = \"CBR\"\nflows = {flows}\nper_flow = false\n"
        )
    };
    let calls = |flows: u64| {
        let sc = qossim::parse(&text(flows), "s.toml", Path::new("."), &[]).unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = seen.clone();
        let opts = scenario::RunOptions {
            build_progress: Some(scenario::BuildProgress(std::sync::Arc::new(
                move |done, total| log.lock().unwrap().push((done, total)),
            ))),
            ..Default::default()
        };
        scenario::run_with(&sc, Some(1), &mut |_| true, &opts).unwrap();
        let v = seen.lock().unwrap().clone();
        v
    };
    let step = scenario::BUILD_PROGRESS_STEP;
    let n = 2 * step + 1000;
    assert_eq!(
        calls(n),
        vec![(step, n), (2 * step, n), (n, n)],
        "every step and the end"
    );
    assert!(calls(step - 1).is_empty());
}

#[test]
fn a_graph_without_nodes_is_one_diagnostic() {
    // Found by the scenario fuzzer: reading stopped without saying why.
    let text = "[run]\nduration = \"1s\"\n[topology]\nkind = \"graph\"\n";
    let d = match qossim::parse(text, "s.toml", std::path::Path::new("."), &[]) {
        Ok(_) => panic!("accepted"),
        Err(d) => d,
    };
    assert_eq!(d.len(), 1, "{d:?}");
    let msg = d[0].to_string();
    assert!(
        msg.starts_with("s.toml:3: topology.nodes: missing"),
        "{msg}"
    );
}

#[test]
fn calls_arrive_from_their_entry_start() {
    // A start time used to be ignored by call arrivals. 10 calls/s from 50 s on, for the
    // last 10 s of a 60-s run: about 100 calls (Poisson, sd 10), not 600.
    let text = "[run]\nduration = \"60s\"\n[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\n\
                [[traffic]]\nname = \"c\"\nfrom = \"a\"\nto = \"b\"\nmodel = \"cbr\"\nsize = \"100B\"\n\
                interval = \"10ms\"\nstart = \"50s\"\n[traffic.calls]\nrate = \"10/s\"\nholding = \"exp:1s\"\n";
    let sc = qossim::parse(text, "s.toml", std::path::Path::new("."), &[]).expect("valid");
    let out = qossim::run(&sc, Some(1), &mut |_| true).expect("run");
    let offered = out.summary["agent.traffic.c.offered_calls"]
        .as_f64()
        .unwrap();
    assert!((60.0..=140.0).contains(&offered), "{offered}");
}

#[test]
fn an_on_off_source_needs_an_on_period() {
    // Found by the fuzzer: a zero on period overflowed the source's packet clock.
    let text = "[run]\nduration = \"1s\"\n[topology]\nkind = \"single_link\"\nrate = \"10Mbps\"\n\
                [[traffic]]\nname = \"x\"\nfrom = \"a\"\nto = \"b\"\nmodel = \"onoff\"\nsize = \"100B\"\n\
                interval = \"1ms\"\non = \"0s\"\noff = \"exp:1s\"\n";
    let d = qossim::parse(text, "s.toml", std::path::Path::new("."), &[]).unwrap_err();
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0]
        .to_string()
        .contains("traffic.0.on: its mean must be positive"));
}

#[test]
fn a_misspelt_kind_or_model_is_one_diagnostic_with_the_closest_name() {
    let topo = diags(&OK.replace("kind = \"dumbbell\"", "kind = \"dumbel\""));
    assert_eq!(topo.len(), 1, "{topo:?}");
    assert_eq!(topo[0].path, "topology.kind");
    assert!(
        topo[0]
            .reason
            .contains("unknown topology \"dumbel\" (did you mean \"dumbbell\"?)"),
        "{}",
        topo[0].reason
    );

    let model = diags(&OK.replace(
        "model = \"CBR\"",
        "model = \"tpc\"\npacket_size = \"1500B\"",
    ));
    assert_eq!(model.len(), 1, "{model:?}");
    assert!(
        model[0].reason.contains("(did you mean \"tcp\"?)"),
        "{}",
        model[0].reason
    );

    let queue = OK.replace(
        "[[traffic]]",
        "[links.\"r0-r1\"]\nqueue = { kind = \"codle\", target = \"5ms\" }\n[[traffic]]",
    );
    let queue = diags(&queue);
    assert_eq!(queue.len(), 1, "{queue:?}");
    assert!(
        queue[0].reason.contains("(did you mean \"codel\"?)"),
        "{}",
        queue[0].reason
    );

    // A name far from every kind gets no guess.
    let far = diags(&OK.replace("kind = \"dumbbell\"", "kind = \"zzzzzzzzzz\""));
    assert!(!far[0].reason.contains("did you mean"), "{}", far[0].reason);
}

#[test]
fn what_cannot_be_meant_is_refused_on_its_line() {
    let base = OK.to_string();
    // A stop before its start.
    let stopped = base.replace("flows = 10", "flows = 10\nstart = \"1.5s\"\nstop = \"1s\"");
    let d = diags(&stopped);
    assert_eq!(d.len(), 1, "{d:?}");
    let stop_line = line_with(&stopped, "stop = ", 0);
    assert_eq!(
        (d[0].line, d[0].path.as_str()),
        (stop_line, "traffic.0.stop")
    );
    assert!(
        d[0].reason.starts_with("must be after start (1.5 s)"),
        "{}",
        d[0].reason
    );
    // A looping route.
    let d = diags(&base.replace(
        "flows = 10",
        "flows = 10\nroute = [\"s0\", \"r0\", \"s0\", \"r0\", \"r1\", \"d1\"]",
    ));
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].reason.contains("\"s0\" appears twice"),
        "{}",
        d[0].reason
    );
    // Names that would forge lines or reorder a terminal, or that are empty.
    for (name, needle) in [
        ("v\\nlink.x.drops 0", "U+000A"),
        ("v\\u202e", "U+202E"),
        ("v\\u0000", "U+0000"),
        ("", "may not be empty"),
    ] {
        let d = diags(&base.replace("name = \"v\"", &format!("name = \"{name}\"")));
        assert_eq!(d.len(), 1, "{name}: {d:?}");
        assert_eq!(d[0].path, "traffic.0.name");
        assert!(d[0].reason.contains(needle), "{name}: {}", d[0].reason);
    }
    let long = "x".repeat(201);
    let d = diags(&base.replace("name = \"v\"", &format!("name = \"{long}\"")));
    assert!(
        d[0].reason.contains("at most 200 characters"),
        "{}",
        d[0].reason
    );
    // Duplicate traffic names and metric series are blamed on the second one's line.
    let twice = format!(
        "{base}\n[[traffic]]\nname = \"v\"\nfrom = \"s1\"\nto = \"d0\"\nmodel = \"CBR\"\n\
         [[metric]]\nkind = \"link_throughput\"\nlink = \"r0-r1\"\n"
    );
    let d = diags(&twice);
    assert_eq!(d.len(), 2, "{d:?}");
    let first = line_with(&twice, "name = \"v\"", 0);
    let second = line_with(&twice, "name = \"v\"", 1);
    assert_eq!((d[0].line, d[0].path.as_str()), (second, "traffic.1.name"));
    let said = format!("first given on line {first}");
    assert!(d[0].reason.contains(&said), "{}", d[0].reason);
    let header = line_with(&twice, "[[metric]]", 1);
    assert_eq!(d[1].path, "metric.1.name");
    assert!((header..header + 3).contains(&d[1].line), "{d:?}");
    assert!(
        d[1].reason
            .contains("a second series named \"r0-r1.throughput\""),
        "{}",
        d[1].reason
    );
}

/// The line (from 1) of the `nth` (from 0) line of `text` that contains `needle`.
fn line_with(text: &str, needle: &str, nth: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .nth(nth)
        .map(|(i, _)| i + 1)
        .expect("needle")
}

#[test]
fn a_traffic_entry_is_addressed_by_its_name_in_overrides() {
    let by_name = vec![("traffic.v.flows".to_string(), "20".to_string())];
    let sc = qossim::parse(OK, "s.toml", Path::new("."), &by_name).unwrap();
    assert_eq!(sc.traffic[0].flows, 20);
    // A mistake through a name is blamed on --set, at the entry's resolved path.
    let bad = vec![("traffic.v.flows".to_string(), "-3".to_string())];
    let d = qossim::parse(OK, "s.toml", Path::new("."), &bad).unwrap_err();
    assert_eq!(
        (d[0].file.as_str(), d[0].path.as_str()),
        ("--set", "traffic.0.flows")
    );
    let unknown = vec![("traffic.ftp.flows".to_string(), "2".to_string())];
    let d = qossim::parse(OK, "s.toml", Path::new("."), &unknown).unwrap_err();
    assert_eq!(d[0].file, "--set");
    assert!(
        d[0].reason.contains("no entry named \"ftp\" (named: v)"),
        "{}",
        d[0].reason
    );
}

/// The first seven lines of the `count` tests' scenarios.
const COUNT_HEAD: &str = r#"[run]
duration = "1s"
[topology]
kind = "dumbbell"
hosts = 3
access_rate = "10Mbps"
bottleneck_rate = "10Mbps"
"#;

/// A mistake in an entry with a `count` is reported once, at the file's line, under the
/// entry's place in the file; lines after the entry keep their file numbers.
#[test]
fn mistakes_in_counted_entries_name_the_files_lines() {
    let text = COUNT_HEAD.to_string()
        + r#"
[[traffic]]
name = "v{i}"
count = 3
from = "s{i}"
bogus = 1
to = "d{i}"
model = "CBR"

[[traffic]]
name = "w"
from = "s0"
to = "nowhere"
model = "CBR"

[[metric]]
kind = "link_throughput"
link = "r9-r1"
"#;
    let d = diags(&text);
    let got: Vec<(usize, &str)> = d.iter().map(|x| (x.line, x.path.as_str())).collect();
    assert_eq!(
        got,
        [
            (13, "traffic.0.bogus"),
            (20, "traffic.1.to"),
            (25, "metric.0.link")
        ],
        "{d:#?}"
    );
    // The expanded text has three copies of the first entry: lines 13, 20 and 25 of the
    // file would be elsewhere in it.
    assert_eq!(d.iter().filter(|x| x.path.contains("bogus")).count(), 1);
}

/// A copy whose own substitution is wrong (s3 of a three-host dumbbell) is named by its
/// copy number.
#[test]
fn a_mistake_in_one_copy_names_the_copy() {
    let text = COUNT_HEAD.to_string()
        + r#"[[traffic]]
name = "v{i}"
count = 4
from = "s{i}"
to = "d0"
model = "CBR"
"#;
    let d = diags(&text);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!((d[0].line, d[0].path.as_str()), (11, "traffic.0.from"));
    assert!(d[0].reason.contains("copy 3"), "{}", d[0].reason);
}

#[test]
fn a_key_of_another_model_names_the_models_that_take_it() {
    // A named model takes no parameters: `size` belongs to the packet models.
    let d = diags(&OK.replace("flows = 10", "flows = 10\nsize = \"100B\""));
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].path, "traffic.0.size");
    assert_eq!(d[0].line, 16);
    assert_eq!(
        d[0].reason,
        "not used by model \"CBR\"; only used by models \"cbr\", \"onoff\", \"poisson\" or \
         \"trace\" (it takes no parameters)"
    );
    // A packet model given a TCP key, with the keys it does take.
    let cbr = OK.replace(
        "model = \"CBR\"",
        "model = \"cbr\"\nsize = \"100B\"\ninterval = \"1ms\"\necn = true",
    );
    let d = diags(&cbr);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        d[0].reason,
        "not used by model \"cbr\"; only used by model \"tcp\"; model \"cbr\" takes size, interval"
    );
    // A misspelt model is one diagnostic with the closest name.
    let d = diags(&OK.replace("\"CBR\"", "\"onof\""));
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].reason
            .starts_with("unknown model \"onof\" (did you mean \"onoff\"?)"),
        "{d:?}"
    );
}
