//! Transport protocols run by end hosts.
//!
//! [`TcpRenoSender`] is a TCP Reno sender with an infinite (FTP-like) backlog and
//! [`TcpReceiver`] its sink; both are [`crate::world::Agent`]s exchanging segments and
//! acknowledgements through the modelled network.

pub mod tcp;

pub use tcp::{Marker, TcpConfig, TcpReceiver, TcpReceiverConfig, TcpRenoSender, TcpStats};
