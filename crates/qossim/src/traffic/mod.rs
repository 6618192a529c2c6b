//! Traffic: packet sources, flow-level generators and sinks.
//!
//! A [`SourceModel`] describes how one flow sends (CBR, on-off, frame trace, a random
//! choice among models); [`Source`] is the agent that sends a flow's packets;
//! [`FlowGenerator`] creates flows with Poisson or batch arrivals and exponential or fixed
//! holding times; [`Sink`] counts what arrives.

pub mod generator;
pub mod kind;
pub mod models;
mod source;
mod trace;

pub use generator::{
    ActiveCall, Admission, Arrivals, CallAdmission, CallStreams, Calls, FlowGenerator, Holding,
    MaxActive, POLICY_TIMER,
};
pub use kind::{model_keys, model_kind, ModelKind, MODELS};
pub use models::{named_model, Codec, CODECS};
pub use source::{PacketTemplate, Period, Sink, SizeDist, Source, SourceModel};
pub use trace::{Frame, FrameTrace};
