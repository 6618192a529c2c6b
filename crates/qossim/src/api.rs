//! The scenario language with every mechanism family of this crate registered: what a
//! program (and the Python bindings) call to read, build and run a scenario.
//!
//! The language itself ([`crate::scenario`]) knows no family; [`crate::mechanisms`]
//! extends it; this module sits above both.

use crate::mechanisms::registry;
use crate::scenario::{self, Diagnostic, RunOutput, Scenario};
use crate::world::World;
use std::path::Path;

/// Parses and validates scenario text (see [`scenario::parse`]).
pub fn parse(
    text: &str,
    file: &str,
    base_dir: &Path,
    overrides: &[(String, String)],
) -> Result<Scenario, Vec<Diagnostic>> {
    scenario::parse(&registry(), text, file, base_dir, overrides)
}

/// Reads and validates a scenario file (see [`scenario::load`]).
pub fn load(path: &Path, overrides: &[(String, String)]) -> Result<Scenario, Vec<Diagnostic>> {
    scenario::load(&registry(), path, overrides)
}

/// Builds the world of a validated scenario for a run with `seed`.
pub fn build(sc: &Scenario, seed: u64) -> Result<World, String> {
    scenario::build(sc, seed)
}

/// Builds and runs a validated scenario (see [`scenario::run`]).
pub fn run(
    sc: &Scenario,
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, String> {
    scenario::run(sc, seed, progress)
}
