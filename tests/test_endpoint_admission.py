"""The endpoint admission study: its scenarios, the E12 Markov chain against theory and
against its own simulation, the rule-of-thumb floor, and a tiny reproduce through the
real engine (tables, JSON records, figures).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from qossim import api, studies
from qossim.stats import mean_ci
from qossim.studies import endpoint_admission as ea
from qossim.studies import endpoint_fluid as fluid
from reproducing import assert_files_current, json_records, reproduce

ROOT = Path(__file__).resolve().parent.parent
STUDY_DIR = ROOT / "studies" / "endpoint-admission"

needs_engine = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="needs the real engine"
)


def test_registered_with_its_experiments():
    assert "endpoint-admission" in studies.study_names()
    assert ea.EXPERIMENTS == [
        "E1",
        "E2",
        "E3",
        "E4",
        "E5",
        "E6",
        "E7",
        "E8",
        "E9",
        "E10",
        "E11",
        "E12",
    ]


def test_scenario_files_are_current():
    expected = ea.scenario_files()
    assert_files_current(expected, STUDY_DIR, "write_scenario_files")


def test_sources_conform_to_their_token_rate():
    # The on-off clock runs at the burst rate: 125-byte packets every 1000 bits / r.
    sc = ea.scenario("in_band_dropping", ea.E1_POP, ea.FULL)
    t = sc["traffic"][0]
    assert t["interval"] == "3.90625ms" and t["size"] == "125B"
    assert t["on"] == "exp:500ms" and t["off"] == "exp:500ms"
    poo = ea._onoff("POO1")
    assert poo["on"] == "pareto:1.2:500ms"
    # Out-of-band: data one class above the probes, push-out on.
    oob = ea.scenario("out_of_band_marking", ea.E1_POP, ea.FULL, eps=0.1)
    q = oob["topology"]["link"][0]["queue"]
    assert q["kind"] == "priority" and q["push_out"] is True
    assert oob["traffic"][0]["class"] == 1 and oob["endpoint"]["probe"][0]["class"] == 0
    assert oob["endpoint"]["virtual_queue"][0]["fraction"] == 0.9
    # Out-of-band the virtual queue keeps one counter per priority level; in-band one FIFO.
    assert oob["endpoint"]["virtual_queue"][0]["per_class"] is True
    inb = ea.scenario("in_band_marking", ea.E1_POP, ea.FULL)
    assert "per_class" not in inb["endpoint"]["virtual_queue"][0]
    multi = ea.multihop_scenario("out_of_band_marking", ea.FULL)
    assert all(v["per_class"] for v in multi["endpoint"]["virtual_queue"])


@needs_engine
def test_every_point_validates():
    for exp in ea.EXPERIMENTS:
        for _, sc in ea.points(exp, ea.QUICK):
            assert api.validate(sc) == [], exp


def test_loss_floor_by_hand():
    # P = 1000 bits, r = 256 kb/s, T = 5 s: 1 - 2^(-1/1280) = 5.41e-4.
    assert ea.loss_floor(1000, 256e3, 5) == pytest.approx(1 - 2 ** (-1 / 1280))
    assert ea.loss_floor(1000, 256e3, 25) < ea.loss_floor(1000, 256e3, 5)


def test_floor_counts_the_probes_slow_start_sends():
    # Slow start, 5 s from 256 kb/s: one second at 16, 32, 64, 128 and 256 probes/s.
    assert ea.probes_sent("slow_start", 256e3, 5, 1000) == 16 + 32 + 64 + 128 + 256
    assert ea.probes_sent("slow_start", 256e3, 25, 1000) == 5 * 496
    assert ea.probes_sent("early_reject", 256e3, 5, 1000) == 1280
    # Video probes: 200-byte packets from 800 kb/s; r/16 sends 31.25 a second, so 32.
    assert ea.probes_sent("slow_start", 800e3, 5, 1600) == 32 + 63 + 125 + 250 + 500
    # δ = 1 − 2^(−1/496) = 1.3965e-3: (1 − δ)^496 = 1/2 exactly.
    d = ea.probe_floor("slow_start", 256e3, 5, 1000)
    assert d == pytest.approx(1 - 2 ** (-1 / 496), rel=1e-12)
    assert (1 - d) ** 496 == pytest.approx(0.5, rel=1e-12)
    assert 1.39e-3 < d < 1.40e-3
    # Constant-rate probes give loss_floor back.
    assert ea.probe_floor("simple", 256e3, 5, 1000) == pytest.approx(ea.loss_floor(1000, 256e3, 5))


def test_chain_without_congestion_is_the_offered_load():
    # Short probes, 8.6 flows of 128 kb/s on average: no loss, utilization λ·h·r/C.
    m = fluid.Model(probe_mean_s=1.0)
    got = m.solve()
    assert got.useful_utilization == pytest.approx((30 / 3.5) * 128e3 / 10e6, rel=1e-6)
    assert got.data_loss == 0.0
    # Probing flows: λ·T on average (they all end as probes; none is refused).
    assert got.mean_probing == pytest.approx(1.0 / 3.5, rel=1e-6)


def test_chain_collapses_when_probing_fills_the_link():
    # With probes of 600 s on average, λ·T = 171 flows probe: more than the 78 the link
    # carries, so no probe ever ends without loss and nothing is admitted.
    for oob in (False, True):
        got = fluid.Model(probe_mean_s=600.0, out_of_band=oob).solve()
        assert got.useful_utilization < 1e-3
    # Just below the edge in-band, probes make data lose; out-of-band, data loses nothing.
    inband = fluid.Model(probe_mean_s=200.0).solve()
    outband = fluid.Model(probe_mean_s=200.0, out_of_band=True).solve()
    assert inband.data_loss > 0 and outband.data_loss == 0


@pytest.mark.parametrize("probe_s", [50.0, 200.0])
def test_chain_against_its_simulation(probe_s):
    """The chain's solution lies within the 95 % interval of 8 simulations of it."""
    m = fluid.Model(probe_mean_s=probe_s)
    exact = m.solve()
    sims = [m.simulate(100_000, seed=s) for s in range(1, 9)]
    for name in ("useful_utilization", "mean_probing", "mean_admitted"):
        ci = mean_ci(getattr(s, name) for s in sims)
        value = getattr(exact, name)
        assert ci.low <= value <= ci.high, (name, value, ci)


def _reproduce(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return reproduce(tmp_path, "endpoint-admission", "QOSSIM_ENDPOINT_PROFILE", *args, timeout=600)


@needs_engine
def test_tiny_reproduce_writes_tables_and_figures(tmp_path):
    out = tmp_path / "ea"
    proc = _reproduce(
        tmp_path, "--only", "E1", "E8", "E11", "E12", "--format", "json", "--out", str(out)
    )
    records = json_records(proc)
    assert {r["table"] for r in records} == {
        "fidelity",
        "e1_curves",
        "e8_blocking",
        "e11_tcp",
        "e12_thrashing",
    }
    e1 = [r for r in records if r["table"] == "e1_curves"]
    # Every design's curve at every threshold of the profile, and Measured Sum.
    rows = {r["row"] for r in e1}
    for d in ea.DESIGNS:
        eps = ea.TINY.eps_in if d.startswith("in_band") else ea.TINY.eps_out
        for e in eps:
            assert f"{ea.DESIGN_LABELS[d]}, slow start, ε = {e:g}" in rows
    assert any(r.startswith("Measured Sum") for r in rows)
    for r in e1:
        if r["column"] == "utilization":
            assert 0 < r["value"] < 1 and r["runs"] == 2
    # TCP keeps a share of the drop-tail router whichever starts first.
    for r in records:
        if r["table"] == "e11_tcp" and r["column"].startswith("TCP Mb/s"):
            assert 0 < r["value"] < 10, r
    for name in ("e1_loss_load", "e11_tcp", "e12_thrashing"):
        assert (out / "figures" / f"{name}.png").stat().st_size > 5000


def test_e10_has_measured_sum_over_every_link_of_each_path():
    pts = ea.points("E10", ea.QUICK)
    assert [p["design"] for p, _ in pts] == [*ea.DESIGNS, "mbac"]
    _, sc = pts[-1]
    links: dict[str, list[str]] = {}
    for e in sc["endpoint"]["mbac"]:
        links.setdefault(e["traffic"], []).append(e["link"])
    assert links == {
        "long": ["R1-R2", "R2-R3", "R3-R4"],
        "cross1": ["R1-R2"],
        "cross2": ["R2-R3"],
        "cross3": ["R3-R4"],
    }
    assert "probe" not in sc["endpoint"]


def test_e10_each_link_is_offered_e1s_total_load():
    """Each backbone link is offered E1's load (EXP1 calls every 3.5 s), half of it by the
    long class and half by the link's cross class."""
    _, sc = ea.points("E10", ea.QUICK)[0]
    rate = {t["name"]: float(t["calls"]["rate"].removesuffix("/s")) for t in sc["traffic"]}
    e1 = 1 / ea.E1_POP[0].tau
    assert ea.E1_POP[0].tau == 3.5 and ea.E1_POP[0].source == "EXP1"
    for i in (1, 2, 3):
        assert rate["long"] + rate[f"cross{i}"] == pytest.approx(e1, rel=1e-8)
        assert rate[f"cross{i}"] == pytest.approx(rate["long"], rel=1e-8)
    assert all(t["on"] == "exp:500ms" and t["interval"] == "3.90625ms" for t in sc["traffic"])


@needs_engine
def test_e10_rows_and_columns(tmp_path):
    """E10 has a row per design and one for Measured Sum (MBAC), each with the long
    flows' blocking and the product approximation over the three cross classes."""
    proc = _reproduce(tmp_path, "--only", "E10", "--format", "json", "--out", str(tmp_path / "o"))
    cells = {(r["row"], r["column"]): r for r in json_records(proc) if r["table"] == "e10_multihop"}
    rows = {row for row, _ in cells}
    assert rows == set(ea.E10_ROWS.values())
    assert "MBAC" in rows
    for row in rows:
        for col in ("short_loss", "long_loss", "long_block", "product"):
            assert (row, col) in cells, (row, col)
        # Per run the product is at least each cross class's blocking, so its mean is too.
        product = cells[(row, "product")]["value"]
        for i in (1, 2, 3):
            assert product >= cells[(row, f"cross{i}_block")]["value"] - 1e-12
        assert cells[(row, "long_block")]["runs"] == len(ea.TINY.seeds)


@needs_engine
def test_an_experiment_is_identical_on_dask(tmp_path):
    """The same records whether the runs execute locally or on a local Dask cluster."""
    got = {}
    for backend in ("local", "dask"):
        proc = _reproduce(
            tmp_path,
            "--only",
            "E8",
            "--format",
            "json",
            "--backend",
            backend,
            "--out",
            str(tmp_path / backend),
        )
        assert proc.returncode == 0, proc.stderr
        got[backend] = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert got["local"] == got["dask"]
    assert len(got["local"]) > 0


def test_synthetic_video_trace_is_long_range_dependent_and_conforms():
    import math

    import numpy as np

    from qossim.studies import video_trace as vt

    # Fractional Gaussian noise: the variance of block means falls as m^(2H-2).
    x = np.array(vt.fgn(1 << 14, 0.8, seed=3))
    v1 = x.var()
    v64 = x[: len(x) // 64 * 64].reshape(-1, 64).mean(1).var()
    hurst = 1 + math.log(v64 / v1) / math.log(64) / 2
    assert 0.7 < hurst < 0.9, hurst
    # The shaped trace conforms to the bucket from a full bucket at any offset.
    spec = vt.VideoSpec(frames=1 << 12, mean_bps=600e3)
    shaped = vt.shape(vt.frames(spec), spec)
    packets = sum(math.ceil(f / spec.packet_bytes) * spec.packet_bytes for f in vt.frames(spec))
    assert sum(shaped) < packets  # at this mean some packets are dropped
    per_frame = spec.token_bps / spec.fps
    for start in (0, 777, 3000, len(shaped) - 5):
        tokens = spec.bucket_bits
        for i in range(start, start + len(shaped)):
            tokens = min(spec.bucket_bits, tokens + per_frame)
            tokens -= shaped[i % len(shaped)] * 8
            assert tokens >= -1e-6, (start, i)


def test_video_trace_file_is_labelled_synthetic(tmp_path):
    from qossim.studies import video_trace as vt

    p = vt.write(tmp_path / "v.trace", vt.VideoSpec(frames=256))
    head = p.read_text().splitlines()[0]
    assert "SYNTHETIC" in head
    sc = ea.scenario("in_band_dropping", (ea.Population("v", "VIDEO", 8.0),), ea.TINY)
    assert sc["traffic"][0]["model"] == "trace"
    assert sc["endpoint"]["probe"][0]["rate"] == "800kbps"
