//! Meters and markers as written in scenarios: on a link's output port
//! (`[links."NAME"] meters = [...]`) and as a traffic entry's host profile
//! (`profile = {...}`).

use super::walk::{Cx, Tbl};
use crate::meter::{Meter, OutRule, Policer, TokenBucketProfiler, TswProfiler};
use crate::rng::Rng;
use crate::time::{Time, PS_PER_S};

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

/// Reads one meter table. `policer` says whether a policer is allowed here (on links,
/// not as a host profile); `what` names the place in messages.
pub(super) fn read_meter(cx: &Cx, t: &Tbl, policer: bool, what: &str) -> Option<MeterSpec> {
    let kind = t.req_str(cx, "kind");
    let pair = |rate_key: &str| -> (Option<u64>, Option<u64>) {
        let rate = if t.has(rate_key) {
            t.rate(cx, rate_key)
        } else {
            cx.error(t.line(), &t.key_path(rate_key), "missing (required)");
            None
        };
        let depth = if t.has("depth") {
            t.size(cx, "depth").and_then(|d| {
                if d == 0 {
                    t.error(cx, "depth", "must be at least one byte");
                    None
                } else {
                    Some(d)
                }
            })
        } else {
            cx.error(
                t.line(),
                &t.key_path("depth"),
                "missing (required: bucket depth, e.g. \"20KB\")",
            );
            None
        };
        (rate, depth)
    };
    let (spec, known): (Option<MeterSpec>, &[&str]) = match kind.as_deref() {
        Some("token_bucket") => {
            let (r, d) = pair("rate");
            let s = match (r, d) {
                (Some(rate), Some(depth)) => Some(MeterSpec::TokenBucket { rate, depth }),
                _ => None,
            };
            (s, &["kind", "rate", "depth"])
        }
        Some("policer") if policer => {
            let (r, d) = pair("rate");
            let s = match (r, d) {
                (Some(rate), Some(depth)) => Some(MeterSpec::Policer { rate, depth }),
                _ => None,
            };
            (s, &["kind", "rate", "depth"])
        }
        Some("policer") => {
            t.error(
                cx,
                "kind",
                format!("a policer cannot be {what}: put it on a link (`[links.\"NAME\"] meters = [...]`)"),
            );
            for k in ["rate", "depth"] {
                t.has(k);
            }
            (None, &["kind", "rate", "depth"])
        }
        Some("tsw") => {
            let target = if t.has("target") {
                t.rate(cx, "target")
            } else {
                cx.error(
                    t.line(),
                    &t.key_path("target"),
                    "missing (required: the target rate, e.g. \"1Mbps\")",
                );
                None
            };
            let win = if t.has("win") {
                t.time(cx, "win").and_then(|w| {
                    if w == 0 {
                        t.error(cx, "win", "must be positive");
                        None
                    } else {
                        Some(w)
                    }
                })
            } else {
                Some(PS_PER_S)
            };
            let rule = if t.has("rule") {
                t.str(cx, "rule").and_then(|r| match r.as_str() {
                    "over_target" => Some(OutRule::OverTarget),
                    "over_average" => Some(OutRule::OverAverage),
                    other => {
                        t.error(
                            cx,
                            "rule",
                            format!("unknown TSW rule {other:?}; use \"over_target\" ((avg - target)/target) or \"over_average\" ((avg - target)/avg)"),
                        );
                        None
                    }
                })
            } else {
                Some(OutRule::OverTarget)
            };
            let s = match (target, win, rule) {
                (Some(target), Some(win), Some(rule)) => Some(MeterSpec::Tsw { target, win, rule }),
                _ => None,
            };
            (s, &["kind", "target", "win", "rule"])
        }
        Some(other) => {
            let kinds = if policer {
                "policer, token_bucket or tsw"
            } else {
                "token_bucket or tsw"
            };
            t.error(
                cx,
                "kind",
                format!("unknown meter kind {other:?}; use {kinds}"),
            );
            return None;
        }
        None => return None,
    };
    t.finish(cx, known);
    spec
}
