//! ATM ABR flow control with ERICA, for unicast and point-to-multipoint connections.
//!
//! Where each step happens:
//! - **cells** — [`Cell`]: 53-byte packets with a typed header (data, forward or
//!   backward RM cell with ER, CCR, CI and NI, a bursty client's request);
//! - **the source** — [`AbrSource`]: cells at the allowed cell rate, one forward RM cell
//!   every Nrm cells (and at least every Trm), the TM 4.0 rate rules on every backward
//!   RM cell ([`SourceParams::on_brm`]); infinite, bursty (request/response) and
//!   deterministic on/off VBR sources;
//! - **the destination** — [`AbrDestination`]: counts cells and turns every forward RM
//!   cell around;
//! - **the switch** — [`AbrSwitch`]: output-queued (VBR over ABR, unbounded), ERICA at
//!   every output port ([`EricaPort`]), cell replication at a tree's branch points and
//!   the four ways of consolidating the branches' feedback ([`Consolidation`]).
//!
//! Every cell travels hop by hop as a packet addressed to the agent that handles its
//! connection at the next node (switch or end system), so RM cells queue and propagate
//! like data cells. [`scenario`] is the family's part of the scenario language.

mod cell;
mod erica;
pub mod scenario;
mod source;
mod switch;

pub use cell::{Cell, CellKind, CELL_BITS, CELL_BYTES, CLASS_ABR, CLASS_VBR, PAYLOAD_BYTES};
pub use erica::{EricaParams, EricaPort};
pub use scenario::{AbrFamily, AbrSpec, VcSpec, ABR};
pub use source::{
    cell_interval, emit, AbrDestination, AbrSource, Client, ErStats, Hop, SourceKind, SourceParams,
    TCR,
};
pub use switch::{AbrSwitch, BranchCounts, Consolidation, QueueMax, SwitchPort, VcAtSwitch};
