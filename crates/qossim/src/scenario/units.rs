//! Units as written in scenarios: rates ("155.52Mbps", "OC3", "T1", "64kbps"), times
//! ("20ms", "1.5s", "100us"), sizes ("1500B", "64KB", "2KiB") and queue limits ("100p").
//!
//! Decimal prefixes are powers of ten (k = 10^3, M = 10^6, G = 10^9), as in networking;
//! binary prefixes (KiB, MiB) are powers of two. Every function returns a message that
//! says what was expected when the text does not parse.

use crate::time::{Time, PS_PER_S};

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == 'e' || c == 'E')
                    && s[i + 1..]
                        .starts_with(|d: char| d.is_ascii_digit() || d == '-' || d == '+'))
                || ((c == '-' || c == '+') && (i == 0 || s[..i].ends_with(['e', 'E']))))
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let num: f64 = s[..end].parse().ok()?;
    Some((num, s[end..].trim()))
}

/// Named link speeds.
pub const NAMED_RATES: &[(&str, u64)] = &[
    ("T1", 1_544_000),
    ("E1", 2_048_000),
    ("T3", 44_736_000),
    ("DS3", 44_736_000),
    ("E3", 34_368_000),
    ("OC1", 51_840_000),
    ("OC3", 155_520_000),
    ("OC12", 622_080_000),
    ("OC48", 2_488_320_000),
    ("OC192", 9_953_280_000),
];

/// The largest rate a scenario may give, bits per second (1 Pbps): far above any link,
/// and small enough that rates times times stay inside 64-bit arithmetic.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000_000;

/// The largest size a scenario may give, bytes (1 PiB).
pub const MAX_SIZE_BYTES: u64 = 1 << 50;

/// Parses a rate in bits per second. Accepts `bps`, `kbps`, `Mbps`, `Gbps` (also written
/// `b/s`, `kb/s`, `Mb/s`, `Gb/s`) and the named speeds T1, E1, T3, DS3, E3, OC1, OC3, OC12,
/// OC48, OC192. The rate must be positive and a whole number of bits per second after
/// scaling.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if let Some(&(_, r)) = NAMED_RATES.iter().find(|(n, _)| n.eq_ignore_ascii_case(t)) {
        return Ok(r);
    }
    let (x, unit) = split_number(t).ok_or_else(|| {
        format!("expected a rate such as \"155.52Mbps\", \"64kbps\" or \"OC3\", got {s:?}")
    })?;
    let mult = match unit {
        "bps" | "b/s" => 1.0,
        "kbps" | "kb/s" | "Kbps" => 1e3,
        "Mbps" | "Mb/s" => 1e6,
        "Gbps" | "Gb/s" => 1e9,
        "" => return Err(format!("rate {s:?} has no unit (write e.g. \"{x}Mbps\")")),
        u => {
            return Err(format!(
                "unknown rate unit {u:?} in {s:?} (use bps, kbps, Mbps, Gbps or a name like OC3)"
            ))
        }
    };
    let v = x * mult;
    if !v.is_finite() {
        return Err(format!("rate must be finite and positive, got {s:?}"));
    }
    if v <= 0.0 {
        return Err(format!("rate must be positive, got {s:?}"));
    }
    if v > MAX_RATE_BPS as f64 {
        return Err(format!(
            "rate {s:?} is too large (at most {} Tbps)",
            MAX_RATE_BPS / 1_000_000_000_000
        ));
    }
    if v < 1.0 {
        return Err(format!("rate {s:?} is below 1 bit/s"));
    }
    Ok(v.round() as u64)
}

/// Parses a time (or duration) into picoseconds. Units: `ps`, `ns`, `us`, `ms`, `s`,
/// `min`, `h`. Negative times are rejected.
pub fn parse_time(s: &str) -> Result<Time, String> {
    let (x, unit) = split_number(s)
        .ok_or_else(|| format!("expected a time such as \"20ms\" or \"1.5s\", got {s:?}"))?;
    let ps_per_unit: f64 = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        "min" => 60e12,
        "h" => 3600e12,
        "" => {
            return Err(format!(
                "time {s:?} has no unit (write e.g. \"{x}s\" or \"{x}ms\")"
            ))
        }
        u => {
            return Err(format!(
                "unknown time unit {u:?} in {s:?} (use ps, ns, us, ms, s, min or h)"
            ))
        }
    };
    if x < 0.0 {
        return Err(format!("time must not be negative, got {s:?}"));
    }
    let v = x * ps_per_unit;
    if !v.is_finite() || v >= u64::MAX as f64 {
        return Err(format!("time {s:?} is out of range"));
    }
    Ok(v.round() as Time)
}

/// Parses a size in bytes: `B`, `KB`/`kB` (10^3), `MB`, `GB`, `KiB`, `MiB`, `GiB`, or
/// `b`/`bit`/`kbit` for bits (must be whole bytes).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (x, unit) = split_number(s)
        .ok_or_else(|| format!("expected a size such as \"1500B\" or \"64KB\", got {s:?}"))?;
    let bytes = match unit {
        "B" => x,
        "KB" | "kB" => x * 1e3,
        "MB" => x * 1e6,
        "GB" => x * 1e9,
        "KiB" => x * 1024.0,
        "MiB" => x * 1024.0 * 1024.0,
        "GiB" => x * 1024.0 * 1024.0 * 1024.0,
        "b" | "bit" | "bits" => x / 8.0,
        "kbit" => x * 1e3 / 8.0,
        "" => return Err(format!("size {s:?} has no unit (write e.g. \"{x}B\")")),
        u => {
            return Err(format!(
                "unknown size unit {u:?} in {s:?} (use B, KB, MB, KiB, MiB or bit)"
            ))
        }
    };
    if bytes.is_nan() {
        return Err(format!("size must be a number, got {s:?}"));
    }
    if bytes < 0.0 {
        return Err(format!("size must not be negative, got {s:?}"));
    }
    if bytes > MAX_SIZE_BYTES as f64 {
        return Err(format!("size {s:?} is too large (at most 1 PiB)"));
    }
    if (bytes - bytes.round()).abs() > 1e-9 {
        return Err(format!("size {s:?} is not a whole number of bytes"));
    }
    Ok(bytes.round() as u64)
}

/// A queue limit: packets (`"100p"`, `"100pkts"`, `"100 packets"`) or bytes (any size).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    /// Packets.
    Packets(u64),
    /// Bytes.
    Bytes(u64),
}

/// Parses a queue limit.
pub fn parse_limit(s: &str) -> Result<QueueLimit, String> {
    if let Some((x, unit)) = split_number(s) {
        if matches!(unit, "p" | "pkt" | "pkts" | "packets" | "packet") {
            if x < 1.0 || x.fract() != 0.0 {
                return Err(format!(
                    "packet limit must be a positive whole number, got {s:?}"
                ));
            }
            if x > MAX_SIZE_BYTES as f64 {
                return Err(format!("packet limit {s:?} is too large (at most 2^50)"));
            }
            return Ok(QueueLimit::Packets(x as u64));
        }
    }
    parse_size(s).map(QueueLimit::Bytes).map_err(|e| {
        if e.contains("too large") {
            e
        } else {
            format!("expected a queue limit such as \"100p\" (packets) or \"64KB\", got {s:?}")
        }
    })
}

/// A random duration: `"exp:60s"`, `"fixed:1s"`, `"pareto:1.5:340ms"` (shape, mean), or
/// a plain time meaning fixed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Exponential with this mean, seconds.
    Exp(f64),
    /// Constant, seconds.
    Fixed(f64),
    /// Pareto (shape, mean seconds).
    Pareto(f64, f64),
}

/// Parses a random duration.
pub fn parse_dist(s: &str) -> Result<Dist, String> {
    let parts: Vec<&str> = s.trim().split(':').collect();
    let t = |x: &str| parse_time(x).map(|p| p as f64 / PS_PER_S as f64);
    match parts.as_slice() {
        ["exp", m] => Ok(Dist::Exp(t(m)?)),
        ["fixed", m] => Ok(Dist::Fixed(t(m)?)),
        ["pareto", shape, m] => {
            let a: f64 = shape
                .parse()
                .map_err(|_| format!("pareto shape must be a number, got {shape:?}"))?;
            if a <= 1.0 {
                return Err(format!("pareto shape must be > 1 for a finite mean, got {a}"));
            }
            Ok(Dist::Pareto(a, t(m)?))
        }
        [m] => Ok(Dist::Fixed(t(m).map_err(|_| {
            format!("expected a distribution such as \"exp:60s\", \"fixed:1s\" or \"pareto:1.5:340ms\", got {s:?}")
        })?)),
        _ => Err(format!(
            "expected a distribution such as \"exp:60s\", \"fixed:1s\" or \"pareto:1.5:340ms\", got {s:?}"
        )),
    }
}

/// Parses an event rate: `"10/s"`, `"600/min"`, `"0.5/ms"`, or a plain number per second.
pub fn parse_per_second(s: &str) -> Result<f64, String> {
    let bad = || format!("expected a rate of events such as \"10/s\" or \"600/min\", got {s:?}");
    let (x, unit) = split_number(s).ok_or_else(bad)?;
    let per = match unit {
        "/s" | "" => 1.0,
        "/ms" => 1e3,
        "/min" => 1.0 / 60.0,
        "/h" => 1.0 / 3600.0,
        _ => return Err(bad()),
    };
    if x < 0.0 {
        return Err(format!("rate must not be negative, got {s:?}"));
    }
    if !x.is_finite() {
        return Err(format!("rate must be finite, got {s:?}"));
    }
    Ok(x * per)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_MS;

    #[test]
    fn rates() {
        assert_eq!(parse_rate("155.52Mbps"), Ok(155_520_000));
        assert_eq!(parse_rate("OC3"), Ok(155_520_000));
        assert_eq!(parse_rate("t1"), Ok(1_544_000));
        assert_eq!(parse_rate("64kbps"), Ok(64_000));
        assert_eq!(parse_rate("10 Gb/s"), Ok(10_000_000_000));
        assert!(parse_rate("10").unwrap_err().contains("no unit"));
        assert!(parse_rate("-5Mbps").unwrap_err().contains("positive"));
        assert!(parse_rate("0Mbps").unwrap_err().contains("positive"));
        assert!(parse_rate("1e400bps")
            .unwrap_err()
            .contains("must be finite and positive"));
        assert!(parse_rate("1e30bps").unwrap_err().contains("too large"));
        assert!(parse_rate("5MBps")
            .unwrap_err()
            .contains("unknown rate unit"));
    }

    #[test]
    fn times_sizes_limits() {
        assert_eq!(parse_time("20ms"), Ok(20 * PS_PER_MS));
        assert_eq!(parse_time("1.5s"), Ok(1500 * PS_PER_MS));
        assert_eq!(parse_time("2min"), Ok(120_000 * PS_PER_MS));
        assert!(parse_time("20").unwrap_err().contains("no unit"));
        assert!(parse_time("-1s").unwrap_err().contains("negative"));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("64KB"), Ok(64_000));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        assert!(parse_size("3b").is_err());
        assert!(parse_size("1e30B").unwrap_err().contains("too large"));
        assert!(parse_limit("1e30B").unwrap_err().contains("too large"));
        assert_eq!(parse_limit("100p"), Ok(QueueLimit::Packets(100)));
        assert_eq!(parse_limit("25KB"), Ok(QueueLimit::Bytes(25_000)));
        assert_eq!(parse_dist("exp:60s"), Ok(Dist::Exp(60.0)));
        assert_eq!(parse_dist("pareto:1.5:340ms"), Ok(Dist::Pareto(1.5, 0.34)));
        assert!(parse_dist("pareto:0.9:1s").is_err());
        assert_eq!(parse_per_second("600/min"), Ok(10.0));
    }
}
