//! Selective acknowledgements for the TCP sender and receiver: the SACK option carried
//! on ACKs (RFC 2018), the receiver's record of which blocks to report, and the sender's
//! scoreboard with RFC 6675's `IsLost`, `SetPipe` and `NextSeg`.
//!
//! Sequence numbers count segments (as in [`super::tcp`]); a block `[start, end)` holds
//! the segments `start..end` received above the cumulative ACK.
//!
//! # The option on the wire
//! An ACK carries at most [`MAX_BLOCKS`] (3) blocks in the packet's typed header, each as
//! its offset above the cumulative ACK and its length, in 21 bits apiece (two 64-bit
//! words hold six 21-bit fields). A block that lies more than 2^21 − 1 segments above the
//! ACK is left out and a longer one is cut to its first 2^21 − 1 segments: the option
//! only ever says less than the receiver holds, never more, as a receiver with a full
//! TCP option space would. The option's size is not added to the ACK's wire size (the
//! ACKs of a SACK connection are as long as those of any other).
//!
//! # Receiver (RFC 2018, section 4)
//! The first block is the one holding the segment that triggered the ACK, unless that
//! segment advanced the cumulative ACK; the others repeat the most recently reported
//! blocks that are still above the cumulative ACK, most recent first, each block once.
//!
//! # Sender (RFC 6675)
//! The scoreboard keeps, for every segment from the first unacknowledged one to the
//! highest SACKed one, whether it has been SACKed. With full-sized segments both of
//! `IsLost`'s conditions (DupThresh discontiguous SACKed ranges above the segment, or more
//! than DupThresh − 1 segments' worth SACKed above it) come down to one: at least
//! DupThresh segments above it are SACKed. `pipe` counts every segment between the first
//! unacknowledged one and the highest sent that is neither SACKed nor lost, plus every one
//! retransmitted (at or below `HighRxt`) and not SACKed. `NextSeg` returns the first
//! un-SACKed segment above `HighRxt` that is lost (rule 1), else new data (rule 2), else
//! that first un-SACKed segment if some SACKed one lies above it (rule 3). Since a
//! segment's count of SACKed segments above it can only fall as the segment number rises,
//! the first un-SACKed segment above `HighRxt` is the only candidate of rules 1 and 3.
//!
//! One addition to RFC 6675: a partial ACK in recovery (one that acknowledges new data
//! but not all that was outstanding when recovery began) also shows the first
//! unacknowledged segment lost, as it does to NewReno (RFC 6582): it was sent before the
//! retransmission the ACK covers. If it has not been retransmitted yet it is resent at
//! once. Without this, a hole with fewer than DupThresh segments sent above it
//! before recovery waits until new data sent in recovery is SACKed above it, a round trip
//! after NewReno would have resent it.

use crate::net::HeaderFields;
use std::collections::VecDeque;

/// The most blocks an ACK reports.
pub const MAX_BLOCKS: usize = 3;

/// Bits of one field of the option (an offset or a length).
const FIELD_BITS: u32 = 21;
/// The largest value of a field.
const FIELD_MAX: u64 = (1 << FIELD_BITS) - 1;

/// The SACK option of an ACK: up to [`MAX_BLOCKS`] blocks, each as (offset above the
/// cumulative ACK, length) in segments; a length of 0 ends the list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackOption {
    blocks: [(u32, u32); MAX_BLOCKS],
}

impl SackOption {
    /// The option for an ACK of `ack` reporting `blocks` (`[start, end)`, most recent
    /// first, every one above `ack`); what does not fit is left out or cut (see the
    /// module documentation).
    pub fn new(ack: u64, blocks: &[(u64, u64)]) -> Self {
        let mut o = SackOption::default();
        let mut n = 0;
        for &(start, end) in blocks {
            if n == MAX_BLOCKS {
                break;
            }
            if start <= ack || end <= start || start - ack > FIELD_MAX {
                continue;
            }
            o.blocks[n] = ((start - ack) as u32, (end - start).min(FIELD_MAX) as u32);
            n += 1;
        }
        o
    }

    /// The blocks `[start, end)` of an ACK of `ack`, in the order reported.
    pub fn blocks(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks
            .iter()
            .take_while(|b| b.1 > 0)
            .map(move |&(off, len)| (ack + off as u64, ack + off as u64 + len as u64))
    }
}

impl HeaderFields for SackOption {
    const TAG: u8 = 50;
    fn to_words(&self) -> [u64; 2] {
        let mut f = [0u64; 2 * MAX_BLOCKS];
        for (i, &(off, len)) in self.blocks.iter().enumerate() {
            f[2 * i] = off as u64;
            f[2 * i + 1] = len as u64;
        }
        // Fields 0-2 in the first word, 3-5 in the second.
        let word = |fs: &[u64]| {
            fs.iter()
                .enumerate()
                .fold(0u64, |w, (i, &v)| w | (v << (FIELD_BITS * i as u32)))
        };
        [word(&f[..3]), word(&f[3..])]
    }
    fn from_words(w: [u64; 2]) -> Self {
        let field = |i: usize| ((w[i / 3] >> (FIELD_BITS * (i % 3) as u32)) & FIELD_MAX) as u32;
        let mut o = SackOption::default();
        for (i, b) in o.blocks.iter_mut().enumerate() {
            *b = (field(2 * i), field(2 * i + 1));
        }
        o
    }
}

/// The receiver's side: the blocks of segments held above the cumulative ACK, and which
/// were reported last.
#[derive(Clone, Debug, Default)]
pub struct SackReceiver {
    /// Disjoint, non-adjacent blocks `[start, end)` above the cumulative ACK, in order.
    ranges: Vec<(u64, u64)>,
    /// A segment of each block reported in the last option, most recent first.
    recent: Vec<u64>,
}

impl SackReceiver {
    /// An empty record.
    pub fn new() -> Self {
        SackReceiver::default()
    }

    /// Segment `seq`, above the next one expected, has been buffered.
    pub fn received(&mut self, seq: u64) {
        let i = self.ranges.partition_point(|r| r.1 < seq);
        if i < self.ranges.len() && self.ranges[i].0 <= seq + 1 && seq <= self.ranges[i].1 {
            let r = &mut self.ranges[i];
            r.0 = r.0.min(seq);
            r.1 = r.1.max(seq + 1);
            // The block may now touch the next one.
            if i + 1 < self.ranges.len() && self.ranges[i + 1].0 == self.ranges[i].1 {
                self.ranges[i].1 = self.ranges[i + 1].1;
                self.ranges.remove(i + 1);
            }
        } else {
            self.ranges.insert(i, (seq, seq + 1));
        }
    }

    /// The cumulative ACK is now `rcv_nxt`: blocks below it are delivered.
    pub fn advance(&mut self, rcv_nxt: u64) {
        let k = self.ranges.partition_point(|r| r.0 < rcv_nxt);
        self.ranges.drain(..k);
    }

    fn block_of(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|r| r.1 <= seq);
        self.ranges.get(i).copied().filter(|r| r.0 <= seq)
    }

    /// The option for an ACK of `rcv_nxt` sent on the arrival of segment `trigger`, or
    /// `None` if no segment is held above `rcv_nxt`.
    pub fn option(&mut self, rcv_nxt: u64, trigger: u64) -> Option<SackOption> {
        if self.ranges.is_empty() {
            self.recent.clear();
            return None;
        }
        let mut blocks: Vec<(u64, u64)> = Vec::with_capacity(MAX_BLOCKS);
        let candidates = std::iter::once(trigger).chain(self.recent.iter().copied());
        for s in candidates {
            if blocks.len() == MAX_BLOCKS {
                break;
            }
            if s < rcv_nxt {
                continue;
            }
            if let Some(b) = self.block_of(s) {
                if !blocks.contains(&b) {
                    blocks.push(b);
                }
            }
        }
        // Nothing recent to repeat (the record was empty): report the lowest block.
        if blocks.is_empty() {
            blocks.push(self.ranges[0]);
        }
        self.recent = blocks.iter().map(|b| b.0).collect();
        Some(SackOption::new(rcv_nxt, &blocks))
    }
}

/// The sender's scoreboard (RFC 6675): which segments above the cumulative ACK have been
/// SACKed, and `HighRxt`, the highest segment retransmitted. `HighRxt` outlives a
/// recovery (until a timeout): a segment resent in one recovery is not resent again when
/// the loss of new data sent during it starts the next one.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// The first unacknowledged segment (`HighACK + 1`).
    base: u64,
    /// `sacked[i]`: segment `base + i` has been SACKed; empty or ending with a SACKed one.
    sacked: VecDeque<bool>,
    /// SACKed segments in `sacked`.
    count: u64,
    /// One past the highest segment retransmitted since the last timeout (`HighRxt + 1`).
    rxt_next: u64,
    /// Every un-SACKed segment below this is lost (set by partial ACKs).
    lost_below: u64,
}

impl Scoreboard {
    /// An empty scoreboard.
    pub fn new() -> Self {
        Scoreboard::default()
    }

    /// The cumulative ACK is now `una`: forgets the segments below it.
    pub fn advance(&mut self, una: u64) {
        while self.base < una {
            match self.sacked.pop_front() {
                Some(s) => {
                    self.count -= u64::from(s);
                    self.base += 1;
                }
                None => self.base = una,
            }
        }
    }

    /// Records the blocks of an ACK of `una` for data sent up to `snd_max` (exclusive);
    /// returns how many segments were SACKed for the first time.
    pub fn update(
        &mut self,
        una: u64,
        snd_max: u64,
        blocks: impl Iterator<Item = (u64, u64)>,
    ) -> u64 {
        self.advance(una);
        let mut fresh = 0;
        for (start, end) in blocks {
            let (start, end) = (start.max(self.base), end.min(snd_max));
            if start >= end {
                continue;
            }
            let need = (end - self.base) as usize;
            if self.sacked.len() < need {
                self.sacked.resize(need, false);
            }
            for i in (start - self.base) as usize..need {
                if !self.sacked[i] {
                    self.sacked[i] = true;
                    fresh += 1;
                }
            }
        }
        self.count += fresh;
        fresh
    }

    /// Forgets every SACK and retransmission (after a retransmission timeout, RFC 6675
    /// section 5.1; the go-back-N resend follows).
    pub fn clear(&mut self) {
        self.sacked.clear();
        self.count = 0;
        self.rxt_next = 0;
        self.lost_below = 0;
    }

    /// True if segment `seq` has been SACKed.
    pub fn is_sacked(&self, seq: u64) -> bool {
        seq >= self.base
            && self
                .sacked
                .get((seq - self.base) as usize)
                .copied()
                .unwrap_or(false)
    }

    /// SACKed segments above the cumulative ACK.
    pub fn sacked(&self) -> u64 {
        self.count
    }

    /// One past the highest SACKed segment (the cumulative ACK if none is).
    pub fn high_sacked(&self) -> u64 {
        self.base + self.sacked.len() as u64
    }

    /// SACKed segments above `seq`.
    fn sacked_above(&self, seq: u64) -> u64 {
        if seq < self.base {
            return self.count;
        }
        let upto = ((seq - self.base + 1) as usize).min(self.sacked.len());
        self.count - self.sacked.range(..upto).filter(|&&s| s).count() as u64
    }

    /// RFC 6675's `IsLost`: at least `dupthresh` segments above `seq` are SACKed (or a
    /// partial ACK has shown it lost, see [`Scoreboard::partial_ack`]).
    pub fn is_lost(&self, seq: u64, dupthresh: u32) -> bool {
        seq < self.lost_below || self.sacked_above(seq) >= dupthresh as u64
    }

    /// A partial ACK in recovery (new data acknowledged, not all that was outstanding when
    /// recovery began): the first unacknowledged segment, sent before the retransmission
    /// that this ACK covers, did not arrive, and is lost (RFC 6582's inference). Returns
    /// it if it has not been retransmitted since the last timeout, marking it so:
    /// the caller resends it at once, as NewReno would.
    pub fn partial_ack(&mut self) -> Option<u64> {
        self.lost_below = self.lost_below.max(self.base + 1);
        (self.rxt_next <= self.base).then(|| {
            self.rxt_next = self.base + 1;
            self.base
        })
    }

    /// Starts a recovery: returns the first unacknowledged segment, to be resent at once,
    /// unless it has already been retransmitted (in an earlier recovery whose new data
    /// was lost in turn), and sets `HighRxt` to it.
    pub fn start_recovery(&mut self) -> Option<u64> {
        let head = self.base;
        (self.rxt_next <= head).then(|| {
            self.rxt_next = head + 1;
            head
        })
    }

    /// Segment `seq` (below the highest sent) has been retransmitted.
    pub fn retransmitted(&mut self, seq: u64) {
        self.rxt_next = self.rxt_next.max(seq + 1);
    }

    /// RFC 6675's `SetPipe`: segments from the cumulative ACK to `snd_max` (exclusive)
    /// still in the network.
    pub fn pipe(&self, snd_max: u64, dupthresh: u32) -> u64 {
        let mut pipe = 0;
        let mut above = 0u64;
        let mut seq = snd_max;
        while seq > self.base {
            seq -= 1;
            if self.is_sacked(seq) {
                above += 1;
                continue;
            }
            if above < dupthresh as u64 && seq >= self.lost_below {
                pipe += 1;
            }
            if seq < self.rxt_next {
                pipe += 1;
            }
        }
        pipe
    }

    /// RFC 6675's `NextSeg`: the segment to send next, given that new data may go out
    /// (`can_send_new`, the receiver's window allowing) as segment `snd_max`; `None` if
    /// nothing may be sent.
    pub fn next_seg(&self, snd_max: u64, can_send_new: bool, dupthresh: u32) -> Option<u64> {
        let high = self.high_sacked();
        let mut s2 = self.rxt_next.max(self.base);
        while s2 < high && self.is_sacked(s2) {
            s2 += 1;
        }
        let hole = s2 < high;
        if hole && self.is_lost(s2, dupthresh) {
            Some(s2)
        } else if can_send_new {
            Some(snd_max)
        } else if hole {
            Some(s2)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_round_trips_and_leaves_out_what_does_not_fit() {
        let blocks = [(110, 115), (103, 104), (120, 200)];
        let o = SackOption::new(100, &blocks);
        let back = SackOption::from_words(o.to_words());
        assert_eq!(back, o);
        assert_eq!(back.blocks(100).collect::<Vec<_>>(), blocks);
        let far = 100 + FIELD_MAX + 1;
        let o = SackOption::new(100, &[(far, far + 2), (101, 101 + FIELD_MAX + 5)]);
        assert_eq!(
            o.blocks(100).collect::<Vec<_>>(),
            [(101, 101 + FIELD_MAX)],
            "the far block is left out, the long one cut"
        );
        assert_eq!(SackOption::new(5, &[]).blocks(5).count(), 0);
    }

    /// RFC 2018's ordering: the triggering segment's block first, then the blocks last
    /// reported, most recent first, each once, at most three.
    #[test]
    fn receiver_reports_the_newest_block_first() {
        let mut r = SackReceiver::new();
        let ask = |r: &mut SackReceiver, seq: u64| {
            r.received(seq);
            r.option(10, seq).unwrap().blocks(10).collect::<Vec<_>>()
        };
        assert_eq!(ask(&mut r, 12), [(12, 13)]);
        assert_eq!(ask(&mut r, 13), [(12, 14)]);
        assert_eq!(ask(&mut r, 16), [(16, 17), (12, 14)]);
        assert_eq!(ask(&mut r, 20), [(20, 21), (16, 17), (12, 14)]);
        assert_eq!(ask(&mut r, 24), [(24, 25), (20, 21), (16, 17)]);
        // 15 joins 16 (14 is still missing), then 14 joins 12-13 and 15-16.
        assert_eq!(ask(&mut r, 15), [(15, 17), (24, 25), (20, 21)]);
        assert_eq!(ask(&mut r, 14), [(12, 17), (24, 25), (20, 21)]);
        // The cumulative ACK moves past the first block.
        r.advance(17);
        let o = r.option(17, 11).unwrap();
        assert_eq!(o.blocks(17).collect::<Vec<_>>(), [(24, 25), (20, 21)]);
        r.advance(30);
        assert_eq!(r.option(30, 29), None);
    }

    /// IsLost, pipe and NextSeg on a window of 20 with holes at 3 and 10 (every other
    /// segment from 4 to 9 SACKed, 11 and 12 SACKed).
    #[test]
    fn scoreboard_finds_lost_holes_and_counts_the_pipe() {
        let mut sb = Scoreboard::new();
        let blocks = [(11, 13), (4, 5), (6, 7), (8, 9)];
        assert_eq!(sb.update(0, 20, blocks.iter().copied()), 5);
        assert_eq!(sb.update(0, 20, blocks.iter().copied()), 0, "nothing new");
        sb.advance(3);
        assert_eq!(sb.high_sacked(), 13);
        // Lost: 3, 5 and 7 have at least 3 SACKed segments above; 9 and 10 have 2.
        assert!(sb.is_lost(3, 3) && sb.is_lost(5, 3) && sb.is_lost(7, 3));
        assert!(!sb.is_lost(9, 3) && !sb.is_lost(10, 3) && !sb.is_lost(13, 3));
        assert_eq!(sb.start_recovery(), Some(3));
        assert_eq!(sb.start_recovery(), None, "3 is resent once");
        // Pipe: 17 segments from 3 to 19, minus 5 SACKed, minus 3 lost, plus the
        // retransmitted 3: 10.
        assert_eq!(sb.pipe(20, 3), 10);
        assert_eq!(sb.next_seg(20, true, 3), Some(5));
        sb.retransmitted(5);
        assert_eq!(sb.next_seg(20, true, 3), Some(7));
        sb.retransmitted(7);
        assert_eq!(sb.pipe(20, 3), 12);
        assert_eq!(
            sb.next_seg(20, true, 3),
            Some(20),
            "9 is not lost: new data"
        );
        assert_eq!(
            sb.next_seg(20, false, 3),
            Some(9),
            "rule 3 without new data"
        );
        sb.retransmitted(10);
        assert_eq!(sb.next_seg(20, false, 3), None);
        sb.clear();
        assert_eq!((sb.sacked(), sb.high_sacked()), (0, 3));
    }
}
