"""The ABR point-to-multipoint study: its configurations as data and files, ERICA's
max-min fair rates on the configurations where they are known in closed form
(water-filling over the trees), and a tiny reproduce of every experiment through the
real engine (tables, JSON records, figures, the report).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from qossim import api, studies
from qossim.studies import abr_multipoint as abr
from reproducing import assert_files_current, json_records, reproduce

ROOT = Path(__file__).resolve().parent.parent
STUDY_DIR = ROOT / "studies" / "abr-multipoint"

needs_engine = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="needs the real engine"
)


def test_registered_with_its_experiments():
    assert "abr-multipoint" in studies.study_names()
    # One experiment per configuration (8's variants belong to 8).
    assert abr.EXPERIMENTS[:3] == ["1", "2", "2b"]
    assert "16" in abr.EXPERIMENTS and "8u3" not in abr.EXPERIMENTS
    # Plus the ERICA+ experiment (configurations 11-14 under ERICA and ERICA+).
    assert abr.EXPERIMENTS[-1] == "erica_plus"
    assert len(abr.EXPERIMENTS) == 20


def test_erica_plus_points_pair_each_run_with_its_erica_twin():
    pts = abr.erica_plus_points(abr.QUICK)
    seen = {(p["config"], p["variant"], p["algorithm"]) for p, _ in pts}
    assert len(seen) == len(pts) == 4 * 2 * 2
    for p, sc in pts:
        assert sc["abr"]["algorithm"] == p["algorithm"]
        assert sc["abr"]["consolidation"] == p["variant"]
        # Three times the configuration's (quick) duration.
        want = abr.config(p["config"]).duration_ms * abr.QUICK.scale * abr.ERICA_PLUS_LENGTH
        assert sc["run"]["duration"] == f"{want:.6g}ms"


def test_every_configuration_is_there():
    ids = [c.id for c in abr.CONFIGS]
    for n in range(1, 17):
        assert str(n) in ids
    for extra in ("2b", "3b", "4b", "8u3", "8u1"):
        assert extra in ids
    # Configuration 8 under all four (ICR, RIF) settings.
    eights = [c for c in abr.CONFIGS if c.id == "8" or c.id.startswith("8-icr")]
    settings = {(c.params.get("icr", 150.0), c.params.get("rif", 1.0)) for c in eights}
    assert settings == set(abr.ICR_RIF)


def test_scenario_files_are_current():
    """The committed scenario files are the ones the study generates."""
    expected = abr.scenario_files()
    assert_files_current(expected, STUDY_DIR, "write_scenario_files")


def test_run_lengths_are_the_network_default_unless_a_reason_is_given():
    """30 ms in a LAN, 200 ms in a WAN; a longer run says why."""
    for c in abr.CONFIGS:
        default = {"lan": 30.0, "wan": 200.0}[c.network]
        assert (c.duration_ms != default) == bool(c.long_run), c.id
        assert c.duration_ms >= default, c.id
        want = f"{c.duration_ms:g}ms"
        assert abr.scenario(c)["run"]["duration"] == want, c.id
    assert abr.config("5").duration_ms == 400
    assert abr.config("15").duration_ms == 200


def test_link_lengths_follow_the_configurations():
    sc = abr.scenario(abr.config("15"))
    delays = {(lk["from"], lk["to"]): lk.get("delay") for lk in sc["topology"]["link"]}
    assert delays[("SW1", "SW2")] == "250us"  # 50 km
    assert delays[("SW2", "SW3")] == "2500us"  # 500 km
    assert delays[("SW3", "SW4")] == "25000us"  # 5000 km
    assert abr.scenario(abr.config("1"))["run"]["duration"] == "30ms"
    # The middle third of the run.
    vcs = {v["name"]: v for v in abr.scenario(abr.config("2b"))["abr"]["vc"]}
    assert vcs["S2"]["start"] == "66.6667ms" and vcs["S2"]["stop"] == "133.333ms"


@needs_engine
def test_every_configuration_validates():
    for c in abr.CONFIGS:
        assert api.validate(abr.scenario(c)) == [], c.id


def water_fill(paths: dict[str, set[str]], capacity: dict[str, float]) -> dict[str, float]:
    """Max-min fair rates of sessions crossing the given links."""
    rate: dict[str, float] = {}
    left = dict(capacity)
    while len(rate) < len(paths):
        best = None
        for link, cap in left.items():
            users = [s for s, p in paths.items() if s not in rate and link in p]
            if users and (best is None or cap / len(users) < best[1]):
                best = (link, cap / len(users))
        assert best is not None
        link, share = best
        for s, p in paths.items():
            if s not in rate and link in p:
                rate[s] = share
                for m in p:
                    left[m] -= share
    return rate


def tree_links(c: abr.Config) -> dict[str, set[str]]:
    """The switch output links each connection's tree crosses (a chain of switches)."""
    _, _, dst = abr.hosts(c)
    order = list(c.switches)
    out: dict[str, set[str]] = {}
    for v in c.vcs:
        links: set[str] = set()
        a = order.index(v.at)
        for host, at in zip(dst[v.name], v.to, strict=True):
            b = order.index(at)
            step = 1 if b >= a else -1
            for i in range(a, b, step):
                links.add(f"{order[i]}-{order[i + step]}")
            links.add(f"{at}-{host}")
        out[v.name] = links
    return out


@needs_engine
@pytest.mark.parametrize("config_id", ["1", "2", "3", "4", "16"])
def test_infinite_sources_reach_max_min_fair_rates(config_id):
    """ERICA's target capacity shared max-min fairly over the trees, within 5 %."""
    c = abr.config(config_id)
    result = api.run(abr.scenario(c), seed=1)
    paths = tree_links(c)
    target = {"lan": 0.95, "wan": 0.90}[c.network] * abr.LINE_MBPS
    capacity = {link: target for p in paths.values() for link in p}
    want = water_fill(paths, capacity)
    for name, rate in want.items():
        got = result.summary[f"abr.vc.{name}.acr_mean_mbps"]
        assert abs(got - rate) <= 0.05 * rate, (config_id, name, got, rate)


def _reproduce(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return reproduce(tmp_path, "abr-multipoint", "QOSSIM_ABR_PROFILE", *args)


@needs_engine
def test_tiny_reproduce_writes_every_table_and_figure(tmp_path):
    out = tmp_path / "abr"
    proc = _reproduce(tmp_path, "--format", "json", "--out", str(out))
    records = json_records(proc)
    assert {r["table"] for r in records} == {
        "fidelity",
        "summary",
        "noise",
        "blind",
        "variants",
        "icr_rif",
        "unicast",
    }
    cells = {(r["table"], r["row"], r["column"]): r["value"] for r in records}
    for cid in abr.TINY.configs or ():
        top = cells[("summary", cid, "max queue (cells)")]
        steady = cells[("summary", cid, "steady max queue (cells)")]
        # The second half lies inside the span after the first tenth.
        assert top is not None and steady is not None and steady <= top, (cid, steady, top)
        util = cells[("summary", cid, "bottleneck util %")]
        assert 0 < util <= 100.5, (cid, util)
        assert (out / "figures" / f"config_{cid}.png").stat().st_size > 5000
    # Every variant for every P2MP configuration of the profile.
    for var in abr.VARIANTS:
        assert cells[("variants", "4", f"{var} max queue")] is not None
    assert len([r for r in records if r["table"] == "icr_rif"]) > 0
    assert (out / "index.html").exists()


@needs_engine
def test_only_one_configuration(tmp_path):
    out = tmp_path / "abr8"
    proc = _reproduce(tmp_path, "--only", "8", "--format", "json", "--out", str(out))
    records = json_records(proc)
    assert {r["row"] for r in records if r["table"] == "summary"} == {"8"}
    # 8 with its (ICR, RIF) settings and its unicast comparisons.
    assert len({r["row"] for r in records if r["table"] == "icr_rif"}) == 4
    assert len({r["row"] for r in records if r["table"] == "unicast"}) == 3
    names = sorted(p.name for p in (out / "figures").iterdir())
    assert "config_8.png" in names and "config_8u1.png" in names
