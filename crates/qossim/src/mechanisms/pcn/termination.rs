//! Termination marking: the token-bucket marker of a PCN bottleneck link.

use super::marks;
use crate::meter::Meter;
use crate::meter::TokenBucket;
use crate::net::Packet;
use crate::time::Time;

/// The termination bucket's depth in packets of the traffic's packet size.
pub const TERMINATION_DEPTH_PACKETS: u64 = 256;

/// The termination marker of a PCN bottleneck link: a token bucket at the
/// configured-termination-rate `Rt` (exact integer arithmetic, see [`TokenBucket`]).
///
/// Every PCN packet (one carrying [`marks::PCN`]) that finds fewer tokens than its size is
/// termination-marked ([`marks::PCN_TERMINATION`]) and takes no tokens; one that finds
/// enough takes them. A packet already termination-marked upstream bypasses the meter:
/// it takes no tokens and is left unchanged. Non-PCN packets are ignored. The bucket
/// starts full. As a port hook it never discards a packet and needs no departure calls.
///
/// `Rt` can change during a run ([`TerminationMarker::set_rate`]): the failure event of
/// the termination experiments makes `Rt` binding at `t_fail`.
#[derive(Clone, Debug)]
pub struct TerminationMarker {
    bucket: TokenBucket,
    /// PCN packets metered (bypassing packets excluded).
    pub pcn_pkts: u64,
    /// PCN packets this marker termination-marked.
    pub termination_marked_pkts: u64,
    /// Bytes of the packets this marker termination-marked.
    pub termination_marked_bytes: u64,
    /// Packets that arrived already termination-marked and bypassed the meter.
    pub bypassed_pkts: u64,
}

impl TerminationMarker {
    /// A marker at `rt_bps` with a bucket of `depth_bytes`, starting full.
    pub fn new(rt_bps: u64, depth_bytes: u64) -> Self {
        TerminationMarker {
            bucket: TokenBucket::new(rt_bps, depth_bytes),
            pcn_pkts: 0,
            termination_marked_pkts: 0,
            termination_marked_bytes: 0,
            bypassed_pkts: 0,
        }
    }

    /// A marker at `rt_bps` whose depth is [`TERMINATION_DEPTH_PACKETS`] packets of
    /// `packet_bytes` bytes (the study's setting).
    pub fn for_packet_size(rt_bps: u64, packet_bytes: u32) -> Self {
        Self::new(rt_bps, TERMINATION_DEPTH_PACKETS * packet_bytes as u64)
    }

    /// The configured-termination-rate, bits per second.
    pub fn rt_bps(&self) -> u64 {
        self.bucket.rate_bps()
    }

    /// The bucket depth, bytes.
    pub fn depth_bytes(&self) -> u64 {
        self.bucket.depth_bytes()
    }

    /// The bucket (to read its tokens).
    pub fn bucket(&self) -> &TokenBucket {
        &self.bucket
    }

    /// Changes `Rt` from `now` on (tokens accrued so far at the old rate are kept).
    pub fn set_rate(&mut self, now: Time, rt_bps: u64) {
        self.bucket.set_rate(rt_bps, now);
    }

    /// Meters one packet at `now` (calls in non-decreasing time order); returns true if
    /// this marker termination-marked it.
    #[inline]
    pub fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        if !pkt.has(marks::PCN) {
            return false;
        }
        if pkt.has(marks::PCN_TERMINATION) {
            self.bypassed_pkts += 1;
            return false;
        }
        self.pcn_pkts += 1;
        if self.bucket.take(pkt.size, now) {
            false
        } else {
            pkt.set(marks::PCN_TERMINATION);
            self.termination_marked_pkts += 1;
            self.termination_marked_bytes += pkt.size as u64;
            true
        }
    }
}

impl Meter for TerminationMarker {
    #[inline]
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        TerminationMarker::meter(self, pkt, now)
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        out.push(("pcn_tb.pcn_pkts".into(), self.pcn_pkts as f64));
        out.push((
            "pcn_tb.termination_marked_pkts".into(),
            self.termination_marked_pkts as f64,
        ));
        out.push(("pcn_tb.bypassed_pkts".into(), self.bypassed_pkts as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::TOKEN_UNITS_PER_BYTE;
    use crate::time::PS_PER_MS;

    fn pcn(size: u32, extra: u16) -> Packet {
        Packet {
            size,
            marks: marks::PCN | extra,
            ..Default::default()
        }
    }

    #[test]
    fn depth_is_256_packets() {
        let m = TerminationMarker::for_packet_size(1_000_000, 160);
        assert_eq!(m.depth_bytes(), 256 * 160);
        assert_eq!(m.rt_bps(), 1_000_000);
    }

    #[test]
    fn rate_change_keeps_tokens_and_applies_from_now() {
        // 8 kb/s = 1000 B/s; depth 1000 B. Empty the bucket, then double the rate.
        let mut m = TerminationMarker::new(8_000, 1000);
        assert!(!m.meter(&mut pcn(1000, 0), 0));
        assert!(m.meter(&mut pcn(1, 0), 0));
        // After 100 ms at 1000 B/s: 100 B.
        m.set_rate(100 * PS_PER_MS, 16_000);
        assert_eq!(
            m.bucket().tokens_exact(),
            100 * TOKEN_UNITS_PER_BYTE,
            "tokens accrued at the old rate"
        );
        // 100 ms more at 2000 B/s: 300 B in total.
        assert!(!m.meter(&mut pcn(300, 0), 200 * PS_PER_MS));
        assert!(m.meter(&mut pcn(1, 0), 200 * PS_PER_MS));
        assert_eq!(m.rt_bps(), 16_000);
    }
}
