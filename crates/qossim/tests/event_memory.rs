//! The event queue grows with fallible reservations: when the memory for more pending
//! events cannot be had, the run stops with an error naming it instead of the allocator
//! aborting the process. A per-store limit on this thread
//! ([`qossim::engine::set_event_memory_limit`]) stands in for memory running out.

use qossim::engine::set_event_memory_limit;
use qossim::scenario::{self, RunOptions};
use std::path::Path;

/// 20 000 CBR flows: 20 000 timers pending at once, in the scheduler's lists and queue.
const MANY_TIMERS: &str = r#"
[run]
duration = "200ms"

[topology]
kind = "chain"
length = 2
rate = "10Gbps"
delay = "1ms"
queue = { kind = "droptail", limit = "10000p" }

[[traffic]]
name = "voice"
from = "n0"
to = "n2"
model = "CBR"
flows = 20000
"#;

fn run(limit: Option<usize>) -> Result<scenario::RunOutput, String> {
    let sc = qossim::parse(MANY_TIMERS, "s.toml", Path::new("."), &[])
        .unwrap_or_else(|d| panic!("{d:#?}"));
    set_event_memory_limit(limit);
    let out = scenario::run_with(&sc, Some(1), &mut |_| true, &RunOptions::default());
    set_event_memory_limit(None);
    out
}

#[test]
fn an_event_queue_that_cannot_grow_stops_the_run_with_an_error() {
    // 64 KiB holds 2 048 entries of 32 bytes: far fewer than the 20 000 timers.
    let err = run(Some(64 << 10)).expect_err("the run cannot hold its events");
    assert!(
        err.starts_with("s.toml: out of memory: the event queue could not grow beyond "),
        "{err}"
    );
    assert!(
        err.ends_with("s of simulated time; the run was stopped"),
        "{err}"
    );
    // The failure does not outlive its run: the next run on this thread is whole.
    let whole = run(None).expect("no limit");
    assert!(whole.events > 20_000);
}

#[test]
fn a_limit_the_run_stays_under_changes_nothing() {
    let free = run(None).expect("no limit");
    // 64 MiB per store is far more than 20 000 timers need.
    let capped = run(Some(64 << 20)).expect("under the limit");
    assert_eq!(free.events, capped.events);
    assert_eq!(free.summary, capped.summary);
}
