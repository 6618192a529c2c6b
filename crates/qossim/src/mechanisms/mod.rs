//! Traffic-management mechanisms built on the generic hook points (port hooks, agents,
//! taps): each submodule is one family, named after its study's vocabulary.
//!
//! - [`pcn`]: Pre-Congestion Notification — virtual-queue admission marking, token-bucket
//!   termination marking, egress Congestion Level Estimates and sustainable-rate
//!   measurement, ingress admission control and flow termination.

pub mod pcn;
