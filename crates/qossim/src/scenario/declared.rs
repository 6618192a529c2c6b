//! Reading a table of declared parameters ([`crate::decl`]): every key is read with the
//! walker's getter for its type, checked against its bounds, and reported as `FILE:LINE:
//! key.path: reason` when wrong; absent keys take their defaults or are reported missing.

use super::walk::{Cx, Tbl};
use crate::decl::{Absent, Param, Section, Type, Value, Values};
use crate::scenario::units::QueueLimit;

/// Reads a table of a declared kind whose `kind` key is already read: its `params`, no
/// other key than those and `kind`, then the kind's `rules` (each problem blamed on its
/// key); the kind's `spec` of the values, or `None` once every problem has been reported.
pub fn read_kind<S>(
    cx: &Cx,
    t: &Tbl,
    title: &str,
    params: &[Param],
    rules: fn(&Values) -> Vec<crate::decl::Problem>,
    spec: fn(Values) -> S,
) -> Option<S> {
    let values = read_params(cx, t, title, params);
    let mut known = vec!["kind"];
    known.extend(params.iter().map(|p| p.key));
    t.finish(cx, &known);
    let values = values?;
    let problems = rules(&values);
    for (key, reason) in &problems {
        t.error(cx, key, reason.clone());
    }
    problems.is_empty().then(|| spec(values))
}

/// Reads `params` from `t` (`title` names the component in messages): the values, or
/// `None` once every problem has been reported. Keys not declared are left to
/// [`Tbl::finish`].
pub fn read_params(cx: &Cx, t: &Tbl, title: &str, params: &[Param]) -> Option<Values> {
    let mut out = Values::default();
    let mut ok = true;
    for p in params {
        if !t.has(p.key) {
            match p.default {
                Absent::Is(_) => out.set(p.key, p.default_value().expect("a fixed default")),
                Absent::Derived(_) => {}
                Absent::Required => {
                    cx.error(
                        t.line(),
                        &t.key_path(p.key),
                        format!("missing (required: {})", p.doc),
                    );
                    ok = false;
                }
            }
            continue;
        }
        let v = read_value(cx, t, title, p);
        match v.as_ref().map(|v| (v, p.check(v))) {
            Some((v, None)) => out.set(p.key, v.clone()),
            Some((_, Some(reason))) => {
                t.error(cx, p.key, reason);
                ok = false;
            }
            None => ok = false,
        }
    }
    ok.then_some(out)
}

/// The value of `p` as written (reported and `None` when it does not read as its type).
fn read_value(cx: &Cx, t: &Tbl, title: &str, p: &Param) -> Option<Value> {
    let key = p.key;
    match p.ty {
        Type::Limit | Type::PacketLimit => match t.parsed(cx, key, super::units::parse_limit)? {
            QueueLimit::Packets(n) => Some(Value::Packets(n)),
            QueueLimit::Bytes(_) if p.ty == Type::PacketLimit => {
                t.error(
                    cx,
                    key,
                    format!("{title} queues are limited in packets, e.g. \"100p\""),
                );
                None
            }
            QueueLimit::Bytes(b) => Some(Value::Bytes(b)),
        },
        Type::Time => t.time(cx, key).map(Value::Time),
        Type::Size => t.size(cx, key).map(Value::Size),
        Type::Rate => t.rate(cx, key).map(Value::Rate),
        Type::Number => t.num(cx, key).map(Value::Number),
        Type::Integer => t.uint(cx, key).map(Value::Integer),
        Type::Bool => t.bool(cx, key).map(Value::Bool),
        Type::Dist => t.parsed(cx, key, super::units::parse_dist).map(Value::Dist),
        Type::PerSecond => t
            .parsed(cx, key, super::units::parse_per_second)
            .map(Value::Number),
        Type::Choice(_) | Type::Text => t.str(cx, key).map(Value::Text),
        Type::RateOrFraction { of } => {
            let (item, line) = t.raw(cx, key)?;
            let v = item.as_value();
            if let Some(s) = v.and_then(|v| v.as_str()) {
                // A string is a rate; a fraction is written as a number.
                return match super::units::parse_rate(s) {
                    Ok(r) => Some(Value::Rate(r)),
                    Err(e) => {
                        cx.error(
                            line,
                            &t.key_path(key),
                            format!("{e}; or give a fraction of {of}, e.g. 0.5"),
                        );
                        None
                    }
                };
            }
            match v.and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64))) {
                Some(f) => Some(Value::Number(f)),
                None => {
                    cx.error(
                        line,
                        &t.key_path(key),
                        format!(
                            "expected a fraction of {of} (e.g. 0.5) or a rate (e.g. \"77.76Mbps\")"
                        ),
                    );
                    None
                }
            }
        }
        Type::CountOrSize { count } => {
            let (item, line) = t.raw(cx, key)?;
            match item.as_value() {
                Some(v) if v.as_str().is_some() => t.size(cx, key).map(Value::Size),
                Some(v) if v.as_integer().is_some_and(|n| n >= 0) => {
                    v.as_integer().map(|n| Value::Integer(n as u64))
                }
                _ => {
                    cx.error(
                        line,
                        &t.key_path(key),
                        format!(
                            "expected a positive number of {count} (e.g. 256) or a size (e.g. \"40KB\")"
                        ),
                    );
                    None
                }
            }
        }
        // Structures and tables are read by the component itself (they hold declared
        // kinds of their own); here only as written.
        Type::Structured(_) | Type::Table(_) => t
            .raw(cx, key)
            .map(|(item, _)| Value::Text(item.to_string().trim().to_string())),
        Type::Names => names_of(cx, t, key)
            .map(|items| Value::Names(items.into_iter().map(|(s, _)| s).collect())),
    }
}

/// The strings of the list `key` with the line of each (every item that is not a string
/// reported at its line, and `None`).
fn names_of(cx: &Cx, t: &Tbl, key: &str) -> Option<Vec<(String, usize)>> {
    let mut out = Vec::new();
    let mut ok = true;
    for (v, line) in t.array(cx, key)? {
        match v.as_str() {
            Some(s) => out.push((s.to_string(), line)),
            None => {
                cx.error(
                    line,
                    &t.key_path(key),
                    format!("expected a string, found {}", v.type_name()),
                );
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

/// [`read_key`] for a list of strings ([`Type::Names`]), keeping the line of each item
/// for the reader's own checks of the names: `Some(None)` when it is absent, `None` when
/// it is there but wrong (reported).
pub fn read_names(
    cx: &Cx,
    t: &Tbl,
    section: &Section,
    key: &str,
) -> Option<Option<Vec<(String, usize)>>> {
    let p = section.param(key);
    assert_eq!(p.ty, Type::Names, "{key} is not a list of strings");
    if !t.has(key) {
        return Some(None);
    }
    let items = names_of(cx, t, key)?;
    let v = Value::Names(items.iter().map(|(s, _)| s.clone()).collect());
    match p.check(&v) {
        None => Some(Some(items)),
        Some(reason) => {
            t.error(cx, key, reason);
            None
        }
    }
}

/// Reads the declared key `key` of `section` if `t` has it, checked against its bounds:
/// `Some(None)` when it is absent, `None` when it is there but wrong (reported). For
/// readers whose defaults depend on other keys or on the network (the families'), which
/// fill their own structures but state each key's type and bounds once, in `section`.
pub fn read_key(cx: &Cx, t: &Tbl, section: &Section, key: &str) -> Option<Option<Value>> {
    if !t.has(key) {
        return Some(None);
    }
    let p = section.param(key);
    let v = read_value(cx, t, section.title, p)?;
    match p.check(&v) {
        None => Some(Some(v)),
        Some(reason) => {
            t.error(cx, key, reason);
            None
        }
    }
}

/// [`read_key`] into `slot` (converted by `conv`) when `t` has `key`; false if it is
/// there but wrong (reported).
pub fn key_into<T>(
    cx: &Cx,
    t: &Tbl,
    section: &Section,
    key: &str,
    slot: &mut T,
    conv: impl FnOnce(&Value) -> T,
) -> bool {
    match read_key(cx, t, section, key) {
        Some(Some(v)) => {
            *slot = conv(&v);
            true
        }
        Some(None) => true,
        None => false,
    }
}

/// [`read_key`], with the declared default when `t` lacks `key`: `Some(None)` only for a
/// key absent whose default is not a fixed value, `None` when it is there but wrong
/// (reported).
pub fn key_or_default(cx: &Cx, t: &Tbl, section: &Section, key: &str) -> Option<Option<Value>> {
    match read_key(cx, t, section, key)? {
        Some(v) => Some(Some(v)),
        None => Some(section.param(key).default_value()),
    }
}
