//! The core sections of the scenario language (`[[traffic]]`, `[run]`, ...) are declared
//! once (`qossim::scenario::sections`): what `qossim describe core.NAME` lists is what the
//! reader accepts, a value out of its declared bounds gets the declared message at its
//! line, and a declared default written out reads as the same value as the key left out.
//! The same holds for the core topology kinds (`qossim::scenario::topology_kinds`).

use qossim::decl::{Absent, Bounds, Section, Type, Value};
use qossim::scenario::sections::{METRIC, RUN, TRAFFIC};
use qossim::scenario::topology_kinds::{DUMBBELL, GRAPH, GRAPH_LINK, KINDS, MERGING, RING};
use qossim::scenario::Diagnostic;
use std::collections::BTreeSet;
use std::path::Path;

const OK: &str = r#"[run]
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
model = "cbr"
size = "200B"
interval = "20ms"
"#;

fn diags(text: &str) -> Vec<Diagnostic> {
    qossim::parse(text, "s.toml", Path::new("."), &[]).expect_err("should be invalid")
}

/// The keys `qossim describe` lists for the kind `kind` (`core.traffic`).
fn described(kind: &str) -> Vec<String> {
    let all = qossim::decl::catalogue();
    let k = all
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == kind)
        .unwrap_or_else(|| panic!("{kind} is not described"));
    k["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap().to_string())
        .collect()
}

/// The keys the reader accepts in the table at `path`, from its message for an unknown
/// key (`unknown key ...; expected one of: a, b, c`).
fn accepted(text: &str, path: &str) -> BTreeSet<String> {
    let d = diags(text);
    let unknown = d
        .iter()
        .find(|d| d.path == path)
        .unwrap_or_else(|| panic!("no diagnostic at {path}: {d:#?}"));
    let (_, list) = unknown
        .reason
        .split_once("expected one of: ")
        .unwrap_or_else(|| panic!("{}", unknown.reason));
    list.split(", ").map(str::to_string).collect()
}

#[test]
fn describe_core_traffic_lists_every_key_the_reader_accepts() {
    let text = format!("{OK}bogus_key = 1\n");
    let reader = accepted(&text, "traffic.0.bogus_key");
    // The entry's own keys, and those of every traffic model with parameters.
    let mut listed: BTreeSet<String> = described("core.traffic").into_iter().collect();
    for m in qossim::traffic::MODELS {
        listed.extend(described(&m.qualified()));
    }
    assert_eq!(reader, listed);
}

#[test]
fn describe_core_run_lists_every_key_the_reader_accepts() {
    let text = OK.replace("warmup = \"0.5s\"", "warmup = \"0.5s\"\nwarm_up = 1");
    let reader = accepted(&text, "run.warm_up");
    let listed: BTreeSet<String> = described("core.run").into_iter().collect();
    assert_eq!(reader, listed);
}

#[test]
fn describe_core_links_lists_every_key_the_reader_accepts() {
    let text = format!("{OK}[links.\"r0-r1\"]\nrat = \"1Mbps\"\n");
    let reader = accepted(&text, "links.r0-r1.rat");
    let listed: BTreeSet<String> = described("core.links").into_iter().collect();
    assert_eq!(reader, listed);
    // And each reads into the link.
    let text = format!("{OK}[links.\"r0-r1\"]\nrate = \"3Mbps\"\ndelay = \"7ms\"\n");
    let sc = qossim::parse(&text, "s.toml", Path::new("."), &[]).unwrap();
    let l = &sc.topology.links[sc.topology.link("r0-r1").unwrap()];
    assert_eq!((l.rate, l.delay), (3_000_000, 7_000_000_000));
}

#[test]
fn describe_core_metric_lists_every_key_the_reader_accepts() {
    let metric = "[[metric]]\nkind = \"queue_length\"\nlink = \"r0-r1\"\n";
    let text = format!("{OK}{metric}intervall = \"1s\"\n");
    let reader = accepted(&text, "metric.0.intervall");
    let listed: BTreeSet<String> = described("core.metric").into_iter().collect();
    assert_eq!(reader, listed);
    // An unknown kind is refused with the declared choices and a did-you-mean.
    let text = format!("{OK}[[metric]]\nkind = \"queue_lenght\"\nlink = \"r0-r1\"\n");
    let d = diags(&text);
    let reason = METRIC
        .param("kind")
        .check(&Value::Text("queue_lenght".into()))
        .unwrap();
    assert!(reason.contains("did you mean \"queue_length\""), "{reason}");
    assert_eq!(d.len(), 1, "{d:#?}");
    let line = OK.lines().count() + 2;
    assert_eq!((d[0].line, d[0].reason.as_str()), (line, reason.as_str()));
}

/// `key = default` as a scenario writes it.
fn written(p: &qossim::decl::Param, d: &str) -> String {
    match p.ty {
        Type::Number | Type::Integer | Type::Bool => format!("{} = {d}", p.key),
        _ => format!("{} = {d:?}", p.key),
    }
}

/// Each fixed default of `section`, written out in the table that ends `OK` (or opens
/// it, for `[run]`), reads as the same scenario as the key left out.
fn defaults_read_as_absent(section: &Section, anchor: &str) {
    let absent = qossim::parse(OK, "s.toml", Path::new("."), &[]).unwrap();
    for p in section.params {
        let Absent::Is(d) = p.default else { continue };
        if OK.contains(&format!("\n{} =", p.key)) {
            continue;
        }
        let text = OK.replace(anchor, &format!("{anchor}\n{}", written(p, d)));
        let sc = qossim::parse(&text, "s.toml", Path::new("."), &[])
            .unwrap_or_else(|e| panic!("{}: {e:#?}", p.key));
        assert_eq!(sc.run, absent.run, "{}", p.key);
        let (a, b) = (&sc.traffic[0], &absent.traffic[0]);
        assert_eq!(
            (a.flows, a.start, a.stop, a.jitter, a.class, a.per_flow),
            (b.flows, b.start, b.stop, b.jitter, b.class, b.per_flow),
            "{}",
            p.key
        );
    }
}

#[test]
fn a_declared_default_written_out_reads_as_the_key_left_out() {
    defaults_read_as_absent(&TRAFFIC, "interval = \"20ms\"");
    defaults_read_as_absent(&RUN, "warmup = \"0.5s\"");
}

/// The one diagnostic of `text` is at `line`, `path`, with the reason `section` declares
/// for `key` holding `v`.
fn declared_message(text: &str, line: usize, path: &str, section: &Section, key: &str, v: Value) {
    let d = diags(text);
    let reason = section.param(key).check(&v).expect("out of bounds");
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!((d[0].line, d[0].path.as_str()), (line, path), "{d:#?}");
    assert_eq!(d[0].reason, reason);
}

#[test]
fn an_out_of_bounds_key_gives_the_declared_message_at_its_line() {
    let run = OK.replace("duration = \"2s\"", "duration = \"0s\"");
    declared_message(&run, 2, "run.duration", &RUN, "duration", Value::Time(0));
    let entry = format!("{OK}jitter = 1.5\n");
    let line = entry.lines().count();
    declared_message(
        &entry,
        line,
        "traffic.0.jitter",
        &TRAFFIC,
        "jitter",
        Value::Number(1.5),
    );
    let entry = format!("{OK}class = 256\n");
    declared_message(
        &entry,
        line,
        "traffic.0.class",
        &TRAFFIC,
        "class",
        Value::Integer(256),
    );
    let metric =
        format!("{OK}[[metric]]\nkind = \"queue_length\"\nlink = \"r0-r1\"\ninterval = \"0s\"\n");
    declared_message(
        &metric,
        metric.lines().count(),
        "metric.0.interval",
        &METRIC,
        "interval",
        Value::Time(0),
    );
}

/// A `[topology]` of the core kind `k` with every required key given (the smallest count
/// its bounds allow), a default `rate` where the kind takes one, and `extra` last.
fn topology_of(k: &Section, extra: &str) -> String {
    let mut text = format!(
        "[run]\nduration = \"1s\"\n[topology]\nkind = {:?}\n",
        k.name
    );
    for p in k.params {
        let value = match (p.default, p.ty, p.bounds) {
            (Absent::Required, Type::Integer, Bounds::Between(lo, _)) => format!("{lo}"),
            (Absent::Required, Type::Names, _) => "[\"a\", \"b\"]".into(),
            (_, Type::Rate, _) if p.key == "rate" => "\"10Mbps\"".into(),
            (Absent::Required, ty, _) => panic!("{}.{}: no value for {ty:?}", k.name, p.key),
            _ => continue,
        };
        text.push_str(&format!("{} = {value}\n", p.key));
    }
    text.push_str(extra);
    text
}

/// The core topology kinds, then those the families declare.
fn topology_kinds() -> Vec<&'static Section> {
    let mut all = KINDS.to_vec();
    for f in qossim::mechanisms::registry().families() {
        all.extend(f.topology_declared());
    }
    all
}

#[test]
fn describe_topology_lists_every_key_each_core_kind_accepts() {
    assert_eq!(KINDS.len(), 9);
    let kinds = topology_kinds();
    assert!(kinds.iter().any(|k| k.name == "rpr_ring"));
    for k in &kinds {
        // Valid as it stands: the keys are judged, not a missing one.
        let ok = topology_of(k, "");
        qossim::parse(&ok, "s.toml", Path::new("."), &[])
            .unwrap_or_else(|e| panic!("{}: {e:#?}", k.name));
        let text = topology_of(k, "bogus_key = 1\n");
        let reader = accepted(&text, "topology.bogus_key");
        let mut listed: BTreeSet<String> = described(&format!("topology.{}", k.name))
            .into_iter()
            .collect();
        listed.insert("kind".into());
        assert_eq!(reader, listed, "{}", k.name);
    }
    // And a key another kind declares is refused, not read and ignored.
    let every: BTreeSet<&str> = kinds.iter().flat_map(|k| k.keys()).collect();
    for k in &kinds {
        for key in every.iter().filter(|key| !k.keys().contains(key)) {
            let text = topology_of(k, &format!("{key} = 1\n"));
            let path = format!("topology.{key}");
            let d = diags(&text);
            assert!(
                d.iter()
                    .any(|d| d.path == path && d.reason.starts_with("unknown key")),
                "{}: {key} is not refused: {d:#?}",
                k.name
            );
        }
    }
    // A graph's link entries take the keys of topology.graph.link.
    let link = "[[topology.link]]\nfrom = \"a\"\nto = \"b\"\nbogus_key = 1\n";
    let reader = accepted(&topology_of(&GRAPH, link), "topology.link.0.bogus_key");
    let listed: BTreeSet<String> = described("topology.graph.link").into_iter().collect();
    assert_eq!(reader, listed);
    assert_eq!(
        listed,
        GRAPH_LINK.keys().into_iter().map(str::to_string).collect()
    );
}

#[test]
fn an_out_of_bounds_topology_count_gives_the_declared_message_at_its_line() {
    let text = topology_of(&DUMBBELL, "").replace("hosts = 1", "hosts = 0");
    let line = text.lines().position(|l| l == "hosts = 0").unwrap() + 1;
    declared_message(
        &text,
        line,
        "topology.hosts",
        &DUMBBELL,
        "hosts",
        Value::Integer(0),
    );
    assert_eq!(
        DUMBBELL.param("hosts").check(&Value::Integer(0)).unwrap(),
        "must be between 1 and 100000, got 0"
    );
    let text = topology_of(&RING, "").replace("nodes = 3", "nodes = 2");
    let line = text.lines().position(|l| l == "nodes = 2").unwrap() + 1;
    declared_message(
        &text,
        line,
        "topology.nodes",
        &RING,
        "nodes",
        Value::Integer(2),
    );
}

#[test]
fn a_merging_topology_reads_its_declared_defaults() {
    // The defaults are stated once, in the declaration: a T1 bottleneck of 4 ms.
    let text = topology_of(&MERGING, "");
    let sc = qossim::parse(&text, "s.toml", Path::new("."), &[]).unwrap();
    let t = &sc.topology;
    let l = &t.links[t.link("r6-r7").unwrap()];
    assert_eq!((l.rate, l.delay), (1_544_000, 4_000_000_000));
    let l = &t.links[t.link("r4-r6").unwrap()];
    assert_eq!((l.rate, l.delay), (10_000_000, 3_000_000_000));
    // It takes no rate of its own: every link's rate is one of its keys.
    let text = topology_of(&MERGING, "rate = \"1Mbps\"\n");
    assert!(accepted(&text, "topology.rate").contains("core_rate"));
}
