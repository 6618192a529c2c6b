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

/// Every registered queue discipline with its declared parameters, as JSON (what
/// `qossim describe` prints and the documentation's reference tables are made from):
/// a list of `{kind, name, aliases, title, doc, params: [{key, type, unit, default,
/// bounds, doc}]}`, `kind` being `queue.NAME`.
pub fn describe() -> serde_json::Value {
    use serde_json::json;
    let kinds: Vec<serde_json::Value> = super::DISCIPLINES
        .iter()
        .map(|k| {
            let params: Vec<serde_json::Value> = k
                .params
                .iter()
                .map(|p| {
                    let allowed: Vec<&str> = match p.ty {
                        crate::decl::Type::Choice(a) => a.to_vec(),
                        _ => Vec::new(),
                    };
                    json!({
                        "key": p.key,
                        "type": p.ty.name(),
                        "unit": p.unit,
                        "default": p.default_text(),
                        "required": p.default == crate::decl::Absent::Required,
                        "bounds": p.bounds_text(),
                        "allowed": allowed,
                        "doc": p.doc,
                    })
                })
                .collect();
            json!({
                "kind": k.qualified(),
                "name": k.name,
                "aliases": k.aliases,
                "title": k.title,
                "doc": k.doc,
                "params": params,
            })
        })
        .collect();
    serde_json::Value::Array(kinds)
}
