//! The `[pcn]` section and its tables read through their declaration
//! (`mechanisms::pcn::params`): what `qossim describe` lists as `family.pcn*` is what the
//! reader accepts, and a value outside its declared bounds gets the declared reason at
//! its own line.

use qossim::decl::{Param, Value};
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
