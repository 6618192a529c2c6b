//! Simulated time: an integer count of picoseconds.
//!
//! `u64` picoseconds cover about 213 days, far beyond any study. Durations use the same
//! type. Transmission times are computed in `u128` integer arithmetic so that a packet's
//! serialization time never depends on floating-point rounding.

/// A point in simulated time, or a duration, in picoseconds.
pub type Time = u64;

/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;
/// Picoseconds per millisecond.
pub const PS_PER_MS: u64 = 1_000_000_000;
/// Picoseconds per microsecond.
pub const PS_PER_US: u64 = 1_000_000;
/// The largest representable time; used as "never".
pub const NEVER: Time = u64::MAX;

/// Converts seconds (floating point, as written in a scenario) to picoseconds, rounding to
/// the nearest picosecond. Negative and non-finite inputs saturate at 0 / [`NEVER`].
pub fn secs(s: f64) -> Time {
    if s.is_nan() || s <= 0.0 {
        0
    } else if s >= (NEVER / PS_PER_S) as f64 {
        NEVER
    } else {
        (s * PS_PER_S as f64).round() as Time
    }
}

/// Converts milliseconds to picoseconds.
pub fn millis(ms: f64) -> Time {
    secs(ms / 1e3)
}

/// Converts picoseconds to seconds.
pub fn to_secs(t: Time) -> f64 {
    t as f64 / PS_PER_S as f64
}

/// Time to serialize `bytes` onto a link of `rate_bps` bits per second, rounded up to the
/// next picosecond so that a link never sends faster than its rate.
///
/// # Panics
/// Panics if `rate_bps` is zero (a scenario with a zero rate is rejected before a run).
#[inline]
pub fn tx_time(bytes: u32, rate_bps: u64) -> Time {
    if bytes <= TX_TIME_U64_BYTES {
        // bytes x 8 x 10^12 fits in 64 bits: the same quotient without 128-bit division.
        (bytes as u64 * 8 * PS_PER_S).div_ceil(rate_bps)
    } else {
        let num = bytes as u128 * 8 * PS_PER_S as u128;
        num.div_ceil(rate_bps as u128) as Time
    }
}

/// The largest byte count whose bit count in picoseconds' worth (bytes x 8 x 10^12) fits
/// in 64 bits.
const TX_TIME_U64_BYTES: u32 = (u64::MAX / (8 * PS_PER_S)) as u32;

/// Time for `bytes` to drain at `rate_bps`, as a floating-point number of picoseconds is
/// not needed: this is [`tx_time`] for an arbitrary byte count.
pub fn drain_time(bytes: u64, rate_bps: u64) -> Time {
    let num = bytes as u128 * 8 * PS_PER_S as u128;
    num.div_ceil(rate_bps as u128) as Time
}

/// Bytes that a rate of `rate_bps` drains in `dt` picoseconds, as a float (used by meters
/// and virtual queues whose state is fractional).
pub fn bytes_in(rate_bps: u64, dt: Time) -> f64 {
    rate_bps as f64 * to_secs(dt) / 8.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_the_exact_ceiling_on_both_sides_of_the_64_bit_limit() {
        // As before the 64-bit path: the 128-bit quotient, cut to a Time.
        let exact = |b: u32, r: u64| (b as u128 * 8 * PS_PER_S as u128).div_ceil(r as u128) as Time;
        let edge = TX_TIME_U64_BYTES;
        for b in [
            0,
            1,
            40,
            160,
            1500,
            65_535,
            edge - 1,
            edge,
            edge + 1,
            u32::MAX,
        ] {
            for r in [
                1,
                7,
                56_000,
                155_520_000,
                10_000_000_000,
                3_000_000_000_001,
                u64::MAX,
            ] {
                assert_eq!(tx_time(b, r), exact(b, r), "{b} B at {r} b/s");
            }
        }
        assert!((edge as u128 + 1) * 8 * PS_PER_S as u128 > u64::MAX as u128);
    }

    #[test]
    fn tx_time_exact_and_rounded_up() {
        // 1500 B at 12 Mb/s is exactly 1 ms.
        assert_eq!(tx_time(1500, 12_000_000), PS_PER_MS);
        // 160 B at OC3 = 1280 bits / 155.52e6 = 8230.452...ns -> rounded up.
        let t = tx_time(160, 155_520_000);
        assert_eq!(t, 8_230_453);
        assert!(t as u128 * 155_520_000 >= 1280 * PS_PER_S as u128);
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(secs(0.02), 20 * PS_PER_MS);
        assert_eq!(millis(1.0), PS_PER_MS);
        assert!((to_secs(secs(12.345)) - 12.345).abs() < 1e-12);
        assert_eq!(secs(-1.0), 0);
    }
}
