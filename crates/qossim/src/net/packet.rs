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
    /// A control message (admission request/answer, termination report, fairness message).
    Control = 2,
    /// An admission probe.
    Probe = 3,
    /// An ATM resource-management cell.
    RmCell = 4,
}

/// Mark bits carried in [`Packet::marks`].
pub mod marks {
    /// The packet belongs to PCN-controlled traffic.
    pub const PCN: u8 = 1 << 0;
    /// PCN admission-marked (by a virtual-queue marker).
    pub const PCN_ADMISSION: u8 = 1 << 1;
    /// PCN termination-marked (by a token-bucket termination marker).
    pub const PCN_TERMINATION: u8 = 1 << 2;
    /// DiffServ: in profile (IN). A profiled packet without this bit is OUT.
    pub const IN_PROFILE: u8 = 1 << 3;
    /// ECN congestion experienced.
    pub const ECN_CE: u8 = 1 << 4;
    /// Demoted from IN to OUT by a policer somewhere on the path.
    pub const DEMOTED: u8 = 1 << 5;
}

/// A packet (or an ATM cell, or an RPR frame: they are packets with their own sizes and
/// header fields).
///
/// `aux` is room for mechanism-specific header fields (RM-cell ER/CCR/CI/NI, ring fields,
/// control message payloads) so no packet ever needs a heap allocation.
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
    /// Mark bits, see [`marks`].
    pub marks: u8,
    /// Sequence number (TCP byte or segment number, packet counter).
    pub seq: u64,
    /// Acknowledgement number or a second sequence field.
    pub ack: u64,
    /// When the source created it.
    pub created: Time,
    /// A timestamp echoed by receivers (TCP RTT measurement).
    pub echo: Time,
    /// Mechanism-specific fields.
    pub aux: [f64; 2],
}

impl Packet {
    /// True if all bits of `m` are set in the marks.
    #[inline]
    pub fn has(&self, m: u8) -> bool {
        self.marks & m == m
    }
    /// Sets the bits of `m`.
    #[inline]
    pub fn set(&mut self, m: u8) {
        self.marks |= m;
    }
    /// Clears the bits of `m`.
    #[inline]
    pub fn clear(&mut self, m: u8) {
        self.marks &= !m;
    }
}
