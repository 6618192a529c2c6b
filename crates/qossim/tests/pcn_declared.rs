//! The `[pcn]` section and its tables read through their declaration
//! (`mechanisms::pcn::params`): what `qossim describe` lists as `family.pcn*` is what the
//! reader accepts, and a value outside its declared bounds gets the declared reason at
//! its own line. The same for the family's topology kinds (`topology.pcn_*`), whose
//! declared defaults also read as the key left out.

use qossim::decl::{Absent, Bounds, Param, Section, Type, Value};
use qossim::mechanisms::pcn::params;
use std::path::Path;

/// A valid scenario with every table of `[pcn]` once, each under its own header;
/// `[pcn.traffic]` or, with `iea`, one `[[pcn.iea]]` entry.
fn base(iea: bool) -> String {
    let aggregates = if iea {
        "[[pcn.iea]]\ningress = \"A\"\negress = \"B\"\nmodel = \"CBR\"\noffered = 0.5\n"
    } else {
        "[pcn.traffic]\nmodel = \"CBR\"\noffered = 0.5\n"
    };
    format!(
        "[run]\nduration = \"10s\"\n[topology]\nkind = \"pcn_single\"\nrate = \"T3\"\n\
         [pcn]\nra = 0.5\n[pcn.thresholds]\nmin = \"5ms\"\n[pcn.cle]\nmode = \"per_packet\"\n\
         [pcn.termination]\nrt = 0.5\nt_fail = \"5s\"\n{aggregates}"
    )
}

/// `text` with `line` inserted after the header `written` (the first line of `[pcn]`'s
/// table when it is `[pcn]`); the number of the inserted line.
fn insert_after(text: &str, written: &str, line: &str) -> (String, usize) {
    let mut lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == written)
        .unwrap_or_else(|| panic!("{written} is not in the base scenario"))
        + 1;
    lines.insert(at, line);
    (lines.join("\n") + "\n", at + 1)
}

fn diagnostics(text: &str) -> Vec<qossim::scenario::Diagnostic> {
    match qossim::parse(text, "s.toml", Path::new("."), &[]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(d) => d,
    }
}

#[test]
fn the_base_scenarios_are_valid() {
    for iea in [false, true] {
        if let Err(d) = qossim::parse(&base(iea), "s.toml", Path::new("."), &[]) {
            panic!("{d:?}");
        }
    }
}

/// For every `family.pcn*` entry of the catalogue (what `qossim describe` prints), an
/// unknown key in that table is refused with the list of the keys the reader accepts
/// there: that list is the declared keys (plus the traffic models' keys where `model`
/// is declared), no more, no fewer.
#[test]
fn describe_lists_every_key_the_reader_accepts() {
    let catalogue = qossim::decl::catalogue();
    let sections: Vec<&serde_json::Value> = catalogue
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| {
            let kind = k["kind"].as_str().unwrap();
            kind == "family.pcn" || kind.starts_with("family.pcn.")
        })
        .collect();
    assert_eq!(sections.len(), params::DECLARED.len());
    for s in sections {
        let written = s["written"].as_str().unwrap();
        let mut declared: Vec<String> = s["params"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["key"].as_str().unwrap().to_string())
            .collect();
        if declared.iter().any(|k| k == "model") {
            declared.extend(qossim::traffic::model_keys().iter().map(|k| k.to_string()));
        }
        declared.sort();
        declared.dedup();
        let (text, line) = insert_after(&base(written == "[[pcn.iea]]"), written, "zzz = 1");
        let d = diagnostics(&text);
        assert_eq!(d.len(), 1, "{written}: {d:?}");
        let d = &d[0];
        assert_eq!(d.line, line, "{written}: {d}");
        assert!(d.path.ends_with(".zzz"), "{written}: {d}");
        let (_, list) = d
            .reason
            .split_once("expected one of: ")
            .unwrap_or_else(|| panic!("{written}: {d}"));
        let mut accepted: Vec<String> = list.split(", ").map(String::from).collect();
        accepted.sort();
        assert_eq!(accepted, declared, "{written}");
    }
}

/// Values outside their declared bounds, one per table: each is refused once, at its
/// line, with the reason the declaration gives for that value.
#[test]
fn out_of_bounds_values_get_the_declared_reason_at_their_line() {
    let at = |written, key: &str| -> Param {
        let s = params::DECLARED
            .iter()
            .find(|s| s.written == written)
            .unwrap();
        *s.param(key)
    };
    let ms = qossim::time::millis;
    // (table, key, TOML value, the value as read)
    let cases: &[(&str, &str, &str, Value)] = &[
        ("[pcn]", "ra", "1.5", Value::Number(1.5)),
        ("[pcn]", "sample_interval", "\"0s\"", Value::Time(0)),
        ("[pcn.thresholds]", "limit", "\"0ms\"", Value::Time(0)),
        ("[pcn.cle]", "threshold", "0", Value::Number(0.0)),
        ("[pcn.cle]", "w", "1.01", Value::Number(1.01)),
        ("[pcn.termination]", "rt", "2", Value::Number(2.0)),
        ("[pcn.termination]", "depth", "0", Value::Integer(0)),
        (
            "[pcn.termination]",
            "sar_period",
            "\"0ms\"",
            Value::Time(ms(0.0)),
        ),
        ("[pcn.traffic]", "jitter", "1.5", Value::Number(1.5)),
        ("[pcn.traffic]", "offered", "1001", Value::Number(1001.0)),
        ("[[pcn.iea]]", "share", "inf", Value::Number(f64::INFINITY)),
        ("[[pcn.iea]]", "share", "-1", Value::Number(-1.0)),
    ];
    for (written, key, toml, v) in cases {
        let p = at(*written, key);
        let reason = p
            .check(v)
            .unwrap_or_else(|| panic!("{written} {key} = {toml} is in bounds"));
        let mut text = base(*written == "[[pcn.iea]]");
        // The key replaces the base's own, if it gives one.
        text = text
            .lines()
            .filter(|l| !l.starts_with(&format!("{key} =")))
            .collect::<Vec<_>>()
            .join("\n");
        let (text, line) = insert_after(&text, written, &format!("{key} = {toml}"));
        let d = diagnostics(&text);
        let shown: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        let table = written.trim_matches(|c| c == '[' || c == ']');
        let want = format!(
            "s.toml:{line}: {table}{}.{key}: {reason}",
            iea_index(written)
        );
        assert_eq!(shown, vec![want], "{text}");
    }
}

/// The index a `[[pcn.iea]]` entry's keys carry in their path.
fn iea_index(written: &str) -> &'static str {
    if written == "[[pcn.iea]]" {
        ".0"
    } else {
        ""
    }
}

// ---------------------------------------------------------------------------------------
// The topology kinds

/// A valid scenario on the PCN topology `k`: each required key given (a count one above
/// its lowest bound, so the bound below is one step away), then `[pcn.traffic]`. The
/// `[topology]` header is line 3, `kind` line 4.
fn on_topology(k: &Section) -> String {
    let mut text = format!(
        "[run]\nduration = \"10s\"\n[topology]\nkind = {:?}\n",
        k.name
    );
    for p in k.params.iter().filter(|p| p.default == Absent::Required) {
        let value = match (p.ty, p.bounds) {
            (Type::Integer, Bounds::Between(lo, _)) => format!("{}", lo + 1.0),
            (Type::Rate, _) => "\"T3\"".into(),
            (ty, _) => panic!("{}.{}: no value for {ty:?}", k.name, p.key),
        };
        text.push_str(&format!("{} = {value}\n", p.key));
    }
    text + "[pcn]\n[pcn.traffic]\nmodel = \"CBR\"\noffered = 0.5\n"
}

/// `text` with the line `key = ...` of `[topology]` replaced by (or, absent, `line`
/// added after `kind`); the number of that line.
fn set_topology_key(text: &str, key: &str, line: &str) -> (String, usize) {
    let mut lines: Vec<&str> = text.lines().collect();
    let at = match lines
        .iter()
        .position(|l| l.starts_with(&format!("{key} =")))
    {
        Some(i) => {
            lines[i] = line;
            i
        }
        None => {
            lines.insert(4, line);
            4
        }
    };
    (lines.join("\n") + "\n", at + 1)
}

fn parsed(text: &str) -> qossim::scenario::Scenario {
    qossim::parse(text, "s.toml", Path::new("."), &[]).unwrap_or_else(|d| panic!("{text}\n{d:?}"))
}

#[test]
fn the_family_declares_each_of_its_topology_kinds() {
    use qossim::scenario::Family;
    let names: Vec<&str> = params::TOPOLOGIES.iter().map(|k| k.name).collect();
    assert_eq!(names, qossim::mechanisms::pcn::PCN.topology_kinds());
    assert_eq!(names, ["pcn_single", "pcn_rtt", "pcn_parking_lot"]);
    for k in params::TOPOLOGIES {
        parsed(&on_topology(k));
    }
}

/// For each PCN topology kind, an unknown key in `[topology]` is refused, once, at its
/// line, with the list of the keys the reader accepts: `kind` and what `qossim describe
/// topology.NAME` lists, no more, no fewer. A key of another PCN kind is refused too.
#[test]
fn describe_lists_every_key_each_pcn_topology_accepts() {
    let catalogue = qossim::decl::catalogue();
    for k in params::TOPOLOGIES {
        let entry = catalogue
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["kind"] == format!("topology.{}", k.name))
            .unwrap_or_else(|| panic!("topology.{} is not described", k.name));
        assert_eq!(entry["written"], k.written);
        let mut declared: Vec<String> = entry["params"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["key"].as_str().unwrap().to_string())
            .collect();
        declared.push("kind".into());
        declared.sort();
        let (text, line) = set_topology_key(&on_topology(k), "zzz", "zzz = 1");
        let d = diagnostics(&text);
        assert_eq!(d.len(), 1, "{}: {d:?}", k.name);
        assert_eq!((d[0].line, d[0].path.as_str()), (line, "topology.zzz"));
        let (_, list) = d[0]
            .reason
            .split_once("expected one of: ")
            .unwrap_or_else(|| panic!("{}: {}", k.name, d[0]));
        let mut accepted: Vec<String> = list.split(", ").map(String::from).collect();
        accepted.sort();
        assert_eq!(accepted, declared, "{}", k.name);
        for other in params::TOPOLOGIES.iter().flat_map(|o| o.keys()) {
            if k.keys().contains(&other) {
                continue;
            }
            let (text, line) = set_topology_key(&on_topology(k), other, &format!("{other} = 1"));
            let d = diagnostics(&text);
            assert_eq!(d.len(), 1, "{}.{other}: {d:?}", k.name);
            assert_eq!(d[0].line, line);
            assert!(d[0].reason.starts_with("unknown key"), "{}", d[0]);
        }
    }
}

/// Counts outside their declared bounds, and required keys left out: each is refused
/// once, at its line (the table's for a missing key), with the declared reason.
#[test]
fn out_of_bounds_topology_values_get_the_declared_reason_at_their_line() {
    let kind = |name| *params::TOPOLOGIES.iter().find(|k| k.name == name).unwrap();
    let cases: &[(&str, &str, u64)] = &[
        ("pcn_rtt", "ingresses", 0),
        ("pcn_rtt", "ingresses", 100_001),
        ("pcn_rtt", "egresses", 0),
        ("pcn_rtt", "egresses", 1001),
        ("pcn_parking_lot", "bottlenecks", 0),
        ("pcn_parking_lot", "bottlenecks", 1001),
    ];
    for &(name, key, n) in cases {
        let k = kind(name);
        let reason = k
            .param(key)
            .check(&Value::Integer(n))
            .unwrap_or_else(|| panic!("{name}.{key} = {n} is in bounds"));
        let (text, line) = set_topology_key(&on_topology(k), key, &format!("{key} = {n}"));
        let shown: Vec<String> = diagnostics(&text).iter().map(|d| d.to_string()).collect();
        assert_eq!(
            shown,
            vec![format!("s.toml:{line}: topology.{key}: {reason}")],
            "{text}"
        );
    }
    for k in params::TOPOLOGIES {
        for p in k.params.iter().filter(|p| p.default == Absent::Required) {
            let text: String = on_topology(k)
                .lines()
                .filter(|l| !l.starts_with(&format!("{} =", p.key)))
                .map(|l| format!("{l}\n"))
                .collect();
            let shown: Vec<String> = diagnostics(&text).iter().map(|d| d.to_string()).collect();
            let want = format!(
                "s.toml:3: topology.{}: missing (required: {})",
                p.key, p.doc
            );
            assert_eq!(shown, vec![want], "{text}");
        }
    }
}

/// Each fixed default of a PCN topology kind written out reads as the same network as
/// the key left out; and left out, the network is the one the model's builder makes with
/// the documented values (1-ms delays, one egress, drop-tail queues of
/// `DEFAULT_QUEUE_PACKETS` packets).
#[test]
fn a_declared_topology_default_written_out_reads_as_the_key_left_out() {
    use qossim::mechanisms::pcn::{
        parking_lot, rtt_star_egresses, single_link, DEFAULT_QUEUE_PACKETS,
    };
    use qossim::scenario::units::QueueLimit;
    use qossim::scenario::QueueSpec;
    let mut fixed = 0;
    for k in params::TOPOLOGIES {
        let absent = parsed(&on_topology(k)).topology;
        for p in k.params {
            let Absent::Is(d) = p.default else { continue };
            let (text, _) = set_topology_key(
                &on_topology(k),
                p.key,
                &format!("{} = {}", p.key, p.ty.toml(d)),
            );
            assert_eq!(parsed(&text).topology, absent, "{}.{}", k.name, p.key);
            fixed += 1;
        }
        // The network of the defaults, built by hand.
        let t3 = 44_736_000;
        let ms = qossim::time::PS_PER_MS;
        let mut w = qossim::world::World::new(0);
        match k.name {
            "pcn_single" => drop(single_link(&mut w, t3, ms)),
            "pcn_rtt" => drop(rtt_star_egresses(&mut w, t3, ms, &[ms, ms], 1)),
            _ => drop(parking_lot(&mut w, 2, t3)),
        }
        let nodes: Vec<String> = w.net.nodes.iter().map(|n| n.name.clone()).collect();
        assert_eq!(absent.nodes, nodes, "{}", k.name);
        assert_eq!(absent.links.len(), w.net.links.len(), "{}", k.name);
        for (a, b) in absent.links.iter().zip(&w.net.links) {
            assert_eq!(
                (a.name.as_str(), a.from, a.to, a.rate, a.delay),
                (
                    b.name.as_str(),
                    b.from as usize,
                    b.to as usize,
                    b.rate_bps,
                    b.delay
                ),
                "{}",
                k.name
            );
            assert_eq!(
                a.queue,
                QueueSpec::DropTail {
                    limit: QueueLimit::Packets(DEFAULT_QUEUE_PACKETS as u64)
                }
            );
        }
    }
    // delay; egresses, access_delay and bottleneck_delay.
    assert_eq!(fixed, 4);
}
