//! A long fuzzing run of the scenario reader, builder and engine:
//! `cargo run --release -p qossim --example fuzz -- SECONDS [FIRST_SEED]`.
//!
//! Runs batches of 10 000 inputs with seeds FIRST_SEED, FIRST_SEED + 1, ... until
//! SECONDS have passed; prints the running totals after every batch and each input that
//! broke a property (with its seed and number, so it can be replayed).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/fuzz/mod.rs"]
mod fuzz;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seconds: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(60);
    let first: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let start = std::time::Instant::now();
    let (mut inputs, mut rejected, mut ran, mut broken) = (0u64, 0u64, 0u64, 0usize);
    let mut seed = first;
    while start.elapsed().as_secs() < seconds {
        let t = fuzz::fuzz(seed, 10_000, |_| start.elapsed().as_secs() >= seconds);
        inputs += t.inputs;
        rejected += t.rejected;
        ran += t.ran;
        broken += t.broken.len();
        for (s, n, why, input) in &t.broken {
            println!("BROKEN seed {s} input {n}: {why}\n{input}\n---");
        }
        println!(
            "{:>6} s: seeds {first}..={seed}, {inputs} inputs, {rejected} rejected, {ran} ran, {broken} broke a property",
            start.elapsed().as_secs()
        );
        seed += 1;
    }
}
