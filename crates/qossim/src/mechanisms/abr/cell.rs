//! ATM cells as packets: 53 bytes on the wire, with the ABR family's typed header saying
//! what the cell is (data, forward or backward RM cell, a bursty client's request) and,
//! for RM cells, the explicit rate, current cell rate and congestion bits.

use crate::packet::{HeaderFields, Packet};

/// Bytes of one cell on the wire.
pub const CELL_BYTES: u32 = 53;
/// Bits of one cell on the wire.
pub const CELL_BITS: f64 = 424.0;
/// Payload bytes of one cell.
pub const PAYLOAD_BYTES: u32 = 48;

/// Service class of ABR cells at an output port (below VBR).
pub const CLASS_ABR: u8 = 0;
/// Service class of VBR cells (strict priority over ABR).
pub const CLASS_VBR: u8 = 1;

/// What a cell is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CellKind {
    /// A data cell (ABR or VBR).
    Data = 0,
    /// A forward resource-management cell (source to destinations).
    Frm = 1,
    /// A backward resource-management cell (towards the source).
    Brm = 2,
    /// A bursty client's request for the next response (towards the source).
    Request = 3,
}

/// The ABR family's cell header: the cell's kind, its virtual connection and, for RM
/// cells, ER and CCR in bits per second with the CI and NI bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// What the cell is.
    pub kind: CellKind,
    /// Index of the virtual connection.
    pub vc: u16,
    /// Explicit rate, bits/s (RM cells).
    pub er: f64,
    /// Current cell rate of the source when it sent the FRM, bits/s (stored in single
    /// precision: a relative error below 10⁻⁷).
    pub ccr: f64,
    /// Congestion indication.
    pub ci: bool,
    /// No increase.
    pub ni: bool,
}

impl Cell {
    /// A data cell of `vc`.
    pub fn data(vc: u16) -> Cell {
        Cell {
            kind: CellKind::Data,
            vc,
            er: 0.0,
            ccr: 0.0,
            ci: false,
            ni: false,
        }
    }
    /// A cell of `kind` on `vc` with rates `er` and `ccr`.
    pub fn rm(kind: CellKind, vc: u16, er: f64, ccr: f64) -> Cell {
        Cell {
            kind,
            vc,
            er,
            ccr,
            ci: false,
            ni: false,
        }
    }
    /// A packet of `bytes` carrying this header (class `class`).
    pub fn packet(self, bytes: u32, class: u8) -> Packet {
        let mut p = Packet::of_size(bytes);
        p.class = class;
        p.set_header(self);
        p
    }
}

impl HeaderFields for Cell {
    const TAG: u8 = 40;
    fn to_words(&self) -> [u64; 2] {
        let flags = self.kind as u64 | (self.ci as u64) << 8 | (self.ni as u64) << 9;
        [
            self.er.to_bits(),
            ((self.ccr as f32).to_bits() as u64) << 32 | (self.vc as u64) << 16 | flags,
        ]
    }
    fn from_words(w: [u64; 2]) -> Self {
        let kind = match w[1] & 0xff {
            0 => CellKind::Data,
            1 => CellKind::Frm,
            2 => CellKind::Brm,
            _ => CellKind::Request,
        };
        Cell {
            kind,
            vc: (w[1] >> 16) as u16,
            er: f64::from_bits(w[0]),
            ccr: f32::from_bits((w[1] >> 32) as u32) as f64,
            ci: w[1] & 1 << 8 != 0,
            ni: w[1] & 1 << 9 != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let mut c = Cell::rm(CellKind::Brm, 513, 73.872e6, 12.5e6);
        c.ci = true;
        let p = c.packet(CELL_BYTES, CLASS_ABR);
        let back = p.header::<Cell>().unwrap();
        assert_eq!(back.kind, CellKind::Brm);
        assert_eq!(back.vc, 513);
        assert_eq!(back.er, 73.872e6);
        assert!((back.ccr - 12.5e6).abs() < 1.0);
        assert!(back.ci && !back.ni);
        assert_eq!(p.size, 53);
    }
}
