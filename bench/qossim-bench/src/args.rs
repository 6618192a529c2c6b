//! The command-line option reader shared by the benchmark programs.

/// The number after `name` on the command line (`--flows 1000`), or `default`.
///
/// # Panics
/// Panics naming the option when its value is not a number.
pub fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
        })
        .unwrap_or(default)
}
