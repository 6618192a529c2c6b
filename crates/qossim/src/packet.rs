//! The packet: a small plain struct moved by value through ports, queues and links.

use crate::time::Time;

/// Index of a node in the network arena.
pub type NodeId = u32;
/// Index of a unidirectional link (and of its output port) in the network arena.
pub type LinkId = u32;
/// Index of an agent (source, sink, controller) in the agent arena.
pub type AgentId = u32;
/// Index of a flow in the flow table.
pub type FlowId = u32;

/// "No such id" for the id types above.
pub const NONE: u32 = u32::MAX;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum PacketKind {
    /// Application data (UDP payload or TCP segment).
    #[default]
    Data = 0,
    /// A TCP acknowledgement.
    Ack = 1,
}

/// Mark bits carried in [`Packet::marks`].
///
/// The core defines the bits that its own conditioners and disciplines read; every
/// mechanism family declares the bits it uses beside its model (`Family::mark_bits`),
/// and the registry checks that no two claim the same bit. Allocation:
///
/// | bits | owner |
/// |---|---|
/// | 0–2 | PCN (`mechanisms::pcn::marks`) |
/// | 3, 5 | core: DiffServ drop precedence (IN profile, demoted) |
/// | 4 | core: ECN congestion experienced |
/// | 6 | core: ECN-capable transport (ECT) |
/// | 7, 8 | core: TCP's ECN flags (ECE on ACKs, CWR on data) |
/// | 9–15 | free |
pub mod marks {
    /// DiffServ: in profile (IN). A profiled packet without this bit is OUT.
    pub const IN_PROFILE: u16 = 1 << 3;
    /// ECN congestion experienced.
    pub const ECN_CE: u16 = 1 << 4;
    /// Demoted from IN to OUT by a policer somewhere on the path.
    pub const DEMOTED: u16 = 1 << 5;
    /// ECN-capable transport: an AQM with ECN on may mark this packet (CE) instead of
    /// dropping it.
    pub const ECN_ECT: u16 = 1 << 6;
    /// TCP's ECN-Echo flag, on an ACK: the receiver saw a CE mark (RFC 3168).
    pub const TCP_ECE: u16 = 1 << 7;
    /// TCP's Congestion Window Reduced flag, on data: the sender reacted to an ECE.
    pub const TCP_CWR: u16 = 1 << 8;
    /// The bits the core itself uses.
    pub const CORE: u16 = IN_PROFILE | ECN_CE | DEMOTED | ECN_ECT | TCP_ECE | TCP_CWR;
}

/// Mechanism fields carried in a packet's small typed header (an RM cell's rates, a
/// ring's fairness message, a probe's verdict): a `Copy` type that converts to and from
/// two 64-bit words, with a tag unique to the type. A packet carries at most one header;
/// reading it as another type gives `None`, so a family never misreads another's fields.
pub trait HeaderFields: Copy {
    /// The tag marking this header type (nonzero; unique across the crate's families).
    const TAG: u8;
    /// The fields as two words.
    fn to_words(&self) -> [u64; 2];
    /// The fields from two words written by [`HeaderFields::to_words`].
    fn from_words(words: [u64; 2]) -> Self;
}

/// A packet (or an ATM cell, or an RPR frame: they are packets with their own sizes and
/// header fields).
///
/// Mechanism-specific fields travel in a small typed header ([`HeaderFields`],
/// [`Packet::header`]) so no packet ever needs a heap allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Packet {
    /// Size on the wire, bytes.
    pub size: u32,
    /// Flow the packet belongs to.
    pub flow: FlowId,
    /// Node where it entered the network.
    pub src: NodeId,
    /// Node where it leaves the network.
    pub dst: NodeId,
    /// Agent at `dst` that receives it.
    pub dst_agent: AgentId,
    /// Explicit route id, or [`NONE`] to follow shortest-path forwarding.
    pub route: u32,
    /// Position along an explicit route.
    pub hop: u16,
    /// What it carries.
    pub kind: PacketKind,
    /// Service class (priority level, DiffServ class); 0 is best effort.
    pub class: u8,
    /// Tag of the typed header (0: none); read and write it through [`Packet::header`]
    /// and [`Packet::set_header`].
    pub hdr_tag: u8,
    /// Mark bits, see [`marks`].
    pub marks: u16,
    /// Sequence number (TCP byte or segment number, packet counter).
    pub seq: u64,
    /// Acknowledgement number or a second sequence field.
    pub ack: u64,
    /// When the source created it.
    pub created: Time,
    /// A timestamp echoed by receivers (TCP RTT measurement).
    pub echo: Time,
    /// The typed header's words (see [`Packet::header`]).
    pub hdr: [u64; 2],
    /// Where this packet's arrivals fall among events at the same instant: a number of
    /// the scheduler's sequence, drawn when the packet entered the network (set by
    /// [`crate::world::Ctx::send`] and [`crate::net::Network::enqueue`]; see
    /// [`crate::engine::Scheduler::arrival_at`]).
    pub tie: u64,
}

impl Packet {
    /// A packet of `size` bytes with every other field at its default (flow 0, no
    /// marks, no header): what tests and scripted arrivals start from.
    pub fn of_size(size: u32) -> Packet {
        Packet {
            size,
            ..Default::default()
        }
    }

    /// True if all bits of `m` are set in the marks.
    #[inline]
    pub fn has(&self, m: u16) -> bool {
        self.marks & m == m
    }
    /// Sets the bits of `m`.
    #[inline]
    pub fn set(&mut self, m: u16) {
        self.marks |= m;
    }
    /// Clears the bits of `m`.
    #[inline]
    pub fn clear(&mut self, m: u16) {
        self.marks &= !m;
    }
    /// The typed header, if the packet carries one of type `H`.
    #[inline]
    pub fn header<H: HeaderFields>(&self) -> Option<H> {
        (self.hdr_tag == H::TAG).then(|| H::from_words(self.hdr))
    }
    /// Sets the typed header (replacing any other).
    #[inline]
    pub fn set_header<H: HeaderFields>(&mut self, h: H) {
        debug_assert!(H::TAG != 0, "header tag 0 means no header");
        self.hdr_tag = H::TAG;
        self.hdr = h.to_words();
    }
    /// Removes the typed header.
    #[inline]
    pub fn clear_header(&mut self) {
        self.hdr_tag = 0;
        self.hdr = [0; 2];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Rates {
        er: f64,
        ccr: f64,
    }
    impl HeaderFields for Rates {
        const TAG: u8 = 200;
        fn to_words(&self) -> [u64; 2] {
            [self.er.to_bits(), self.ccr.to_bits()]
        }
        fn from_words(w: [u64; 2]) -> Self {
            Rates {
                er: f64::from_bits(w[0]),
                ccr: f64::from_bits(w[1]),
            }
        }
    }
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Verdict(bool);
    impl HeaderFields for Verdict {
        const TAG: u8 = 201;
        fn to_words(&self) -> [u64; 2] {
            [self.0 as u64, 0]
        }
        fn from_words(w: [u64; 2]) -> Self {
            Verdict(w[0] != 0)
        }
    }

    #[test]
    fn typed_header_round_trips_and_is_never_misread() {
        let mut p = Packet::default();
        assert_eq!(p.header::<Rates>(), None);
        let r = Rates {
            er: 1.5e8,
            ccr: -0.25,
        };
        p.set_header(r);
        assert_eq!(p.header::<Rates>(), Some(r));
        assert_eq!(p.header::<Verdict>(), None, "another type reads nothing");
        p.set_header(Verdict(true));
        assert_eq!(p.header::<Verdict>(), Some(Verdict(true)));
        assert_eq!(p.header::<Rates>(), None);
        p.clear_header();
        assert_eq!(p.header::<Verdict>(), None);
    }

    /// Every hop copies the packet; 88 bytes since it carries its own place among
    /// simultaneous events ([`Packet::tie`]).
    #[test]
    fn packet_stays_small() {
        assert!(std::mem::size_of::<Packet>() <= 88);
    }
}
