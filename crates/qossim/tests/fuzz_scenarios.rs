//! A CI-sized fuzzing run of the scenario reader, builder and engine (see `fuzz/mod.rs`;
//! `cargo run --release --example fuzz -- SECONDS` runs a long one).

mod common;
mod fuzz;

#[test]
fn mutated_scenarios_are_rejected_clearly_or_run() {
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
