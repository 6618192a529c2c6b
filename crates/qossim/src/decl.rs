//! Declared parameters: a component states each of its parameters once — key, type,
//! unit, default, bounds or allowed values, and a one-line description — next to its
//! model. From that one statement come the scenario reader (and its `FILE:LINE: key:
//! reason` diagnostics), the model's own validation for worlds built by hand, the
//! reference tables of the documentation, the fuzzer's vocabulary and `qossim describe`.
//!
//! Defaults are written in the scenario notation (`"5ms"`, `"1000p"`, `"0.002"`) and
//! parsed by the same parsers as the values a scenario gives, so the documentation shows
//! exactly what a scenario may write. Bounds are stated on the value's scalar: seconds
//! for times, bytes for sizes, bits per second for rates, the count for limits.

use crate::scenario::units::{self, QueueLimit};
use crate::time::{to_secs, Time};

/// The type of a declared parameter: how a scenario writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// A queue limit in packets (`"100p"`) or bytes (`"64KB"`).
    Limit,
    /// A queue limit in packets only (`"100p"`).
    PacketLimit,
    /// A time with a unit (`"15ms"`).
    Time,
    /// A size with a unit (`"1500B"`).
    Size,
    /// A rate with a unit (`"10Mbps"`).
    Rate,
    /// A plain number (integer or float).
    Number,
    /// A non-negative integer.
    Integer,
    /// `true` or `false`.
    Bool,
    /// A random duration (`"exp:500ms"`, `"fixed:1s"`, `"pareto:1.5:340ms"`); bounds are
    /// stated on its mean.
    Dist,
    /// A rate of events (`"800/s"`, `"600/min"`), per second.
    PerSecond,
    /// One of a fixed set of strings.
    Choice(&'static [&'static str]),
    /// A string in the component's own notation (checked by the component's rules).
    Text,
    /// A rate with a unit (`"8Mbps"`) or a plain number, a fraction of the rate `of`
    /// names (`"the link rate"`); bounds are stated on the fraction (a rate is positive
    /// by its notation).
    RateOrFraction {
        /// What the fraction is of, in messages (`"the link rate"`).
        of: &'static str,
    },
    /// A plain integer, a count of what `count` names (`"packets"`), or a size with a
    /// unit (`"40KB"`); bounds are stated on the count or the bytes.
    CountOrSize {
        /// What the count counts, in messages (`"packets"`).
        count: &'static str,
    },
    /// A list the component reads itself; the text names its shape in the reference
    /// tables (`"list of link names"`, `"list of times"`). Tables are [`Type::Table`].
    Structured(&'static str),
    /// A list of strings (`["s0", "r0", "d0"]`): names of nodes, links, traffic entries,
    /// … (checked by the component's rules against the network).
    Names,
    /// A table (or array of tables) of its own, declared under the kind or group named
    /// here (`"meter"`, `"traffic.calls"`).
    Table(&'static str),
}

impl Type {
    /// The type's name in the reference tables.
    pub fn name(&self) -> &'static str {
        match self {
            Type::Limit => "limit",
            Type::PacketLimit => "packet limit",
            Type::Time => "time",
            Type::Size => "size",
            Type::Rate => "rate",
            Type::Number => "number",
            Type::Integer => "integer",
            Type::Bool => "bool",
            Type::Dist => "distribution",
            Type::PerSecond => "events per time",
            Type::Choice(_) => "choice",
            Type::Text => "string",
            Type::RateOrFraction { .. } => "rate or fraction",
            Type::CountOrSize { .. } => "count or size",
            Type::Structured(shape) => shape,
            Type::Names => "list of strings",
            Type::Table(_) => "table",
        }
    }

    /// How a value written `text` in the scenario notation appears in a TOML file:
    /// numbers, booleans and structured values bare, everything else quoted.
    pub fn toml(&self, text: &str) -> String {
        let bare = match self {
            Type::Number | Type::Integer | Type::Bool | Type::Structured(_) | Type::Table(_) => {
                true
            }
            // A list, bare; a word that stands for one ("all"), quoted.
            Type::Names => text.trim_start().starts_with('['),
            Type::RateOrFraction { .. } | Type::CountOrSize { .. } => text.parse::<f64>().is_ok(),
            _ => false,
        };
        if bare {
            text.to_string()
        } else {
            format!("{text:?}")
        }
    }
}

/// A value of a declared parameter, as read.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A limit in packets.
    Packets(u64),
    /// A limit in bytes.
    Bytes(u64),
    /// A time, picoseconds.
    Time(Time),
    /// A size, bytes.
    Size(u64),
    /// A rate, bits per second.
    Rate(u64),
    /// A number.
    Number(f64),
    /// An integer.
    Integer(u64),
    /// A boolean.
    Bool(bool),
    /// A random duration.
    Dist(units::Dist),
    /// A string (choices and text).
    Text(String),
    /// A list of strings.
    Names(Vec<String>),
}

impl Value {
    /// The scalar the bounds are stated on (seconds for times), `None` for booleans and
    /// strings.
    pub fn scalar(&self) -> Option<f64> {
        match self {
            Value::Packets(x) | Value::Bytes(x) | Value::Size(x) | Value::Rate(x) => {
                Some(*x as f64)
            }
            Value::Integer(x) => Some(*x as f64),
            Value::Time(t) => Some(to_secs(*t)),
            Value::Number(x) => Some(*x),
            Value::Dist(d) => Some(dist_mean(*d)),
            Value::Bool(_) | Value::Text(_) | Value::Names(_) => None,
        }
    }

    /// The value in the scenario notation.
    pub fn render(&self) -> String {
        match self {
            Value::Packets(n) => format!("{n}p"),
            Value::Bytes(b) | Value::Size(b) => format!("{b}B"),
            Value::Time(t) => render_time(*t),
            Value::Rate(r) => format!("{r}bps"),
            Value::Number(x) => format!("{x}"),
            Value::Integer(n) => format!("{n}"),
            Value::Bool(b) => format!("{b}"),
            Value::Dist(d) => match *d {
                units::Dist::Exp(m) => format!("exp:{m}s"),
                units::Dist::Fixed(m) => format!("fixed:{m}s"),
                units::Dist::Pareto(a, m) => format!("pareto:{a}:{m}s"),
            },
            Value::Text(s) => s.clone(),
            Value::Names(items) => {
                let quoted: Vec<String> = items.iter().map(|s| quote(s)).collect();
                format!("[{}]", quoted.join(", "))
            }
        }
    }
}

impl Value {
    /// The time this value holds (it must be a time).
    pub fn as_time(&self) -> Time {
        match self {
            Value::Time(t) => *t,
            v => panic!("not a time: {v:?}"),
        }
    }

    /// The scalar of a number, rate, size, integer or limit (it must have one).
    pub fn as_f64(&self) -> f64 {
        self.scalar()
            .unwrap_or_else(|| panic!("not a number: {self:?}"))
    }

    /// The count of a size, rate, integer or limit.
    pub fn as_u64(&self) -> u64 {
        match self {
            Value::Size(x)
            | Value::Rate(x)
            | Value::Integer(x)
            | Value::Packets(x)
            | Value::Bytes(x) => *x,
            v => panic!("not a count: {v:?}"),
        }
    }

    /// The string of a choice or text.
    pub fn as_str(&self) -> &str {
        match self {
            Value::Text(s) => s,
            v => panic!("not a string: {v:?}"),
        }
    }

    /// The strings of a list.
    pub fn as_names(&self) -> &[String] {
        match self {
            Value::Names(items) => items,
            v => panic!("not a list of strings: {v:?}"),
        }
    }
}

/// `s` as a TOML basic string (`"a\"b"`).
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Parses a list of strings in the TOML notation (`["a", "b"]`, `[]`).
pub fn parse_names(text: &str) -> Result<Vec<String>, String> {
    let v = text
        .trim()
        .parse::<toml_edit::Value>()
        .map_err(|_| format!("expected a list of strings, e.g. [\"a\", \"b\"], got {text:?}"))?;
    let Some(items) = v.as_array() else {
        return Err(format!(
            "expected a list of strings, e.g. [\"a\", \"b\"], found {}",
            v.type_name()
        ));
    };
    items
        .iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("expected a string, found {}", x.type_name()))
        })
        .collect()
}

/// A section of a scenario (a family's `[abr]`, the core `[run]`) or one of its tables,
/// with its declared keys: what `qossim describe` lists as `family.NAME` or `core.NAME`
/// and what the section's reader checks the keys' values against.
pub struct Section {
    /// The name after `family.` or `core.` (`abr`, `rpr`, `run`, `traffic`).
    pub name: &'static str,
    /// What a scenario writes to open it (`[abr]`).
    pub written: &'static str,
    /// Its name in prose.
    pub title: &'static str,
    /// One line saying what it configures.
    pub doc: &'static str,
    /// Its declared keys (tables and arrays of tables in it are described in prose).
    pub params: &'static [Param],
}

impl Section {
    /// The declared key `key` (a reader asking for an undeclared key is a bug).
    pub fn param(&self, key: &str) -> &'static Param {
        self.params
            .iter()
            .find(|p| p.key == key)
            .unwrap_or_else(|| panic!("{}: {key} is not declared", self.written))
    }

    /// Its declared keys.
    pub fn keys(&self) -> Vec<&'static str> {
        self.params.iter().map(|p| p.key).collect()
    }
}

impl std::fmt::Debug for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Section({})", self.written)
    }
}

/// The mean of a random duration, seconds.
pub fn dist_mean(d: units::Dist) -> f64 {
    match d {
        units::Dist::Exp(m) | units::Dist::Fixed(m) | units::Dist::Pareto(_, m) => m,
    }
}

/// A time in the largest unit that writes it as a whole number.
fn render_time(t: Time) -> String {
    use crate::time::{PS_PER_MS, PS_PER_S};
    if t == 0 {
        "0s".into()
    } else if t.is_multiple_of(PS_PER_S) {
        format!("{}s", t / PS_PER_S)
    } else if t.is_multiple_of(PS_PER_MS) {
        format!("{}ms", t / PS_PER_MS)
    } else if t.is_multiple_of(1_000_000) {
        format!("{}us", t / 1_000_000)
    } else {
        format!("{}s", to_secs(t))
    }
}

/// What a parameter is when a scenario leaves it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Absent {
    /// It must be given.
    Required,
    /// Computed from other parameters (the text says how).
    Derived(&'static str),
    /// This value, in the scenario notation.
    Is(&'static str),
}

/// The values a parameter may take (on [`Value::scalar`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bounds {
    /// Any value of the type.
    Any,
    /// Above zero.
    Positive,
    /// Above zero and at most this.
    PositiveAtMost(f64),
    /// At least this.
    AtLeast(f64),
    /// Within `[lo, hi]`.
    Between(f64, f64),
    /// Within `(lo, hi]`.
    AboveUpTo(f64, f64),
}

/// One declared parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    /// The key in the scenario table.
    pub key: &'static str,
    /// How it is written.
    pub ty: Type,
    /// The unit of its value in the model (for the reference tables; empty if none).
    pub unit: &'static str,
    /// Its default.
    pub default: Absent,
    /// The values it may take.
    pub bounds: Bounds,
    /// One line saying what it is.
    pub doc: &'static str,
}

impl Param {
    /// A parameter with no bounds beyond its type and no unit.
    pub const fn new(key: &'static str, ty: Type, default: Absent, doc: &'static str) -> Self {
        Param {
            key,
            ty,
            unit: "",
            default,
            bounds: Bounds::Any,
            doc,
        }
    }

    /// The same parameter with `unit`.
    pub const fn unit(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        self
    }

    /// The same parameter with `bounds`.
    pub const fn bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = bounds;
        self
    }

    /// A scalar of this parameter's type in the scenario notation (bounds in messages).
    fn show(&self, x: f64) -> String {
        match self.ty {
            Type::Time | Type::Dist => format!("{x}s"),
            Type::PerSecond => format!("{x}/s"),
            Type::Size => format!("{x}B"),
            Type::Rate => format!("{x}bps"),
            Type::PacketLimit => format!("{x}p"),
            // Rate-or-fraction bounds are on the fraction, count-or-size ones on either.
            _ => format!("{x}"),
        }
    }

    /// Checks `v` against the bounds and allowed values: the reason if it is outside.
    pub fn check(&self, v: &Value) -> Option<String> {
        if let (Type::Choice(allowed), Value::Text(s)) = (self.ty, v) {
            if !allowed.contains(&s.as_str()) {
                return Some(format!(
                    "unknown {} {s:?}{}; use {}",
                    self.key,
                    crate::scenario::walk::did_you_mean(s, allowed),
                    or_list(&allowed.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>())
                ));
            }
        }
        if let Type::RateOrFraction { of } = self.ty {
            // A rate is positive by its notation; the bounds are the fraction's.
            if matches!(v, Value::Rate(_)) {
                return None;
            }
            let mut fraction = *self;
            fraction.ty = Type::Number;
            return fraction
                .check(v)
                .map(|reason| format!("a fraction of {of} {reason}"));
        }
        let x = v.scalar()?;
        // False for NaN too: a NaN is never in bounds.
        let above_zero = x > 0.0;
        let positive = || {
            if self.ty == Type::Dist {
                "its mean must be positive".to_string()
            } else if self.ty == Type::Size {
                match self.default {
                    Absent::Is(d) => format!("must be a positive size, e.g. {d:?}"),
                    _ => "must be at least one byte".to_string(),
                }
            } else {
                "must be positive".to_string()
            }
        };
        match self.bounds {
            Bounds::Any => None,
            Bounds::Positive if !above_zero => Some(positive()),
            // Nor is an infinite number.
            Bounds::Positive => {
                (!x.is_finite()).then(|| format!("must be finite, got {}", v.render()))
            }
            Bounds::PositiveAtMost(hi) => {
                if !above_zero {
                    Some(positive())
                } else if x > hi {
                    Some(format!("must be at most {}", self.show(hi)))
                } else {
                    None
                }
            }
            Bounds::AtLeast(lo) if !(x >= lo && x.is_finite()) => Some(if lo == 0.0 {
                format!("must not be negative, got {}", v.render())
            } else {
                format!("must be at least {}, got {}", self.show(lo), v.render())
            }),
            Bounds::AtLeast(_) => None,
            Bounds::Between(lo, hi) => (!(x >= lo && x <= hi)).then(|| {
                format!(
                    "must be between {} and {}, got {}",
                    self.show(lo),
                    self.show(hi),
                    v.render()
                )
            }),
            Bounds::AboveUpTo(lo, hi) => (!(x > lo && x <= hi)).then(|| {
                format!(
                    "must be in ({}, {}], got {}",
                    self.show(lo),
                    self.show(hi),
                    v.render()
                )
            }),
        }
    }

    /// The bounds or allowed values as the reference tables show them.
    pub fn bounds_text(&self) -> String {
        if let Type::Choice(allowed) = self.ty {
            return allowed.join(", ");
        }
        if let Type::Table(of) = self.ty {
            return format!("see {of}");
        }
        let s = |x: f64| self.show(x);
        // A distribution's bounds are on its mean.
        let of = match self.ty {
            _ if self.bounds == Bounds::Any => "",
            Type::Dist => "mean ",
            Type::RateOrFraction { .. } => "fraction ",
            _ => "",
        };
        let text = match self.bounds {
            Bounds::Any => String::new(),
            Bounds::Positive => "> 0".into(),
            Bounds::PositiveAtMost(hi) => format!("(0, {}]", s(hi)),
            Bounds::AtLeast(lo) => format!(">= {}", s(lo)),
            Bounds::Between(lo, hi) => format!("[{}, {}]", s(lo), s(hi)),
            Bounds::AboveUpTo(lo, hi) => format!("({}, {}]", s(lo), s(hi)),
        };
        format!("{of}{text}")
    }

    /// The default as the reference tables show it.
    pub fn default_text(&self) -> String {
        match self.default {
            Absent::Required => "required".into(),
            Absent::Derived(how) => how.into(),
            Absent::Is(v) => v.into(),
        }
    }

    /// Parses `text` as a value of this parameter's type (the notation of scenarios);
    /// the reason if it does not parse. Bounds are not checked here.
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        match self.ty {
            Type::Limit | Type::PacketLimit => units::parse_limit(text).map(|l| match l {
                QueueLimit::Packets(n) => Value::Packets(n),
                QueueLimit::Bytes(b) => Value::Bytes(b),
            }),
            Type::Time => units::parse_time(text).map(Value::Time),
            Type::Size => units::parse_size(text).map(Value::Size),
            Type::Rate => units::parse_rate(text).map(Value::Rate),
            Type::Number => text
                .parse::<f64>()
                .map(Value::Number)
                .map_err(|_| format!("expected a number, got {text:?}")),
            Type::Integer => text
                .parse::<u64>()
                .map(Value::Integer)
                .map_err(|_| format!("expected an integer, got {text:?}")),
            Type::Bool => text
                .parse::<bool>()
                .map(Value::Bool)
                .map_err(|_| format!("expected true or false, got {text:?}")),
            Type::Dist => units::parse_dist(text).map(Value::Dist),
            Type::PerSecond => units::parse_per_second(text).map(Value::Number),
            Type::Choice(_) | Type::Text | Type::Structured(_) => Ok(Value::Text(text.to_string())),
            Type::Names => parse_names(text).map(Value::Names),
            Type::Table(_) => Err(format!(
                "{} is a {}: written in TOML, not as one string",
                self.key,
                self.ty.name()
            )),
            Type::RateOrFraction { of } => match text.trim().parse::<f64>() {
                Ok(f) => Ok(Value::Number(f)),
                Err(_) => units::parse_rate(text)
                    .map(Value::Rate)
                    .map_err(|e| format!("{e}; or give a fraction of {of}, e.g. 0.5")),
            },
            Type::CountOrSize { .. } => match text.trim().parse::<u64>() {
                Ok(n) => Ok(Value::Integer(n)),
                Err(_) => units::parse_size(text).map(Value::Size),
            },
        }
    }

    /// The default value, if it is a fixed one.
    pub fn default_value(&self) -> Option<Value> {
        match self.default {
            Absent::Is(text) => Some(
                self.parse(text)
                    .unwrap_or_else(|e| panic!("default of {}: {e}", self.key)),
            ),
            _ => None,
        }
    }
}

/// `a, b or c`.
pub fn or_list(items: &[String]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// A problem with one parameter: its key and the reason.
pub type Problem = (&'static str, String);

/// Read or given values of declared parameters, by key (in declaration order).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Values(pub Vec<(&'static str, Value)>);

impl Values {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Sets `key` to `v` (replacing a value already there).
    pub fn set(&mut self, key: &'static str, v: Value) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = v,
            None => self.0.push((key, v)),
        }
    }

    /// `self` with `key` set to `v`.
    pub fn with(mut self, key: &'static str, v: Value) -> Self {
        self.set(key, v);
        self
    }

    fn expect(&self, key: &str) -> &Value {
        self.get(key)
            .unwrap_or_else(|| panic!("parameter {key} is not set"))
    }

    /// The time `key` (it must be set and be a time).
    pub fn time(&self, key: &str) -> Time {
        match self.expect(key) {
            Value::Time(t) => *t,
            v => panic!("parameter {key} is not a time: {v:?}"),
        }
    }

    /// The number `key`.
    pub fn number(&self, key: &str) -> f64 {
        match self.expect(key) {
            Value::Number(x) => *x,
            v => panic!("parameter {key} is not a number: {v:?}"),
        }
    }

    /// The size, rate, integer or limit count `key`.
    pub fn count(&self, key: &str) -> u64 {
        match self.expect(key) {
            Value::Size(x)
            | Value::Rate(x)
            | Value::Integer(x)
            | Value::Packets(x)
            | Value::Bytes(x) => *x,
            v => panic!("parameter {key} is not a count: {v:?}"),
        }
    }

    /// The boolean `key`.
    pub fn bool(&self, key: &str) -> bool {
        match self.expect(key) {
            Value::Bool(b) => *b,
            v => panic!("parameter {key} is not a boolean: {v:?}"),
        }
    }

    /// The random duration `key`.
    pub fn dist(&self, key: &str) -> units::Dist {
        match self.expect(key) {
            Value::Dist(d) => *d,
            v => panic!("parameter {key} is not a distribution: {v:?}"),
        }
    }

    /// The string `key`.
    pub fn text(&self, key: &str) -> &str {
        match self.expect(key) {
            Value::Text(s) => s,
            v => panic!("parameter {key} is not a string: {v:?}"),
        }
    }

    /// The list of strings `key`.
    pub fn names(&self, key: &str) -> &[String] {
        match self.expect(key) {
            Value::Names(items) => items,
            v => panic!("parameter {key} is not a list of strings: {v:?}"),
        }
    }

    /// The queue limit `key`.
    pub fn limit(&self, key: &str) -> crate::queue::Limit {
        match self.expect(key) {
            Value::Packets(n) => crate::queue::Limit::Packets(*n as usize),
            Value::Bytes(b) => crate::queue::Limit::Bytes(*b),
            v => panic!("parameter {key} is not a limit: {v:?}"),
        }
    }
}

/// A queue limit as a value.
pub fn limit_value(l: crate::queue::Limit) -> Value {
    match l {
        crate::queue::Limit::Packets(n) => Value::Packets(n as u64),
        crate::queue::Limit::Bytes(b) => Value::Bytes(b),
    }
}

/// The fixed defaults of `params`.
pub fn defaults(params: &[Param]) -> Values {
    Values(
        params
            .iter()
            .filter_map(|p| p.default_value().map(|v| (p.key, v)))
            .collect(),
    )
}

/// Every value of `values` against its declared bounds, then `rules` (the relations
/// between parameters) if the values are in bounds: the problems found, in declaration
/// order.
pub fn problems(
    params: &[Param],
    values: &Values,
    rules: fn(&Values) -> Vec<Problem>,
) -> Vec<Problem> {
    let mut out = Vec::new();
    for p in params {
        if let Some(reason) = values.get(p.key).and_then(|v| p.check(v)) {
            out.push((p.key, reason));
        }
    }
    if out.is_empty() {
        out = rules(values);
    }
    out
}

/// [`problems`] as the `validate()` of a model's parameters: `Err("key: reason")` for the
/// first problem.
pub fn validate(
    params: &[Param],
    values: &Values,
    rules: fn(&Values) -> Vec<Problem>,
) -> Result<(), String> {
    match problems(params, values, rules).into_iter().next() {
        None => Ok(()),
        Some((key, reason)) => Err(format!("{key}: {reason}")),
    }
}

/// No relations between parameters.
pub fn no_rules(_: &Values) -> Vec<Problem> {
    Vec::new()
}

/// One component kind as JSON: `{kind: "GROUP.NAME", group, name, aliases, title, doc,
/// written, params: [{key, type, unit, default, required, bounds, allowed, doc}]}`.
pub fn describe_kind(
    group: &str,
    name: &str,
    aliases: &[&str],
    title: &str,
    doc: &str,
    params: &[Param],
) -> serde_json::Value {
    let written = format!("kind = {name:?}");
    describe_written(group, name, aliases, title, doc, params, &written)
}

/// [`describe_kind`] for a table selected otherwise than by its `kind` key: `written` is
/// what a scenario writes to select it (`model = "cbr"`, `[abr]`), given as the JSON's
/// `written`.
pub fn describe_written(
    group: &str,
    name: &str,
    aliases: &[&str],
    title: &str,
    doc: &str,
    params: &[Param],
    written: &str,
) -> serde_json::Value {
    use serde_json::json;
    let params: Vec<serde_json::Value> = params
        .iter()
        .map(|p| {
            let allowed: Vec<&str> = match p.ty {
                Type::Choice(a) => a.to_vec(),
                _ => Vec::new(),
            };
            json!({
                "key": p.key,
                "type": p.ty.name(),
                "unit": p.unit,
                "default": p.default_text(),
                "required": p.default == Absent::Required,
                "bounds": p.bounds_text(),
                "allowed": allowed,
                "doc": p.doc,
            })
        })
        .collect();
    json!({
        "kind": format!("{group}.{name}"),
        "group": group,
        "name": name,
        "aliases": aliases,
        "title": title,
        "doc": doc,
        "written": written,
        "params": params,
    })
}

/// Every registered component kind with its declared parameters, as a JSON list (what
/// `qossim describe` prints and the documentation's reference tables are made from):
/// the core sections of the scenario language ([`crate::scenario::sections::CORE`]), the
/// core topology kinds ([`crate::scenario::topology_kinds::KINDS`]) and the families'
/// declared ones ([`crate::scenario::Family::topology_declared`]), the queue
/// disciplines ([`crate::queue::DISCIPLINES`]), then the meters and markers
/// ([`crate::meter::METERS`]), the traffic models and call arrivals
/// ([`crate::traffic::MODELS`]), then the families' declared sections
/// ([`crate::scenario::Family::declared`]).
pub fn catalogue() -> serde_json::Value {
    let mut all = crate::scenario::sections::describe();
    all.extend(crate::scenario::topology_kinds::describe());
    for f in crate::mechanisms::registry().families() {
        all.extend(f.topology_declared().iter().map(|s| {
            describe_written("topology", s.name, &[], s.title, s.doc, s.params, s.written)
        }));
    }
    all.extend(crate::queue::describe());
    all.extend(
        crate::meter::METERS
            .iter()
            .map(|k| describe_kind("meter", k.name, &[], k.title, k.doc, k.params)),
    );
    all.extend(crate::traffic::kind::describe());
    for f in crate::mechanisms::registry().families() {
        all.extend(
            f.declared().iter().map(|s| {
                describe_written("family", s.name, &[], s.title, s.doc, s.params, s.written)
            }),
        );
    }
    serde_json::Value::Array(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_give_the_reasons_of_the_language() {
        let t = Param::new("target", Type::Time, Absent::Is("5ms"), "")
            .bounds(Bounds::PositiveAtMost(1000.0));
        assert_eq!(t.check(&Value::Time(0)).unwrap(), "must be positive");
        assert_eq!(
            t.check(&Value::Time(2000 * crate::time::PS_PER_S)).unwrap(),
            "must be at most 1000s"
        );
        assert_eq!(t.check(&Value::Time(1)), None);
        let w = Param::new("w_q", Type::Number, Absent::Is("0.002"), "")
            .bounds(Bounds::AboveUpTo(0.0, 1.0));
        assert_eq!(
            w.check(&Value::Number(0.0)).unwrap(),
            "must be in (0, 1], got 0"
        );
        assert_eq!(w.check(&Value::Number(1.0)), None);
        let m = Param::new(
            "mode",
            Type::Choice(&["coupled", "decoupled"]),
            Absent::Is("coupled"),
            "",
        );
        assert_eq!(
            m.check(&Value::Text("copled".into())).unwrap(),
            "unknown mode \"copled\" (did you mean \"coupled\"?); use \"coupled\" or \"decoupled\""
        );
        let s = Param::new("mtu", Type::Size, Absent::Is("1500B"), "").bounds(Bounds::Positive);
        assert_eq!(
            s.check(&Value::Size(0)).unwrap(),
            "must be a positive size, e.g. \"1500B\""
        );
        let n =
            Param::new("min_th", Type::Number, Absent::Required, "").bounds(Bounds::AtLeast(0.0));
        assert_eq!(
            n.check(&Value::Number(-1.0)).unwrap(),
            "must not be negative, got -1"
        );
        assert!(n.check(&Value::Number(f64::INFINITY)).is_some());
    }

    #[test]
    fn a_rate_or_a_fraction_reads_both_and_bounds_the_fraction() {
        let ra = Param::new(
            "ra",
            Type::RateOrFraction {
                of: "the link rate",
            },
            Absent::Is("1"),
            "",
        )
        .bounds(Bounds::AboveUpTo(0.0, 1.0));
        assert_eq!(ra.parse("0.5"), Ok(Value::Number(0.5)));
        assert_eq!(ra.parse("8Mbps"), Ok(Value::Rate(8_000_000)));
        assert!(ra.parse("8").is_ok());
        assert!(ra
            .parse("fast")
            .unwrap_err()
            .ends_with("or give a fraction of the link rate, e.g. 0.5"));
        assert_eq!(
            ra.check(&Value::Number(1.5)).unwrap(),
            "a fraction of the link rate must be in (0, 1], got 1.5"
        );
        // The bounds are the fraction's: any rate is a rate.
        assert_eq!(ra.check(&Value::Rate(10_000_000_000)), None);
        assert_eq!(ra.bounds_text(), "fraction (0, 1]");
        assert_eq!(
            (ra.ty.toml("0.5"), ra.ty.toml("8Mbps")),
            ("0.5".into(), "\"8Mbps\"".into())
        );
        let depth = Param::new(
            "depth",
            Type::CountOrSize { count: "packets" },
            Absent::Is("256"),
            "",
        )
        .bounds(Bounds::Positive);
        assert_eq!(depth.default_value(), Some(Value::Integer(256)));
        assert_eq!(depth.parse("40KB"), Ok(Value::Size(40_000)));
        assert_eq!(depth.check(&Value::Size(0)).unwrap(), "must be positive");
        assert_eq!(depth.check(&Value::Integer(0)).unwrap(), "must be positive");
        let share = Param::new("share", Type::Number, Absent::Is("1"), "").bounds(Bounds::Positive);
        assert_eq!(
            share.check(&Value::Number(f64::INFINITY)).unwrap(),
            "must be finite, got inf"
        );
    }

    #[test]
    fn lists_of_strings_parse_and_render_in_the_scenario_notation() {
        let p = Param::new("watch", Type::Names, Absent::Is("[]"), "");
        assert_eq!(p.default_value(), Some(Value::Names(Vec::new())));
        let v = p.parse(r#"["a", "b \"c\""]"#).unwrap();
        assert_eq!(
            v,
            Value::Names(vec!["a".to_string(), "b \"c\"".to_string()])
        );
        assert_eq!(p.parse(&v.render()).unwrap(), v);
        assert_eq!(v.render(), r#"["a", "b \"c\""]"#);
        assert_eq!(Value::Names(Vec::new()).render(), "[]");
        assert_eq!(
            p.parse("[1]").unwrap_err(),
            "expected a string, found integer"
        );
        assert!(p.parse("\"a\"").unwrap_err().contains("found string"));
        assert!(p.parse("[").is_err());
        assert_eq!(p.check(&v), None);
        assert_eq!(Type::Names.name(), "list of strings");
    }

    #[test]
    fn times_render_in_a_whole_unit() {
        use crate::time::{PS_PER_MS, PS_PER_S};
        assert_eq!(render_time(15 * PS_PER_MS), "15ms");
        assert_eq!(render_time(2 * PS_PER_S), "2s");
        assert_eq!(render_time(3_000_000), "3us");
        assert_eq!(render_time(0), "0s");
    }
}
