//! What the registry of queue disciplines holds about each kind: its name in scenarios,
//! its declared parameters, the relations between them, and how to make its
//! specification and its discipline.

use super::QueueDisc;
use crate::decl::{Param, Problem, Values};
use crate::rng::Rng;
use crate::scenario::QueueSpec;

/// What a discipline is given when the world builds a link's queue.
pub struct LinkEnv<'a> {
    /// The link's rate, bits per second.
    pub rate_bps: u64,
    /// Makes the discipline's own random stream (`queue.LINK`).
    pub rng: &'a dyn Fn() -> Rng,
}

/// One queue discipline as scenarios name it (an entry of [`super::DISCIPLINES`]).
pub struct QueueKind {
    /// The `kind` scenarios write.
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// Its name in prose ("RED", "CoDel").
    pub title: &'static str,
    /// One line saying what it does.
    pub doc: &'static str,
    /// Its parameters (the keys of its table besides `kind`).
    pub params: &'static [Param],
    /// The relations between parameters, checked once every value is in its bounds
    /// (by the scenario reader and by the model's `validate()` alike).
    pub rules: fn(&Values) -> Vec<Problem>,
    /// The specification of valid values (defaults filled in).
    pub spec: fn(Values) -> QueueSpec,
    /// The statistics its port's summary adds (`link.{link}.` keys), declared beside
    /// the model; the reference of statistics lists them in registry order.
    pub stats: &'static [crate::metrics::declared::Stat],
    /// The discipline of one link for a specification this kind made.
    pub build: fn(&QueueSpec, &LinkEnv) -> Box<dyn QueueDisc>,
}

impl QueueKind {
    /// The name `describe` and the documentation use: `queue.NAME`.
    pub fn qualified(&self) -> String {
        format!("queue.{}", self.name)
    }

    /// The parameter `key`, if declared.
    pub fn param(&self, key: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.key == key)
    }
}

impl std::fmt::Debug for QueueKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QueueKind({})", self.name)
    }
}

/// Every registered queue discipline with its declared parameters, as JSON entries of
/// [`crate::decl::catalogue`] (group `queue`).
pub fn describe() -> Vec<serde_json::Value> {
    super::DISCIPLINES
        .iter()
        .map(|k| crate::decl::describe_kind("queue", k.name, k.aliases, k.title, k.doc, k.params))
        .collect()
}
