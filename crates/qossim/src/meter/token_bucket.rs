//! An exact token bucket and the token-bucket profiler built on it.

use super::InOutCounts;
use crate::net::Packet;
use crate::time::{Time, PS_PER_S};

/// Token units per byte: tokens are counted in bit-picoseconds per second, i.e. one bit is
/// `10^12` units. A rate of `r` bit/s then adds exactly `r` units per picosecond, so the
/// bucket never rounds: conformance decisions are exact.
pub const TOKEN_UNITS_PER_BYTE: u128 = 8 * PS_PER_S as u128;

/// A token bucket of rate `rate_bps` and depth `depth_bytes`, starting full, in exact
/// integer arithmetic.
///
/// Tokens accrue continuously at `rate_bps / 8` bytes per second and are capped at the
/// depth. A packet of `s` bytes conforms if it finds at least `s` bytes of tokens, and then
/// takes them. Consequently, for any interval `[t1, t2]`, the bytes of conforming packets
/// arriving in it never exceed `rate_bps (t2 - t1) / 8 + depth_bytes`, exactly.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate_bps: u64,
    depth_bytes: u64,
    depth: u128,
    tokens: u128,
    last: Time,
}

impl TokenBucket {
    /// A full bucket (its clock starts at time 0).
    pub fn new(rate_bps: u64, depth_bytes: u64) -> Self {
        let depth = depth_bytes as u128 * TOKEN_UNITS_PER_BYTE;
        TokenBucket {
            rate_bps,
            depth_bytes,
            depth,
            tokens: depth,
            last: 0,
        }
    }

    /// Token rate, bits per second.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Depth, bytes.
    pub fn depth_bytes(&self) -> u64 {
        self.depth_bytes
    }

    /// Adds the tokens accrued up to `now` (a time before the last update adds nothing).
    #[inline]
    pub fn refill(&mut self, now: Time) {
        if now > self.last {
            let add = self.rate_bps as u128 * (now - self.last) as u128;
            self.tokens = self.tokens.saturating_add(add).min(self.depth);
            self.last = now;
        }
    }

    /// Takes `bytes` worth of tokens at `now` if there are enough; returns whether the
    /// packet conforms. A non-conforming packet takes nothing.
    #[inline]
    pub fn take(&mut self, bytes: u32, now: Time) -> bool {
        self.refill(now);
        let need = bytes as u128 * TOKEN_UNITS_PER_BYTE;
        if self.tokens >= need {
            self.tokens -= need;
            true
        } else {
            false
        }
    }

    /// Would a packet of `bytes` conform at `now`? (Refills, takes nothing.)
    pub fn conforms(&mut self, bytes: u32, now: Time) -> bool {
        self.refill(now);
        self.tokens >= bytes as u128 * TOKEN_UNITS_PER_BYTE
    }

    /// Tokens held after the last update, in exact units ([`TOKEN_UNITS_PER_BYTE`] per
    /// byte).
    pub fn tokens_exact(&self) -> u128 {
        self.tokens
    }

    /// Tokens held at `now`, bytes (approximate: for reporting).
    pub fn tokens_bytes(&self, now: Time) -> f64 {
        let add = if now > self.last {
            self.rate_bps as u128 * (now - self.last) as u128
        } else {
            0
        };
        self.tokens.saturating_add(add).min(self.depth) as f64 / TOKEN_UNITS_PER_BYTE as f64
    }

    /// Changes the rate from `now` on (tokens accrued so far at the old rate are kept).
    pub fn set_rate(&mut self, rate_bps: u64, now: Time) {
        self.refill(now);
        self.rate_bps = rate_bps;
    }
}

/// Token-bucket profiler: a packet that finds at least its size in tokens is marked IN
/// ([`IN_PROFILE`](crate::net::marks::IN_PROFILE) set, tokens taken); any other packet is marked OUT (the bit
/// cleared, no tokens taken).
///
/// As a port hook it never discards a packet.
#[derive(Clone, Debug)]
pub struct TokenBucketProfiler {
    bucket: TokenBucket,
    /// IN/OUT counts.
    pub counts: InOutCounts,
}

impl TokenBucketProfiler {
    /// A profiler for the profile (`rate_bps`, `depth_bytes`), its bucket full.
    pub fn new(rate_bps: u64, depth_bytes: u64) -> Self {
        TokenBucketProfiler {
            bucket: TokenBucket::new(rate_bps, depth_bytes),
            counts: InOutCounts::default(),
        }
    }

    /// The bucket (rate, depth, tokens).
    pub fn bucket(&self) -> &TokenBucket {
        &self.bucket
    }

    /// Marks one packet at `now`; returns true if it is IN.
    #[inline]
    pub fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        let is_in = self.bucket.take(pkt.size, now);
        self.counts.apply(pkt, is_in)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Meter;
    use crate::net::{marks, PortHook, PortInfo};
    use crate::time::{tx_time, PS_PER_MS};

    #[test]
    fn bucket_starts_full_and_refills_exactly() {
        // 8 Mb/s = 1 byte per microsecond; depth 3000 B.
        let mut b = TokenBucket::new(8_000_000, 3000);
        assert!(b.take(1500, 0));
        assert!(b.take(1500, 0));
        assert!(!b.take(1, 0));
        // 999 bytes accrue in 999 us: a 1000-byte packet is one picosecond short...
        let t = 999 * 1_000_000;
        assert!(!b.take(1000, t));
        // ...and conforms exactly when the 1000th byte has accrued.
        assert!(!b.conforms(1000, 1000 * 1_000_000 - 1));
        assert!(b.take(1000, 1000 * 1_000_000));
        assert_eq!(b.tokens_exact(), 0);
    }

    #[test]
    fn bucket_is_capped_at_depth() {
        let mut b = TokenBucket::new(8_000_000, 2000);
        b.take(2000, 0);
        b.refill(PS_PER_S);
        assert_eq!(b.tokens_exact(), 2000 * TOKEN_UNITS_PER_BYTE);
        assert_eq!(b.tokens_bytes(2 * PS_PER_S), 2000.0);
    }

    #[test]
    fn odd_rates_have_no_rounding_drift() {
        // 155.52 Mb/s and 53-byte cells: one cell's tokens accrue in a non-integer number
        // of picoseconds. Sending at exactly the cell time (rounded up) never finds the
        // bucket short, and sending one picosecond early eventually does.
        let rate = 155_520_000;
        let gap = tx_time(53, rate);
        let mut b = TokenBucket::new(rate, 53);
        let mut t = 0;
        for _ in 0..100_000 {
            assert!(b.take(53, t));
            t += gap;
        }
        let mut b = TokenBucket::new(rate, 53);
        let mut t = 0;
        let mut short = false;
        for _ in 0..100_000 {
            if !b.take(53, t) {
                short = true;
                break;
            }
            t += gap - 1;
        }
        assert!(short);
    }

    #[test]
    fn profiler_marks_in_and_out() {
        let mut p = TokenBucketProfiler::new(8_000_000, 1500);
        let mut a = Packet::of_size(1000);
        a.set(marks::IN_PROFILE);
        let mut b = Packet::of_size(1000);
        b.set(marks::IN_PROFILE);
        assert!(p.meter(&mut a, PS_PER_MS));
        assert!(a.has(marks::IN_PROFILE));
        // 500 tokens left + 1 us of accrual = 501 < 1000: OUT, bit cleared.
        assert!(!p.meter(&mut b, PS_PER_MS + 1_000_000));
        assert!(!b.has(marks::IN_PROFILE));
        // An OUT packet took no tokens: after 499 more bytes accrue, 1000 B conform.
        let mut c = Packet::of_size(1000);
        assert!(p.meter(&mut c, PS_PER_MS + 500 * 1_000_000));
        assert_eq!(
            (
                p.counts.in_pkts,
                p.counts.out_pkts,
                p.counts.in_bytes,
                p.counts.out_bytes
            ),
            (2, 1, 2000, 1000)
        );
        let mut out = Vec::new();
        Meter::report(&p, &mut out);
        assert_eq!(out[0], ("tb_in_pkts".to_string(), 2.0));
    }

    #[test]
    fn hook_never_discards() {
        let mut p = TokenBucketProfiler::new(1, 1);
        let info = PortInfo {
            rate_bps: 1,
            queue_pkts: 0,
            queue_bytes: 0,
        };
        let mut a = Packet::of_size(1000);
        a.set(marks::IN_PROFILE);
        assert!(p.on_arrival(&mut a, 0, &info));
        assert!(!a.has(marks::IN_PROFILE));
    }
}
