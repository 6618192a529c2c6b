"""The PCN study through the real engine: a tiny reproduce of one admission and one
termination experiment (tables in the study's layout, runs and intervals,
figures, report), the campaign files under ``studies/pcn/``, and the validity of every
scenario the study runs.

The tiny profile (``QOSSIM_PCN_PROFILE=tiny``) runs one seed of a few very short runs,
so the numbers are not the study's; the layout and the plumbing are.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from qossim import _engine, _toml
from qossim.campaign import Campaign
from qossim.studies import pcn
from reproducing import json_records, reproduce

ROOT = Path(__file__).resolve().parent.parent
CAMPAIGNS = ROOT / "studies" / "pcn"

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="needs the real engine"
)


def _reproduce(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return reproduce(tmp_path, "pcn", "QOSSIM_PCN_PROFILE", *args)


def _cells(records: list[dict], table: str) -> dict[tuple[str, str], dict]:
    return {(r["row"], r["column"]): r for r in records if r["table"] == table}


def test_tiny_admission_and_termination_experiments(tmp_path):
    out = tmp_path / "pcn"
    proc = _reproduce(tmp_path, "--only", "A1", "T1", "--format", "json", "--out", str(out))
    records = json_records(proc)
    assert {r["table"] for r in records} == {"A1", "T1", "fidelity"}

    # A1: one row per (link, traffic, arrivals) of the plan, the study's columns.
    a1 = _cells(records, "A1")
    plan = pcn.TINY
    rows = 4 * len(plan.a1_links) + 2
    assert {row for row, _ in a1} == {str(i) for i in range(1, rows + 1)}
    columns = {col for _, col in a1}
    assert {"link", "traffic", "arrivals", "worst-case over-admission (%)", "SD/Ra"} <= columns
    assert a1[("1", "link")]["value"] == "T3"
    assert a1[("1", "arrivals")]["value"] == "Poisson"
    assert a1[(str(rows), "traffic")]["value"] == "SVD"
    for i in range(1, rows + 1):
        cell = a1[(str(i), "worst-case over-admission (%)")]
        # One seed: one run behind each cell, no interval; Ra = ½ link is held
        # within a few tens of percent even by these 10-s measurements.
        assert cell["runs"] == len(plan.seeds) == 1
        assert cell["ci_low"] is None and cell["ci_high"] is None
        assert -50 < cell["value"] < 50, cell
        assert 0 < a1[(str(i), "SD/Ra")]["value"] < 1

    # T1: per ingress and for the bottleneck: load, RTT, actual, over-termination.
    t1 = _cells(records, "T1")
    assert {row for row, _ in t1} == {"I1-F", "I2-F", "bottleneck"}
    for row in ("I1-F", "I2-F"):
        for col in ("load (flows)", "access delay (ms)", "RTT (ms)", "actual", "optimal"):
            assert (row, col) in t1, (row, col)
        assert t1[(row, "load (flows)")]["runs"] == 1
        assert t1[(row, "over-termination (pts)")]["runs"] == 1
        assert t1[(row, "over-termination (% of optimal)")]["runs"] == 1
    # The 2:1 split, and the RTTs of the 1-ms and 50-ms access links (+1-ms bottleneck).
    loads = [t1[(r, "load (flows)")]["value"] for r in ("I1-F", "I2-F")]
    assert 1.3 < loads[0] / loads[1] < 3.0, loads
    assert t1[("I1-F", "RTT (ms)")]["value"] == pytest.approx(4.0, abs=0.01)
    assert t1[("I2-F", "RTT (ms)")]["value"] == pytest.approx(102.0, abs=0.01)
    # Load ≈ 0.72 of OC3 (1757 CBR flows expected), Rt = ½ link: about a third is
    # terminated, never less than the optimum minus one flow per ingress.
    bottleneck = t1[("bottleneck", "load (flows)")]["value"]
    assert 1500 < bottleneck < 2000
    optimal = t1[("bottleneck", "optimal")]["value"]
    assert 0.2 < optimal < 0.45
    assert t1[("bottleneck", "actual")]["value"] >= optimal - 2 / bottleneck
    # Over-termination in points of the load at failure is (actual − optimal) × 100, and
    # relative to the optimal (actual − optimal) / optimal × 100, from the table's own
    # columns (one run: the cells are the run's values).
    for row in ("I1-F", "I2-F", "bottleneck"):
        actual = t1[(row, "actual")]["value"]
        opt = t1[(row, "optimal")]["value"]
        assert t1[(row, "over-termination (pts)")]["value"] == pytest.approx(
            (actual - opt) * 100, rel=1e-9, abs=1e-9
        )
        assert t1[(row, "over-termination (% of optimal)")]["value"] == pytest.approx(
            (actual - opt) / opt * 100, rel=1e-9, abs=1e-9
        )

    # Figures and the report.
    for name in ("a1_overload.png", "t1_load.png"):
        assert (out / "figures" / name).stat().st_size > 5000, name
    html = (out / "index.html").read_text(encoding="utf-8")
    # Figures are embedded (data URIs), so look for the T1 figure by its caption.
    assert "T1 RTT difference" in html
    assert "T1: per-ingress load around t_fail" in html and "data:image/png;base64," in html

    # Text format: the runs column, and the notes name the profile.
    proc = _reproduce(tmp_path, "--only", "T1", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("ingress"))
    assert header.split()[-1] == "runs"
    assert any("Profile 'tiny'" in line for line in lines)


def test_campaign_files_are_the_study_definitions():
    generated = {}
    for group in pcn.all_groups(pcn.FULL):
        generated[f"{group.name}.toml"] = pcn.campaign_text(group, pcn.FULL)
    committed = {p.name: p.read_text(encoding="utf-8") for p in CAMPAIGNS.glob("*.toml")}
    assert committed == generated, "run: python -m qossim.studies.pcn write-campaigns studies/pcn"
    for base in pcn.BASES:
        text = (CAMPAIGNS / "scenarios" / f"{base}.toml").read_text(encoding="utf-8")
        body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
        assert _toml.loads(body) == pcn.base_scenario(base)
    # Each campaign loads, and its first and last grid points are valid scenarios.
    for path in sorted(CAMPAIGNS.glob("*.toml")):
        campaign = Campaign.load(path)
        assert campaign.seeds == list(pcn.FULL.seeds)
        points = campaign.points()
        for point in (points[0], points[-1]):
            overrides = campaign.overrides_for(point)
            problems = _engine.validate(campaign.scenario_text, str(path), overrides)
            assert problems == [], (path.name, problems)


@pytest.mark.parametrize("plan", [pcn.FULL, pcn.QUICK, pcn.TINY], ids=lambda p: p.name)
def test_every_point_of_the_study_is_a_valid_scenario(plan):
    texts = set()
    for group in pcn.all_groups(plan):
        for params, scenario in group.points():
            assert set(params) == set(pcn.PARAMS)
            texts.add(_toml.dumps(scenario))
    for text in texts:
        assert _engine.validate(text, "<dict>", []) == [], text
    # A8 reads A6's parking-lot runs: the same scenarios.
    a6 = {_toml.dumps(s) for g in pcn.groups("A6", plan) for _, s in g.points()}
    a8 = {_toml.dumps(s) for g in pcn.groups("A8", plan) for _, s in g.points()}
    assert a8 and a8 <= a6


def test_termination_load_at_failure_is_the_studys():
    # Shorter waits with a higher call rate keep the expected load at failure.
    for t_fail in (10.0, 25.0, 200.0):
        offered = pcn._term(pcn.FULL, t_fail)["pcn.traffic.offered"]
        at_failure = offered * (1 - pcn.math.exp(-t_fail / pcn.HOLDING_S))
        assert at_failure == pytest.approx(0.75 * (1 - pcn.math.exp(-200 / 60)), rel=1e-5)
