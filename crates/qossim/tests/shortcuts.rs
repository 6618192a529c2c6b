//! The engine's shortcuts change how many events a run takes, never its results: every
//! shipped scenario (FIFO chains and dumbbells, priority ports, RED and RIO, CoDel, TCP,
//! PCN markers, ABR switches, RPR stations, endpoint probing) gives the same summary with
//! the FIFO fast path on and off.

mod common;

use qossim::scenario;
use serde_json::{Map, Value};

/// The scenario's core summary after `secs` simulated seconds (or its whole run if
/// shorter), with the fast path on or off; the event count, which the fast path is there
/// to lower, left out; and the number of ports on the fast path.
fn summary(
    path: &std::path::Path,
    text: &str,
    secs: f64,
    fast: bool,
) -> (Map<String, Value>, usize) {
    let sc = qossim::parse(
        text,
        &path.display().to_string(),
        path.parent().unwrap(),
        &[],
    )
    .unwrap_or_else(|d| panic!("{}: {d:#?}", path.display()));
    let mut w = scenario::build(&sc, 1).unwrap();
    if !fast {
        w.net.disable_fast_paths();
    }
    w.run_until(sc.run.duration.min(qossim::time::secs(secs)));
    let fast_ports = w.net.links.iter().filter(|l| l.uses_fast_path()).count();
    let mut m = w.summary();
    m.remove("events");
    (m, fast_ports)
}

#[test]
fn the_fifo_fast_path_changes_no_result() {
    let mut checked = 0;
    let mut fast_ports = 0;
    for (path, text) in common::shipped_scenarios() {
        let (on, n) = summary(&path, &text, 0.5, true);
        let (off, none) = summary(&path, &text, 0.5, false);
        assert_eq!(none, 0);
        assert!(on.len() > 3, "{}", path.display());
        for (k, v) in &on {
            assert_eq!(Some(v), off.get(k), "{}: {k}", path.display());
        }
        assert_eq!(on.len(), off.len(), "{}", path.display());
        checked += 1;
        fast_ports += n;
    }
    assert!(checked >= 20);
    assert!(fast_ports > 100, "{fast_ports} ports on the fast path");
}
