//! The plug-in point of the scenario language: a mechanism family's reader, builder and
//! post-run analysis behind one small trait, and the registry a scenario is read with.
//!
//! The language's core reads `[run]`, `[topology]`, `[links]`, `[[traffic]]` and
//! `[[metric]]`. Everything else belongs to a [`Family`] (PCN, DiffServ, …): it may
//! provide topology kinds, reads its own top-level sections once the core is known, and
//! returns a validated [`Mechanism`] that builds itself into the world and, after the
//! run, adds its figures to the summary through a [`MechanismRun`]. The families of this
//! crate are listed in one place, `mechanisms::registry()`; the language never names
//! them, so the scenario layer sits below the mechanisms that extend it.

use super::walk::{Cx, Tbl};
use super::{RunSpec, Scenario, Topology, TrafficSpec};
use crate::meter::{FlowProfiler, Policer};
use crate::net::{FlowId, HookHandle};
use crate::traffic::FlowGenerator;
use crate::transport::TcpRenoSender;
use crate::world::{AgentHandle, World};
use serde_json::{Map, Value};
use std::any::Any;
use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;

/// What a family sees of the scenario when it reads its sections: the core, validated.
pub struct Core<'a> {
    /// Run settings (absent if `[run]` had a problem).
    pub run: Option<&'a RunSpec>,
    /// Nodes and links.
    pub topology: &'a Topology,
    /// Traffic entries.
    pub traffic: &'a [TrafficSpec],
    /// Directory that relative file names (traces) are resolved against.
    pub base_dir: &'a Path,
}

/// A traffic-management mechanism family's part of the scenario language.
pub trait Family: Sync {
    /// The family's name (`pcn`, `diffserv`, …).
    fn name(&self) -> &'static str;
    /// The top-level tables it reads (`[pcn]`); the language reports any other unknown.
    fn sections(&self) -> &'static [&'static str] {
        &[]
    }
    /// Its sections with their declared keys ([`crate::decl::Section`]), for `qossim
    /// describe` and the documentation (`family.NAME`); none by default.
    fn declared(&self) -> &'static [&'static crate::decl::Section] {
        &[]
    }
    /// The `[topology] kind` values it provides.
    fn topology_kinds(&self) -> &'static [&'static str] {
        &[]
    }
    /// Those of its topology kinds declared with their keys ([`crate::decl::Section`],
    /// named after the kind), for `qossim describe` and the documentation
    /// (`topology.NAME`); none by default.
    fn topology_declared(&self) -> &'static [&'static crate::decl::Section] {
        &[]
    }
    /// The mark bits it owns ([`crate::packet::Packet::marks`]); no two families, nor a
    /// family and the core, may claim the same bit.
    fn mark_bits(&self) -> u16 {
        0
    }
    /// Named marks a scenario may select (`[[metric]] marked = "NAME"`): name and mask.
    fn marks(&self) -> &'static [(&'static str, u16)] {
        &[]
    }
    /// Reads one of its topologies (`t` is `[topology]`, whose `kind` is one of
    /// [`Family::topology_kinds`]); problems go to `cx`.
    fn read_topology(&self, _cx: &Cx, _t: &Tbl, _root: &Tbl) -> Option<Topology> {
        None
    }
    /// Reads its sections. `Some(None)`: the scenario does not use this family;
    /// `None`: a problem was reported to `cx`.
    fn read(&self, cx: &Cx, root: &Tbl, core: &Core) -> Option<Option<Arc<dyn Mechanism>>>;
}

/// The usual [`Family::read`] of a family with one top-level table `section`: absent,
/// the scenario does not use the family; present, `read` turns it into the mechanism.
pub fn read_section<M: Mechanism>(
    cx: &Cx,
    root: &Tbl,
    section: &str,
    read: impl FnOnce(&Tbl) -> Option<M>,
) -> Option<Option<Arc<dyn Mechanism>>> {
    if !root.has(section) {
        return Some(None);
    }
    let t = root.table(cx, section)?;
    let m: Arc<dyn Mechanism> = Arc::new(read(&t)?);
    Some(Some(m))
}

/// The families a scenario is read with, in the order they build.
#[derive(Clone, Copy)]
pub struct Registry {
    families: &'static [&'static dyn Family],
}

impl Registry {
    /// A registry of `families` (they build in this order).
    pub const fn new(families: &'static [&'static dyn Family]) -> Self {
        Registry { families }
    }
    /// The language's core alone, no family.
    pub const fn core_only() -> Self {
        Registry { families: &[] }
    }
    /// The registered families.
    pub fn families(&self) -> &'static [&'static dyn Family] {
        self.families
    }
    /// The family providing topology `kind`, if any.
    pub fn topology_family(&self, kind: &str) -> Option<&'static dyn Family> {
        self.families
            .iter()
            .copied()
            .find(|f| f.topology_kinds().contains(&kind))
    }
    /// Every named mark of the families.
    pub fn marks(&self) -> Vec<(&'static str, u16)> {
        self.families
            .iter()
            .flat_map(|f| f.marks().iter().copied())
            .collect()
    }
    /// Checks that no two families (nor a family and the core) claim the same mark bit.
    pub fn check_mark_bits(&self) -> Result<(), String> {
        let mut taken = crate::packet::marks::CORE;
        let mut owner = vec![("core", crate::packet::marks::CORE)];
        for f in self.families {
            let b = f.mark_bits();
            if let Some((o, _)) = owner
                .iter()
                .find(|(_, m)| m & b != 0)
                .filter(|_| taken & b != 0)
            {
                return Err(format!(
                    "families {o} and {} claim the same mark bits",
                    f.name()
                ));
            }
            taken |= b;
            owner.push((f.name(), b));
        }
        Ok(())
    }
    /// Every top-level section name the families read.
    pub fn sections(&self) -> Vec<&'static str> {
        self.families
            .iter()
            .flat_map(|f| f.sections().iter().copied())
            .collect()
    }
}

impl Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.families.iter().map(|x| x.name()))
            .finish()
    }
}

/// A TCP connection the core built: where to find it after the run.
#[derive(Clone, Copy, Debug)]
pub struct Connection {
    /// Index of its traffic entry.
    pub traffic: usize,
    /// Its index within the entry.
    pub index: u64,
    /// The sending agent.
    pub sender: AgentHandle<TcpRenoSender>,
    /// Its flow.
    pub flow: FlowId,
}

/// What the core built that families may need (after the topology, traffic and metrics
/// are in the world).
#[derive(Clone, Debug, Default)]
pub struct BuiltCore {
    /// TCP connections, in scenario order.
    pub connections: Vec<Connection>,
    /// The links' policers (`meters` of kind policer), in link and meter order.
    pub policers: Vec<HookHandle<Policer>>,
    /// The flow profilers of traffic entries with a profile, in traffic order.
    pub profilers: Vec<HookHandle<FlowProfiler>>,
    /// The call generators of traffic entries with calls: (traffic index, generator).
    pub generators: Vec<(usize, AgentHandle<FlowGenerator>)>,
}

/// A family's validated part of one scenario.
pub trait Mechanism: Debug + Send + Sync + Any {
    /// The family it belongs to.
    fn family(&self) -> &'static str;
    /// Builds itself into `w`, after the core (topology, traffic, metrics) and before the
    /// warm-up is set. Returns what the post-run analysis needs.
    fn build(
        &self,
        sc: &Scenario,
        w: &mut World,
        core: &BuiltCore,
    ) -> Result<Box<dyn MechanismRun>, String>;
}

/// A mechanism built into a world: its post-run analysis.
pub trait MechanismRun {
    /// Adds the family's figures (and derived series) once the run has ended.
    fn finish(&mut self, sc: &Scenario, w: &mut World, summary: &mut Map<String, Value>);
}

/// A mechanism with no post-run analysis.
pub struct NoAnalysis;

impl MechanismRun for NoAnalysis {
    fn finish(&mut self, _sc: &Scenario, _w: &mut World, _summary: &mut Map<String, Value>) {}
}
