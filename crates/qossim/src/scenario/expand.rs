//! `count` in a `[[traffic]]` entry: one entry stands for several similar ones.
//!
//! An entry with `count = N` becomes N entries in its place; in each copy `k`
//! (0..N) every `{i}` in a string value (names, nodes, routes, nested tables) reads `k`:
//!
//! ```toml
//! [[traffic]]
//! name = "ftp{i}"      # ftp0, ftp1, ftp2
//! count = 3
//! from = "s{i}"
//! to = "d{i}"
//! model = "tcp"
//! ```
//!
//! The copies are ordinary entries afterwards: named in `--set` and grids
//! (`traffic.ftp1.flows`), measured as `group.ftp1.*`.

use toml_edit::{DocumentMut, Item, Value};

/// The largest `count` accepted.
pub const MAX_COUNT: i64 = 10_000;

/// Replaces every `[[traffic]]` entry with a `count` by its copies. Returns whether
/// anything was expanded; an invalid `count` is an error naming the entry.
pub fn expand_counts(doc: &mut DocumentMut) -> Result<bool, String> {
    let Some(aot) = doc
        .get_mut("traffic")
        .and_then(Item::as_array_of_tables_mut)
    else {
        return Ok(false);
    };
    if !aot.iter().any(|t| t.contains_key("count")) {
        return Ok(false);
    }
    let mut out = toml_edit::ArrayOfTables::new();
    for (e, t) in aot.iter().enumerate() {
        let Some(count) = t.get("count") else {
            out.push(t.clone());
            continue;
        };
        let n = match count.as_integer() {
            Some(n) if (1..=MAX_COUNT).contains(&n) => n,
            _ => {
                return Err(format!(
                    "traffic.{e}.count: a whole number from 1 to {MAX_COUNT}, got {}",
                    count.to_string().trim()
                ))
            }
        };
        let name = t.get("name").and_then(Item::as_str).unwrap_or("");
        if n > 1 && !name.contains("{i}") {
            return Err(format!(
                "traffic.{e}.count: the name {name:?} must hold {{i}} so that the {n} copies \
                 have names of their own"
            ));
        }
        for k in 0..n {
            let mut copy = t.clone();
            copy.remove("count");
            let idx = k.to_string();
            for (_, item) in copy.iter_mut() {
                substitute(item, &idx);
            }
            out.push(copy);
        }
    }
    *aot = out;
    Ok(true)
}

fn substitute(item: &mut Item, idx: &str) {
    match item {
        Item::Value(v) => substitute_value(v, idx),
        Item::Table(t) => {
            for (_, i) in t.iter_mut() {
                substitute(i, idx);
            }
        }
        Item::ArrayOfTables(a) => {
            for t in a.iter_mut() {
                for (_, i) in t.iter_mut() {
                    substitute(i, idx);
                }
            }
        }
        Item::None => {}
    }
}

fn substitute_value(v: &mut Value, idx: &str) {
    match v {
        Value::String(s) if s.value().contains("{i}") => {
            let decor = s.decor().clone();
            let mut new = toml_edit::Formatted::new(s.value().replace("{i}", idx));
            *new.decor_mut() = decor;
            *s = new;
        }
        Value::Array(a) => a.iter_mut().for_each(|x| substitute_value(x, idx)),
        Value::InlineTable(t) => t.iter_mut().for_each(|(_, x)| substitute_value(x, idx)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_replace_the_entry_in_place() {
        let mut doc: DocumentMut = r#"
[[traffic]]
name = "a"
[[traffic]]
name = "t{i}"
count = 2
route = ["s{i}", "r"]
profile = { kind = "tsw", target = "{i}Mbps" }
[[traffic]]
name = "z"
"#
        .parse()
        .unwrap();
        assert!(expand_counts(&mut doc).unwrap());
        let t = doc["traffic"].as_array_of_tables().unwrap();
        let names: Vec<&str> = t.iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["a", "t0", "t1", "z"]);
        assert_eq!(
            t.get(2).unwrap()["route"]
                .as_array()
                .unwrap()
                .get(0)
                .unwrap()
                .as_str(),
            Some("s1")
        );
        assert!(!t.get(1).unwrap().contains_key("count"));
        assert!(doc.to_string().contains("target = \"1Mbps\""));
    }

    #[test]
    fn a_count_needs_indexed_names_and_a_sane_number() {
        for (body, why) in [
            ("name = \"t\"\ncount = 2", "must hold {i}"),
            ("name = \"t{i}\"\ncount = 0", "from 1 to"),
            ("name = \"t{i}\"\ncount = \"3\"", "from 1 to"),
        ] {
            let mut doc: DocumentMut = format!("[[traffic]]\n{body}\n").parse().unwrap();
            let e = expand_counts(&mut doc).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }
}
