//! Transport protocols run by end hosts.
//!
//! [`TcpRenoSender`] is a TCP sender (Reno, NewReno, CUBIC or DCTCP: [`Congestion`], with
//! SACK recovery optionally: [`sack`]) with an infinite (FTP-like) backlog and
//! [`TcpReceiver`] its sink; both are [`crate::world::Agent`]s exchanging segments and
//! acknowledgements through the modelled network.

pub mod cubic;
pub mod dctcp;
pub mod params;
pub mod receiver;
pub mod sack;
pub mod tcp;

pub use cubic::CubicParams;
pub use dctcp::DctcpParams;
pub use tcp::{
    Congestion, Marker, TcpConfig, TcpReceiver, TcpReceiverConfig, TcpRenoSender, TcpStats,
    TS_OPTION_BYTES,
};
