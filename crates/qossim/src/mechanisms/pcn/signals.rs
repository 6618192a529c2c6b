//! The messages PCN's edge controllers exchange through the signalling channel
//! ([`crate::world::Ctx::signal`]): admission requests and answers, and sustainable-rate
//! reports. Ingress and egress know each other only through these types.

use crate::net::NodeId;
use crate::time::Time;

/// An admission request: the ingress asks its aggregate's egress for the CLE.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CleRequest {
    /// The call, numbered by its ingress.
    pub call: u64,
    /// When the call arrived at the ingress.
    pub requested: Time,
    /// The aggregate's ingress node (how the egress knows the aggregate).
    pub ingress_node: NodeId,
    /// The answer's delay back to the ingress.
    pub reply_after: Time,
}

/// The egress's answer to a [`CleRequest`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CleAnswer {
    /// The call asked about.
    pub call: u64,
    /// When the call arrived at the ingress.
    pub requested: Time,
    /// The aggregate's Congestion Level Estimate when the request reached the egress.
    pub cle: f64,
}

/// A sustainable aggregate rate sent by an egress to an ingress.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SarReport {
    /// When the measurement began (the termination-marked packet that started it
    /// arrived): `sent` minus the SAR period.
    pub measured_from: Time,
    /// When the measurement ended and the report left the egress.
    pub sent: Time,
    /// When it reaches the ingress.
    pub arrives: Time,
    /// The aggregate's ingress node.
    pub ingress_node: NodeId,
    /// The sustainable aggregate rate, bits per second.
    pub sar_bps: f64,
}
