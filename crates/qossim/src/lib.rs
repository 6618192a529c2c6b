//! qossim: a deterministic discrete-event simulator for network traffic management and
//! QoS.
//!
//! The crate is layered the way a packet travels:
//! - [`engine`]: integer-picosecond clock, event queues, scheduler;
//! - [`packet`]: the packet, its ids, mark bits and typed header;
//! - [`net`]: nodes, links with output ports, forwarding;
//! - [`queue`]: queue disciplines on output ports (drop-tail, priority, RED family);
//! - [`meter`]: edge conditioners — token-bucket and TSW profilers, policers;
//! - [`traffic`]: packet sources, flow generators and sinks;
//! - [`transport`]: end-host transport agents (TCP Reno);
//! - [`mechanisms`]: traffic-management mechanism families built from the above (PCN,
//!   DiffServ), each with its part of the scenario language;
//! - [`metrics`]: time averages, histograms, sampled series, confidence intervals;
//! - [`world`]: the arenas and the event loop tying them together;
//! - [`scenario`]: the TOML scenario language's core and its plug-in point for families;
//! - [`api`]: the language with every family registered (`qossim::load`, `qossim::run`).
//!
//! A run is single-threaded and deterministic: the same scenario and seed give
//! bit-identical results on any machine.
#![warn(missing_docs)]

pub mod api;
pub mod decl;
pub mod engine;
pub mod mechanisms;
pub mod meter;
pub mod metrics;
pub mod net;
pub mod packet;
pub mod queue;
pub mod rng;
pub mod scenario;
pub mod time;
pub mod trace;
pub mod traffic;
pub mod transport;
pub mod world;

pub use api::{build, load, parse, run};
pub use net::{HookHandle, Network, Packet};
pub use rng::Rng;
pub use time::Time;
pub use world::{Agent, AgentHandle, Ctx, World};

/// The version of this crate.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
