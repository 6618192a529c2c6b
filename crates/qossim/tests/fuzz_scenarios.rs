//! A CI-sized fuzzing run of the scenario reader, builder and engine (see `fuzz/mod.rs`;
//! `cargo run --release --example fuzz -- SECONDS` runs a long one).

mod common;
mod fuzz;

#[test]
fn mutated_scenarios_are_rejected_clearly_or_run() {
    // The memory budget is the machine's unless set: fix it, so the outcome is the same
    // everywhere.
    std::env::set_var(qossim::scenario::budget::BUDGET_ENV, "8GiB");
    let t = fuzz::fuzz(2026, 8000, |_| false);
    assert_eq!(t.inputs, 8000);
    assert!(t.rejected > 1000 && t.ran > 300, "{t:?}");
    if let Some((seed, n, why, input)) = t.broken.first() {
        panic!(
            "{} of {} inputs broke a property; first (seed {seed}, input {n}): {why}\n{input}",
            t.broken.len(),
            t.inputs
        );
    }
}

/// The degenerate values of the fuzzer's vocabulary, each where it does harm in the
/// reference scenario: every one is refused with one diagnostic on the override's line.
#[test]
fn degenerate_values_are_refused_on_their_line() {
    std::env::set_var(qossim::scenario::budget::BUDGET_ENV, "8GiB");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("scenarios/reference.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    /// Overrides, the key path blamed, a word of the reason.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
    let cases: &[Case] = &[
        (
            &[("metric.0.interval", "1ps")],
            "metric.0.interval",
            "samples",
        ),
        (
            &[("metric.1.interval", "1ps")],
            "metric.1.interval",
            "samples",
        ),
        (
            &[("links.n1-n2.rate", "1e400bps")],
            "links.n1-n2.rate",
            "finite",
        ),
        (
            &[("topology.rate", "1e30bps")],
            "topology.rate",
            "too large",
        ),
        (
            &[("topology.queue.limit", "1e30B")],
            "topology.queue.limit",
            "too large",
        ),
        (
            &[("topology.queue.limit", "1e16p")],
            "topology.queue.limit",
            "too large",
        ),
        (
            &[
                ("topology.queue.limit", "1000000000p"),
                ("traffic.0.flows", "10000000"),
            ],
            "topology.queue",
            "queued packets",
        ),
        (
            &[
                ("traffic.0.model", "onoff"),
                ("traffic.0.size", "200B"),
                ("traffic.0.interval", "20ms"),
                ("traffic.0.on", "exp:1ps"),
            ],
            "traffic.0.on",
            "on period",
        ),
        (
            &[
                ("traffic.0.calls.rate", "1e12/s"),
                ("traffic.0.calls.holding", "exp:60s"),
            ],
            "traffic.0.calls.rate",
            "calls",
        ),
        (
            &[
                ("traffic.0.calls.rate", "1e400/s"),
                ("traffic.0.calls.holding", "exp:1s"),
            ],
            "traffic.0.calls.rate",
            "finite",
        ),
    ];
    for (sets, at, words) in cases {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let base = path.parent().unwrap();
        let d = match qossim::parse(&text, "reference.toml", base, &sets) {
            Ok(_) => panic!("{sets:?} was accepted"),
            Err(d) => d,
        };
        assert_eq!(d.len(), 1, "{sets:?}: {d:#?}");
        let d = &d[0];
        assert_eq!(d.path, *at, "{sets:?}: {d}");
        assert!(d.reason.contains(words), "{sets:?}: {d}");
        // Blamed on the override that set it (or on the file when the key came from it).
        let own = sets.iter().position(|(k, _)| k == at);
        match own {
            Some(i) => assert_eq!((d.file.as_str(), d.line), ("--set", i + 1), "{d}"),
            None => assert_eq!(d.file, "reference.toml", "{d}"),
        }
        assert_eq!(fuzz::check(&text, &sets, base), fuzz::Outcome::Rejected);
    }
}

/// The mutations draw every key the core sections declare (`[run]`, `[links."NAME"]`,
/// `[[traffic]]`, `[[metric]]`), and the fixed default of each.
#[test]
fn the_vocabulary_holds_every_declared_key_of_the_core_sections() {
    let (values, keys, _) = fuzz::vocabulary();
    for s in qossim::scenario::sections::CORE {
        for p in s.params {
            assert!(keys.iter().any(|k| k == p.key), "{}.{}", s.name, p.key);
            if let qossim::decl::Absent::Is(d) = p.default {
                let plain = d.to_string();
                let quoted = format!("{d:?}");
                assert!(
                    values.iter().any(|v| *v == plain || *v == quoted),
                    "{}.{} = {d}",
                    s.name,
                    p.key
                );
            }
        }
    }
}

/// The mutations draw every family's declared sections: their headers, keys and fixed
/// defaults (a list of names as a list).
#[test]
fn the_vocabulary_draws_every_declared_section() {
    let (values, keys, headers) = fuzz::vocabulary();
    let mut sections = 0;
    for f in qossim::mechanisms::registry().families() {
        for s in f.declared() {
            assert!(headers.iter().any(|h| h == s.written), "{}", s.written);
            for p in s.params {
                assert!(keys.iter().any(|k| k == p.key), "{}.{}", s.name, p.key);
            }
            sections += 1;
        }
    }
    // [abr], [[abr.vc]], [rpr] and the three [endpoint] arrays at least.
    assert!(sections >= 6, "{sections}");
    assert!(headers.iter().any(|h| h == "[[endpoint.virtual_queue]]"));
    // Lists of names are drawn for the declared lists (watch, destinations).
    assert!(values.iter().any(|v| v == "[\"voice\", 3]"));
}

/// The mutations draw the topology kinds the families declare (`rpr_ring`, `pcn_*`):
/// each kind's name as a value, every key and every fixed default.
#[test]
fn the_vocabulary_draws_every_family_topology_kind() {
    let (values, keys, _) = fuzz::vocabulary();
    let mut kinds = Vec::new();
    for f in qossim::mechanisms::registry().families() {
        for s in f.topology_declared() {
            assert!(
                values.iter().any(|v| *v == format!("{:?}", s.name)),
                "{}",
                s.name
            );
            for p in s.params {
                assert!(keys.iter().any(|k| k == p.key), "{}.{}", s.name, p.key);
                if let qossim::decl::Absent::Is(d) = p.default {
                    assert!(
                        values.iter().any(|v| *v == p.ty.toml(d)),
                        "{}.{}",
                        s.name,
                        p.key
                    );
                }
            }
            kinds.push(s.name);
        }
    }
    for k in ["rpr_ring", "pcn_single", "pcn_rtt", "pcn_parking_lot"] {
        assert!(kinds.contains(&k), "{k} is not declared: {kinds:?}");
    }
}
