//! Meters and markers as written in scenarios: on a link's output port
//! (`[links."NAME"] meters = [...]`) and as a traffic entry's host profile
//! (`profile = {...}`).

use super::walk::{Cx, Tbl};
use crate::meter::{Meter, MeterKind, OutRule, Policer, TokenBucketProfiler, TswProfiler, METERS};
use crate::rng::Rng;
use crate::time::Time;

/// A meter or marker as configured.
#[derive(Clone, Debug, PartialEq)]
pub enum MeterSpec {
    /// Token-bucket profiler: IN while tokens last, OUT beyond.
    TokenBucket {
        /// Token rate, bits per second.
        rate: u64,
        /// Depth, bytes.
        depth: u64,
    },
    /// Time-sliding-window profiler.
    Tsw {
        /// Target rate, bits per second.
        target: u64,
        /// Averaging window.
        win: Time,
        /// How an estimate above the target turns into an OUT probability.
        rule: OutRule,
    },
    /// Policer: demotes IN packets beyond its token bucket to OUT.
    Policer {
        /// Token rate, bits per second.
        rate: u64,
        /// Depth, bytes.
        depth: u64,
    },
}

impl MeterSpec {
    /// The kind as written in scenarios.
    pub fn kind(&self) -> &'static str {
        match self {
            MeterSpec::TokenBucket { .. } => "token_bucket",
            MeterSpec::Tsw { .. } => "tsw",
            MeterSpec::Policer { .. } => "policer",
        }
    }

    /// A meter for this configuration; `rng` feeds the TSW marker, `start` starts its
    /// window (the time the metered traffic starts).
    pub fn make(&self, rng: Rng, start: Time) -> Box<dyn Meter> {
        match *self {
            MeterSpec::TokenBucket { rate, depth } => {
                Box::new(TokenBucketProfiler::new(rate, depth))
            }
            MeterSpec::Tsw { target, win, rule } => Box::new(
                TswProfiler::new(target, win, rng)
                    .with_rule(rule)
                    .starting_at(start),
            ),
            MeterSpec::Policer { rate, depth } => Box::new(Policer::new(rate, depth)),
        }
    }
}

/// Reads one meter table with the declaration of its kind in the registry
/// ([`crate::meter::METERS`]). `policer` says whether a policer is allowed here (on
/// links, not as a host profile); `what` names the place in messages.
pub(super) fn read_meter(cx: &Cx, t: &Tbl, policer: bool, what: &str) -> Option<MeterSpec> {
    let kind = t.req_str(cx, "kind")?;
    let allowed: Vec<&MeterKind> = METERS
        .iter()
        .copied()
        .filter(|k| policer || k.host_profile)
        .collect();
    let Some(k) = METERS.iter().copied().find(|k| k.name == kind) else {
        let names: Vec<&str> = allowed.iter().map(|k| k.name).collect();
        let all: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        t.error(
            cx,
            "kind",
            format!(
                "unknown meter kind {kind:?}{}; use {}",
                super::walk::did_you_mean(&kind, &names),
                crate::decl::or_list(&all)
            ),
        );
        return None;
    };
    if !allowed.iter().any(|a| a.name == k.name) {
        t.error(
            cx,
            "kind",
            format!(
                "a {} cannot be {what}: put it on a link (`[links.\"NAME\"] meters = [...]`)",
                k.name
            ),
        );
        // Its other keys are not unknown for that.
        for p in k.params {
            t.has(p.key);
        }
        return None;
    }
    super::declared::read_kind(cx, t, k.title, k.params, k.rules, k.spec)
}
