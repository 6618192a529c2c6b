//! Assembling a PCN domain in a world: the study's topologies, markers on bottleneck
//! links, an egress controller per egress node, an ingress controller per aggregate, and
//! samplers of the admitted PCN traffic.

use super::egress::{CleMode, PcnEgress};
use super::ingress::{IngressConfig, PcnIngress, Signalling};
use super::marking::{MarkingCurve, VirtualQueueMarker, VqThresholds};
use super::marks;
use super::termination::TerminationMarker;
use crate::metrics::{Probe, Series};
use crate::net::{AgentId, HookHandle, LinkId, Network, NodeId, NONE};
use crate::queue::{DropTail, Limit};
use crate::time::{Time, PS_PER_MS};
use crate::traffic::{FlowGenerator, PacketTemplate, Sink};
use crate::world::{AgentHandle, World};

/// Drop-tail limit of every link the topology builders create, packets. PCN traffic is
/// held near half the link rate, so this buffer only absorbs bursts; it is large enough
/// never to drop in the study's settings.
pub const DEFAULT_QUEUE_PACKETS: usize = 10_000;

/// How much faster than a bottleneck the topology builders make the other links, so they
/// never limit.
pub const FAST_LINK_FACTOR: u64 = 100;

/// The study's sampling interval of admitted PCN throughput: 50 ms.
pub const THROUGHPUT_SAMPLE_INTERVAL: Time = 50 * PS_PER_MS;

/// An ingress–egress aggregate of a built topology.
#[derive(Clone, Debug, PartialEq)]
pub struct TopologyIea {
    /// Name (`INGRESS-EGRESS` node names).
    pub name: String,
    /// Ingress node.
    pub ingress: NodeId,
    /// Egress node.
    pub egress: NodeId,
    /// The bottlenecks it crosses, as indices into [`PcnTopology::bottlenecks`], in path
    /// order.
    pub bottlenecks: Vec<usize>,
}

/// A topology built into a world: its bottleneck links and its aggregates.
#[derive(Clone, Debug, PartialEq)]
pub struct PcnTopology {
    /// The bottleneck links, in chain order.
    pub bottlenecks: Vec<LinkId>,
    /// The aggregates.
    pub ieas: Vec<TopologyIea>,
}

impl PcnTopology {
    /// Per aggregate, the bottlenecks it crosses (the `paths` argument of
    /// [`super::expected_termination`]).
    pub fn paths(&self) -> Vec<Vec<usize>> {
        self.ieas.iter().map(|a| a.bottlenecks.clone()).collect()
    }
}

fn queue() -> Box<DropTail> {
    Box::new(DropTail::new(Limit::Packets(DEFAULT_QUEUE_PACKETS)))
}

fn link(net: &mut Network, from: NodeId, to: NodeId, rate_bps: u64, delay: Time) -> LinkId {
    let name = format!(
        "{}-{}",
        net.nodes[from as usize].name, net.nodes[to as usize].name
    );
    net.add_link(&name, from, to, rate_bps, delay, queue())
}

fn iea(net: &Network, ingress: NodeId, egress: NodeId, bottlenecks: Vec<usize>) -> TopologyIea {
    TopologyIea {
        name: format!(
            "{}-{}",
            net.nodes[ingress as usize].name, net.nodes[egress as usize].name
        ),
        ingress,
        egress,
        bottlenecks,
    }
}

/// The single-link topology: ingress `A` → egress `B` over one bottleneck link `A-B`
/// of `rate_bps` and propagation `delay`; one aggregate `A-B`.
pub fn single_link(world: &mut World, rate_bps: u64, delay: Time) -> PcnTopology {
    let net = &mut world.net;
    let a = net.add_node("A");
    let b = net.add_node("B");
    let l = link(net, a, b, rate_bps, delay);
    PcnTopology {
        bottlenecks: vec![l],
        ieas: vec![iea(net, a, b, vec![0])],
    }
}

/// The RTT topology: ingresses `I1..IN` (one per entry of `access_delays`, which gives
/// each access link's propagation delay) linked to the interior node `D`, and the
/// bottleneck `D-F` to the egress `F` (`rate_bps`, propagation `bottleneck_delay`).
/// Access links run [`FAST_LINK_FACTOR`] times faster than the bottleneck. Aggregates
/// `Ik-F`. [`rtt_star_egresses`] with one egress.
pub fn rtt_star(
    world: &mut World,
    rate_bps: u64,
    bottleneck_delay: Time,
    access_delays: &[Time],
) -> PcnTopology {
    rtt_star_egresses(world, rate_bps, bottleneck_delay, access_delays, 1)
}

/// The RTT topology with `egresses` egress nodes. With one egress it is [`rtt_star`]'s
/// network (`F` is the egress, aggregates `Ik-F`). With `m` > 1, `F` is an interior
/// node and the egresses `E1..Em` hang off it by links [`FAST_LINK_FACTOR`] times faster
/// than the bottleneck with no propagation delay (so every round trip is the
/// single-egress one); every ingress has an aggregate to every egress, `Ik-Ej`, ordered
/// by ingress, then egress, and all of them cross the bottleneck `D-F`.
pub fn rtt_star_egresses(
    world: &mut World,
    rate_bps: u64,
    bottleneck_delay: Time,
    access_delays: &[Time],
    egresses: usize,
) -> PcnTopology {
    assert!(egresses >= 1, "the RTT topology needs at least one egress");
    let net = &mut world.net;
    let ingresses: Vec<NodeId> = (1..=access_delays.len())
        .map(|k| net.add_node(&format!("I{k}")))
        .collect();
    let d = net.add_node("D");
    let f = net.add_node("F");
    for (&i, &delay) in ingresses.iter().zip(access_delays) {
        link(net, i, d, rate_bps * FAST_LINK_FACTOR, delay);
    }
    let b = link(net, d, f, rate_bps, bottleneck_delay);
    let outs: Vec<NodeId> = if egresses == 1 {
        vec![f]
    } else {
        (1..=egresses)
            .map(|j| {
                let e = net.add_node(&format!("E{j}"));
                link(net, f, e, rate_bps * FAST_LINK_FACTOR, 0);
                e
            })
            .collect()
    };
    let ieas = ingresses
        .iter()
        .flat_map(|&i| outs.iter().map(move |&e| (i, e)))
        .map(|(i, e)| iea(net, i, e, vec![0]))
        .collect();
    PcnTopology {
        bottlenecks: vec![b],
        ieas,
    }
}

/// `n` equal access delays of `delay`.
pub fn equal_delays(n: usize, delay: Time) -> Vec<Time> {
    vec![delay; n]
}

/// `n` access delays spread evenly from `lo` to `hi` (both included; `lo` alone when
/// `n` = 1).
pub fn spread_delays(n: usize, lo: Time, hi: Time) -> Vec<Time> {
    if n <= 1 {
        return vec![lo; n];
    }
    (0..n)
        .map(|k| lo + ((hi - lo) as u128 * k as u128 / (n as u128 - 1)) as Time)
        .collect()
}

/// The parking-lot topology PLT-`n`: routers `R0..Rn` in a chain whose links `R(b-1)-Rb`
/// are the `n` bottlenecks (`rate_bps`); the long aggregate `IL-EL` enters at `IL`
/// (linked to `R0`) and leaves at `EL` (linked from `Rn`), crossing every bottleneck; short
/// aggregate `Ib-Eb` (b = 1..n) enters at `Ib` (linked to `R(b-1)`) and leaves at `Eb`
/// (linked from `Rb`), crossing bottleneck `b` only. All delays are 1 ms; links other than
/// the bottlenecks run [`FAST_LINK_FACTOR`] times faster. Aggregates: the long one first,
/// then the short ones in chain order (as [`super::parking_lot_paths`]).
pub fn parking_lot(world: &mut World, n: usize, rate_bps: u64) -> PcnTopology {
    assert!(n >= 1, "a parking lot needs at least one bottleneck");
    let net = &mut world.net;
    let ms = PS_PER_MS;
    let fast = rate_bps * FAST_LINK_FACTOR;
    let r: Vec<NodeId> = (0..=n).map(|k| net.add_node(&format!("R{k}"))).collect();
    let il = net.add_node("IL");
    let el = net.add_node("EL");
    let bottlenecks: Vec<LinkId> = (1..=n)
        .map(|b| link(net, r[b - 1], r[b], rate_bps, ms))
        .collect();
    link(net, il, r[0], fast, ms);
    link(net, r[n], el, fast, ms);
    let mut ieas = vec![iea(net, il, el, (0..n).collect())];
    for b in 1..=n {
        let i = net.add_node(&format!("I{b}"));
        let e = net.add_node(&format!("E{b}"));
        link(net, i, r[b - 1], fast, ms);
        link(net, r[b], e, fast, ms);
        ieas.push(iea(net, i, e, vec![b - 1]));
    }
    PcnTopology { bottlenecks, ieas }
}

/// Sets the configured-termination-rate of the termination marker `m` from `now` on.
pub fn set_termination_rate(
    net: &mut Network,
    m: HookHandle<TerminationMarker>,
    now: Time,
    rt_bps: u64,
) {
    net.hook_mut(m).set_rate(now, rt_bps);
}

/// The failure event: at `at`, the given termination markers get their new
/// configured-termination-rates `(marker, Rt)`.
pub fn schedule_termination_rates(
    world: &mut World,
    at: Time,
    rates: Vec<(HookHandle<TerminationMarker>, u64)>,
) {
    world.schedule_action(at, move |w: &mut World| {
        let now = w.sched.now();
        for &(m, rt) in &rates {
            set_termination_rate(&mut w.net, m, now, rt);
        }
    });
}

/// An aggregate to set up: its ingress controller's configuration and its route.
#[derive(Clone, Debug)]
pub struct IeaSpec {
    /// Name (of the ingress agent, its random streams and its series `pcn.<name>.*`).
    pub name: String,
    /// Ingress node.
    pub ingress: NodeId,
    /// Egress node.
    pub egress: NodeId,
    /// Explicit route, or shortest-path forwarding when `None`.
    pub route: Option<Vec<LinkId>>,
    /// The ingress controller's configuration.
    pub config: IngressConfig,
}

#[derive(Clone, Debug)]
struct AdmissionSpec {
    link: LinkId,
    ra_bps: u64,
    thresholds: VqThresholds,
    curve: MarkingCurve,
}

/// Builds a PCN domain into a world that already holds the nodes and links: markers on
/// named bottleneck links, a [`PcnEgress`] (and a [`Sink`] counting deliveries) per egress
/// node, a [`PcnIngress`] per aggregate with its signalling delays computed from the links,
/// and a sampler of PCN throughput on every marked link.
///
/// ```
/// use qossim::mechanisms::pcn::*;
/// use qossim::time::{secs, PS_PER_MS};
/// use qossim::traffic::named_model;
/// use qossim::World;
///
/// // A T3 single link, Ra = half of it, CBR calls at 2x overload.
/// let mut world = World::new(1);
/// let topo = single_link(&mut world, 45_000_000, PS_PER_MS);
/// let (link, iea) = (topo.bottlenecks[0], &topo.ieas[0]);
/// let ra = 22_500_000;
/// let cbr = named_model("CBR").unwrap();
/// let lambda = call_rate_for_overload(2.0, ra as f64, cbr.mean_bps(), 60.0);
/// let calls = IngressConfig::new(cbr, CallArrivals::Poisson.arrivals(lambda));
/// let handles = PcnDomain::new(CleMode::per_packet())
///     .admission_marking(link, ra, VqThresholds::default(), MarkingCurve::Ramp)
///     .iea(&iea.name, iea.ingress, iea.egress, calls)
///     .build(&mut world)
///     .unwrap();
/// world.run_until(secs(2.0));
/// let series = handles.throughput(&world, link).unwrap();
/// let accuracy = admission_accuracy(series, 1.0, ra as f64);
/// assert_eq!(accuracy.samples, 20);
/// ```
#[derive(Clone, Debug)]
pub struct PcnDomain {
    cle: CleMode,
    sar_period: Time,
    sample_interval: Time,
    admission: Vec<AdmissionSpec>,
    termination: Vec<(LinkId, u64, u64)>,
    ieas: Vec<IeaSpec>,
}

/// Where the built pieces are.
#[derive(Clone, Debug, Default)]
pub struct PcnHandles {
    /// Virtual-queue markers.
    pub vq_markers: Vec<HookHandle<VirtualQueueMarker>>,
    /// Termination markers.
    pub termination_markers: Vec<HookHandle<TerminationMarker>>,
    /// Egress controllers.
    pub egresses: Vec<EgressHandle>,
    /// Ingress controllers, in the order the aggregates were given.
    pub ingresses: Vec<IngressHandle>,
    /// PCN throughput samplers: (link, sampler id), writing `pcn.<link name>.throughput`.
    pub samplers: Vec<(LinkId, usize)>,
}

/// An egress node's agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EgressHandle {
    /// The egress node.
    pub node: NodeId,
    /// Its [`PcnEgress`] agent.
    pub agent: AgentHandle<PcnEgress>,
    /// The [`Sink`] agent receiving the aggregates' packets.
    pub sink: AgentId,
}

/// An aggregate's ingress controller.
#[derive(Clone, Debug, PartialEq)]
pub struct IngressHandle {
    /// Aggregate name.
    pub name: String,
    /// Ingress node.
    pub ingress: NodeId,
    /// Egress node.
    pub egress: NodeId,
    /// The aggregate's call generator agent (a [`FlowGenerator`] whose policy is its
    /// [`PcnIngress`]).
    pub agent: AgentHandle<FlowGenerator>,
    /// The flow group of its flows (named after the aggregate).
    pub group: u32,
    /// The links its packets cross.
    pub path: Vec<LinkId>,
    /// Its signalling channel.
    pub signalling: Signalling,
}

impl PcnHandles {
    /// The virtual-queue marker on `link`.
    pub fn vq_marker<'a>(
        &self,
        world: &'a mut World,
        link: LinkId,
    ) -> Option<&'a mut VirtualQueueMarker> {
        let h = self.vq_markers.iter().find(|h| h.link() == link)?;
        Some(world.net.hook_mut(*h))
    }

    /// The termination marker on `link`.
    pub fn termination_marker<'a>(
        &self,
        world: &'a mut World,
        link: LinkId,
    ) -> Option<&'a mut TerminationMarker> {
        let h = self.termination_marker_on(link)?;
        Some(world.net.hook_mut(h))
    }

    /// The handle of the termination marker on `link`.
    pub fn termination_marker_on(&self, link: LinkId) -> Option<HookHandle<TerminationMarker>> {
        self.termination_markers
            .iter()
            .copied()
            .find(|h| h.link() == link)
    }

    /// The ingress controller of aggregate `name`.
    pub fn ingress<'a>(&self, world: &'a mut World, name: &str) -> Option<&'a mut PcnIngress> {
        let h = self.ingresses.iter().find(|h| h.name == name)?;
        PcnIngress::of(world, h.agent)
    }

    /// The call generator of aggregate `name` (its calls, flows and blocking).
    pub fn generator<'a>(&self, world: &'a mut World, name: &str) -> Option<&'a mut FlowGenerator> {
        let h = self.ingresses.iter().find(|h| h.name == name)?;
        world.agents.get_mut::<FlowGenerator>(h.agent)
    }

    /// The egress controller of node `node`.
    pub fn egress<'a>(&self, world: &'a mut World, node: NodeId) -> Option<&'a mut PcnEgress> {
        let h = self.egresses.iter().find(|h| h.node == node)?;
        world.agents.get_mut::<PcnEgress>(h.agent)
    }

    /// The PCN throughput series of `link` (samples every 50 ms, bit/s).
    pub fn throughput<'a>(&self, world: &'a World, link: LinkId) -> Option<&'a Series> {
        let &(_, id) = self.samplers.iter().find(|(l, _)| *l == link)?;
        Some(world.sampler_series(id))
    }
}

impl PcnDomain {
    /// An empty domain whose egresses compute CLEs in `cle` mode.
    pub fn new(cle: CleMode) -> Self {
        PcnDomain {
            cle,
            sar_period: 100 * PS_PER_MS,
            sample_interval: THROUGHPUT_SAMPLE_INTERVAL,
            admission: Vec::new(),
            termination: Vec::new(),
            ieas: Vec::new(),
        }
    }

    /// The egresses' SAR measurement period (default 100 ms).
    pub fn sar_period(mut self, period: Time) -> Self {
        self.sar_period = period;
        self
    }

    /// The throughput sampling interval (default 50 ms).
    pub fn sample_interval(mut self, interval: Time) -> Self {
        self.sample_interval = interval;
        self
    }

    /// Admission marking on `link`: a [`VirtualQueueMarker`] at `ra_bps`.
    pub fn admission_marking(
        mut self,
        link: LinkId,
        ra_bps: u64,
        thresholds: VqThresholds,
        curve: MarkingCurve,
    ) -> Self {
        self.admission.push(AdmissionSpec {
            link,
            ra_bps,
            thresholds,
            curve,
        });
        self
    }

    /// Termination marking on `link`: a [`TerminationMarker`] at `rt_bps` with a bucket of
    /// `depth_bytes` (256 packets of the traffic's size in the study). Before a failure
    /// event, give a rate that does not bind (e.g. the link rate) and change it with
    /// [`schedule_termination_rates`].
    pub fn termination_marking(mut self, link: LinkId, rt_bps: u64, depth_bytes: u64) -> Self {
        self.termination.push((link, rt_bps, depth_bytes));
        self
    }

    /// An aggregate from `ingress` to `egress` following shortest-path forwarding.
    pub fn iea(self, name: &str, ingress: NodeId, egress: NodeId, config: IngressConfig) -> Self {
        self.iea_spec(IeaSpec {
            name: name.to_string(),
            ingress,
            egress,
            route: None,
            config,
        })
    }

    /// An aggregate described in full.
    pub fn iea_spec(mut self, spec: IeaSpec) -> Self {
        self.ieas.push(spec);
        self
    }

    /// Adds everything to `world`; fails if an aggregate has no path or its names clash.
    pub fn build(self, world: &mut World) -> Result<PcnHandles, String> {
        let mut h = PcnHandles::default();
        let nlinks = world.net.links.len() as LinkId;
        let check_link = |l: LinkId| {
            if l < nlinks {
                Ok(())
            } else {
                Err(format!("no link with id {l}"))
            }
        };
        let mut marked: Vec<LinkId> = Vec::new();
        for a in &self.admission {
            check_link(a.link)?;
            let name = world.net.links[a.link as usize].name.clone();
            let rng = world.rng(&format!("pcn.vq.{name}"));
            let m = VirtualQueueMarker::new(a.ra_bps, a.thresholds, a.curve, rng);
            h.vq_markers.push(world.net.add_hook(a.link, Box::new(m)));
            if !marked.contains(&a.link) {
                marked.push(a.link);
            }
        }
        for &(l, rt, depth) in &self.termination {
            check_link(l)?;
            let m = TerminationMarker::new(rt, depth);
            h.termination_markers
                .push(world.net.add_hook(l, Box::new(m)));
            if !marked.contains(&l) {
                marked.push(l);
            }
        }
        for &l in &marked {
            let name = format!("pcn.{}.throughput", world.net.links[l as usize].name);
            let slot = world.net.count_marked(l, "pcn", marks::PCN)?;
            let probe = Probe::LinkThroughput {
                link: l,
                class: None,
                marked: Some(slot),
            };
            let id = world.add_sampler(&name, probe, self.sample_interval);
            h.samplers.push((l, id));
        }
        for spec in &self.ieas {
            if h.egresses.iter().any(|e| e.node == spec.egress) {
                continue;
            }
            let node_name = world.net.nodes[spec.egress as usize].name.clone();
            let sink = world
                .add_agent(&format!("pcn.sink.{node_name}"), Box::new(Sink))
                .id();
            let eg = PcnEgress::new(spec.egress, self.cle).with_sar_period(self.sar_period);
            let agent = world.add_agent(&format!("pcn.egress.{node_name}"), Box::new(eg));
            world.tap(spec.egress, agent.id());
            h.egresses.push(EgressHandle {
                node: spec.egress,
                agent,
                sink,
            });
        }
        for spec in self.ieas {
            if h.ingresses.iter().any(|i| i.name == spec.name) {
                return Err(format!("two aggregates are called {}", spec.name));
            }
            if world.flows.group_id(&spec.name).is_some() {
                return Err(format!("a flow group is already called {}", spec.name));
            }
            let eh = *h
                .egresses
                .iter()
                .find(|e| e.node == spec.egress)
                .expect("egress created above");
            let (route_id, path) = match &spec.route {
                Some(r) => (world.net.add_route(r.clone())?, r.clone()),
                None => (NONE, world.net.path(spec.ingress, spec.egress)?),
            };
            if path.first().map(|&l| world.net.links[l as usize].from) != Some(spec.ingress)
                || path.last().map(|&l| world.net.links[l as usize].to) != Some(spec.egress)
            {
                return Err(format!(
                    "aggregate {}: route does not lead from its ingress to its egress",
                    spec.name
                ));
            }
            let sig = Signalling::between(
                &mut world.net,
                spec.ingress,
                spec.egress,
                Some(&path),
                eh.agent.id(),
                spec.config.request_bytes,
            )?;
            let group = world.flows.add_group(&spec.name);
            let mut tmpl = PacketTemplate::new(spec.ingress, spec.egress, eh.sink);
            tmpl.route = route_id;
            let gen =
                PcnIngress::generator(&spec.name, world.seed(), spec.config, tmpl, group, sig);
            let agent = world.add_agent(&spec.name, Box::new(gen));
            if let Some(e) = world.agents.get_mut::<PcnEgress>(eh.agent) {
                e.add_iea(spec.ingress, agent.id(), sig.reverse);
            }
            h.ingresses.push(IngressHandle {
                name: spec.name,
                ingress: spec.ingress,
                egress: spec.egress,
                agent,
                group,
                path,
                signalling: sig,
            });
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parking_lot_shape() {
        let mut w = World::new(1);
        let t = parking_lot(&mut w, 3, 10_000_000);
        assert_eq!(t.bottlenecks.len(), 3);
        assert_eq!(t.ieas.len(), 4);
        assert_eq!(t.paths(), super::super::parking_lot_paths(3));
        for (k, a) in t.ieas.iter().enumerate() {
            let p = w.net.path(a.ingress, a.egress).unwrap();
            let b: Vec<LinkId> = p
                .iter()
                .copied()
                .filter(|l| t.bottlenecks.contains(l))
                .collect();
            let want: Vec<LinkId> = a.bottlenecks.iter().map(|&i| t.bottlenecks[i]).collect();
            assert_eq!(b, want, "aggregate {k}");
            for &l in &p {
                assert_eq!(w.net.links[l as usize].delay, PS_PER_MS);
            }
        }
        assert_eq!(t.ieas[0].name, "IL-EL");
        assert_eq!(t.ieas[2].name, "I2-E2");
    }

    #[test]
    fn spread_delays_cover_the_range() {
        let d = spread_delays(4, 10, 40);
        assert_eq!(d, vec![10, 20, 30, 40]);
        assert_eq!(spread_delays(1, 10, 40), vec![10]);
        assert_eq!(equal_delays(2, 5), vec![5, 5]);
    }
}
