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
pub mod params;
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

use crate::metrics::declared::{stat, Stat, Window::*};

/// The ABR family's statistics (`abr.*` and its series).
pub const STATS: &[Stat] = &[
    stat("abr.bottleneck", "name", Run, "the port taken as the bottleneck"),
    stat("abr.bottleneck_utilization", "fraction", Run, "its utilization"),
    stat("abr.{max_queue_cells|steady_max_queue_cells}", "cells", Run, "most cells queued at any port (over the run; after its first tenth)"),
    stat("abr.vc.{vc}.{acr_final_mbps|acr_mean_mbps|er_max_mbps|er_mean_mbps|er_min_mbps|er_sd_mbps}", "Mb/s", Run, "a connection's allowed cell rate (at the end; mean) and explicit rate statistics"),
    stat("abr.vc.{vc}.{cells_sent|data_cells_sent}", "cells", Run, "cells and data cells a source sent"),
    stat("abr.vc.{vc}.{brm_received|bursts}", "count", Run, "backward RM cells received; on-periods of a bursty source"),
    stat("abr.vc.{vc}.dest.{node}.cells", "cells", Run, "data cells a destination received"),
    stat("abr.vc.{vc}.dest.{node}.rate_mbps", "Mb/s", Run, "a destination's received rate"),
    stat("abr.branch.{switch}.{vc}.{absorbed|returned|returned_blind}", "cells", Run, "a branch point's RM cells absorbed, returned, returned without all branches"),
    stat("abr.port.{link}.{max_queue_cells|steady_max_queue_cells}", "cells", Run, "most cells queued at a port (over the run; after its first tenth)"),
    stat("abr.port.{link}.utilization", "fraction", Run, "a port's utilization"),
    stat("abr.acr.{vc}", "Mb/s", Run, "series: a source's allowed cell rate"),
    stat("abr.cells.{vc}.{node}", "cells", Run, "series: cells received by a destination"),
    stat("abr.queue.{link}", "cells", Run, "series: cells queued at a port"),
    stat("abr.util.{link}", "%", Run, "series: a port's utilization in each interval"),
];
