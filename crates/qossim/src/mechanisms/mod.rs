//! Traffic-management mechanisms built on the generic hook points (port hooks, agents,
//! taps): each submodule is one family, named after its study's vocabulary, holding its
//! models, its part of the scenario language (a [`Family`]) and its post-run analysis.
//!
//! - [`pcn`]: Pre-Congestion Notification — virtual-queue admission marking, token-bucket
//!   termination marking, egress Congestion Level Estimates and sustainable-rate
//!   measurement, ingress admission control and flow termination.
//! - [`diffserv`]: DiffServ Assured Service — the IN/OUT drop and demotion figures of
//!   RED/RIO ports, policers and host profiles.
//! - [`rpr`]: RPR ring fairness — stations with transit queues and an allowed-rate
//!   limiter, aggressive and conservative fairness over real fairness messages.
//! - [`abr`]: ATM ABR flow control — TM 4.0 sources, ERICA switches and
//!   point-to-multipoint connections with four ways of consolidating feedback.
//! - [`endpoint`]: endpoint admission control — probing hosts (simple, early reject,
//!   slow start), virtual-queue marking, and the Measured Sum benchmark.
//!
//! [`registry`] lists the families a scenario is read with: adding a family is its
//! folder, its `pub mod` line here and its line in [`FAMILIES`].

pub mod abr;
pub mod diffserv;
pub mod endpoint;
pub mod pcn;
pub mod rpr;

use crate::scenario::{Family, Registry};

/// Every mechanism family of this crate, in the order they build into a world.
pub static FAMILIES: &[&dyn Family] = &[
    &diffserv::DIFFSERV,
    &pcn::PCN,
    &rpr::RPR,
    &abr::ABR,
    &endpoint::ENDPOINT,
];

/// The registry of every family of this crate.
pub fn registry() -> Registry {
    Registry::new(FAMILIES)
}

#[cfg(test)]
mod tests {
    #[test]
    fn families_claim_disjoint_mark_bits() {
        super::registry().check_mark_bits().unwrap();
    }
}
