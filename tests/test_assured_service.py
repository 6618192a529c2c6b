"""The Assured Service study: its arithmetic, its scenarios and campaign files, and a
short run of S3 through the real engine."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from qossim import api, studies
from qossim.campaign import Campaign
from qossim.studies import assured_service as a
from reproducing import assert_files_current

ROOT = Path(__file__).resolve().parent.parent
STUDY_DIR = ROOT / "studies" / "assured-service"

needs_engine = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="needs the real engine"
)


def test_registered_with_its_experiments():
    assert "assured-service" in studies.study_names()
    module = studies.get_study("assured-service")
    assert module.EXPERIMENTS == ["S1", "S2", "S3", "S4", "S5", "S6"]


def test_excess_share_by_hand():
    # S3: 4 x (2 + 1 + 0.5 + 0.2 + 0.1) = 15.2 Mb/s of targets on 20 Mb/s, 40 connections:
    # (20 - 15.2) / 40 = 0.12 Mb/s each.
    targets = a.s3_targets()
    assert len(targets) == 40 and targets.count(0.0) == 20
    assert math.isclose(sum(targets), 15.2)
    assert math.isclose(a.excess_share(20.0, targets), 0.12)
    ideal = a.ideal_rates(20.0, targets)
    assert math.isclose(ideal[0], 2.12) and math.isclose(ideal[19], 0.22)
    assert math.isclose(ideal[39], 0.12)
    assert math.isclose(sum(ideal), 20.0)
    # Dumbbell-50, 25 AS at 1 Mb/s: (50 - 25) / 50 = 0.5; goodput 536/576 of the wire rate.
    ideal_as, ideal_be = a._dumbbell_ideals(25)
    assert math.isclose(ideal_as, 1.5 * 536 / 576)
    assert math.isclose(ideal_be, 0.5 * 536 / 576)
    # 10 AS: (50 - 10) / 50 = 0.8.
    assert math.isclose(a._dumbbell_ideals(10)[0], 1.8 * 536 / 576)
    # Merging: (1544 - 8 x 100) / 8 = 93 kb/s on top of 100.
    assert math.isclose(a.ideal_rates(1544.0, [100.0] * 8)[3], 193.0)
    # Oversubscribed targets give a negative share.
    assert a.excess_share(10.0, [6.0, 6.0]) == -1.0
    with pytest.raises(ValueError):
        a.excess_share(10.0, [])


def test_distribution_statistics_by_hand():
    assert a.p_as_below_be([3.0, 4.0], [1.0, 2.0]) == 0.0
    assert a.p_as_below_be([1.0, 2.0], [3.0, 4.0]) == 1.0
    # Pairs (1,1) tie, (1,2) below, (2,1) above, (2,2) tie: (0.5 + 1 + 0 + 0.5) / 4.
    assert a.p_as_below_be([1.0, 2.0], [1.0, 2.0]) == 0.5
    assert math.isnan(a.p_as_below_be([], [1.0]))
    assert a.overlap_area([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]) == pytest.approx(1.0)
    assert a.overlap_area([0.0, 0.1], [0.9, 1.0], bins=10) == 0.0
    # Half of each sample in the shared bin.
    assert a.overlap_area([0.0, 1.0], [1.0, 2.0], bins=2) == pytest.approx(0.5)
    fit = a.exp_fit([50.0, 100.0, 150.0], [2 * math.exp(-0.01 * x) for x in (50, 100, 150)])
    assert fit is not None
    assert fit[0] == pytest.approx(2.0) and fit[1] == pytest.approx(-0.01)
    assert a.exp_fit([1.0], [1.0]) is None


def test_rtt_draws_and_access_delays():
    rtts = a.draw_rtts_ms()
    assert len(rtts) == 50 and all(50.0 <= r <= 150.0 for r in rtts)
    assert rtts == a.draw_rtts_ms()
    # RTT = 4 x access + 2 x bottleneck (1 ms).
    assert a.access_delay_ms(100.0) == 24.5
    assert a.cbr_interval(2.0) == "2304us"
    assert a.cbr_interval(14.0) == "329.142857us"


@needs_engine
def test_every_scenario_validates():
    plan = a.QUICK
    scenarios = [a.s1_scenario(plan, n, m) for n in (0, 10, 50) for m in ("token_bucket", "tsw")]
    scenarios += [a.s3_scenario(plan), a.s6_scenario(plan)]
    scenarios += [a.s4_scenario(plan, 0.0), a.s4_scenario(plan, 8.0, 4.0)]
    for sc in scenarios:
        assert api.validate(sc) == []


def test_campaign_files_are_current():
    """The committed campaign and scenario files are the ones the study generates."""
    expected = a.campaign_files()
    assert_files_current(expected, STUDY_DIR, "write_campaign_files")
    for name in expected:
        if "/" not in name:
            campaign = Campaign.load(STUDY_DIR / name)
            assert campaign.seeds in ([1, 2, 3, 4, 5], list(range(1, 11)))


@needs_engine
def test_short_s3_run(tmp_path):
    plan = a.quick_plan(seeds10=(1,), duration_s=20.0, warmup_s=5.0)
    output = a.run_experiments(plan, ["S3"], tmp_path, progress=False)
    (table,) = output.tables
    assert table.id == "s3_targets"
    assert table.rows == [str(i) for i in range(40)]
    assert table.columns == [
        "measured (Mb/s)",
        "target (Mb/s)",
        "target + share (Mb/s)",
        "ideal goodput (Mb/s)",
    ]
    targets = a.s3_targets()
    total = 0.0
    for i, t in enumerate(targets):
        measured = table.cell(str(i), "measured (Mb/s)")
        assert measured["runs"] == 1 and measured["value"] > 0
        total += measured["value"]
        assert table.cell(str(i), "target (Mb/s)")["value"] == t
        assert table.cell(str(i), "target + share (Mb/s)")["value"] == pytest.approx(t + 0.12)
    # The connections share the 20 Mb/s bottleneck: their goodputs add up to most of its
    # payload rate, and to at most that plus what was already past the bottleneck at the
    # end of the warm-up but is delivered in order only after it (segments held out of
    # order at the receivers). That is less than the data in flight: the queue (868
    # packets, from max_th = 0.8 x queue size) and the bandwidth-delay product
    # (20 Mb/s x 0.1 s / 576 B = 434 packets), spread over the 15 s measured.
    assert a.physical_queue(a.S3_RIO) == "868p"
    capacity = 20 * 536 / 576
    slack = (868 + 434) * 536 * 8 / 15 / 1e6
    assert 0.8 * capacity < total <= capacity + slack
    # The groups are ordered by target: a higher target gets a higher mean goodput, and
    # every AS group more than the best-effort one.
    by_target: dict[float, list[float]] = {}
    for i, t in enumerate(targets):
        by_target.setdefault(t, []).append(table.cell(str(i), "measured (Mb/s)")["value"])
    means = [sum(v) / len(v) for _t, v in sorted(by_target.items(), reverse=True)]
    assert means == sorted(means, reverse=True), means
    assert len(set(means)) == len(means), means
    assert len(output.figures) == 2
    for _title, path in output.figures:
        assert Path(path).is_file() and Path(path).stat().st_size > 1000
    assert any("20 s" in n for n in output.notes)


def test_merging_policers_match_the_profiles_behind_them():
    """Each S6 policer's contract is the sum of the host profiles behind it (no long-run
    slack, so it demotes only bursts), and every bucket is deeper than one packet."""
    sc = a.s6_scenario(a.FULL)
    profiles = {t["from"]: t["profile"] for t in sc["traffic"]}
    assert sorted(profiles) == sorted(f"h{i}" for i in range(8))
    assert {p["rate"] for p in profiles.values()} == {"100kbps"}
    assert {p["depth"] for p in profiles.values()} == {f"{4 * 1500}B"}
    # Hosts behind each policed port of the merging hierarchy: two per edge router,
    # four per middle router, all eight at r6.
    behind = {"r0-r4": 2, "r1-r4": 2, "r2-r5": 2, "r3-r5": 2, "r4-r6": 4, "r5-r6": 4, "r6-r7": 8}
    for link, hosts in behind.items():
        (meter,) = sc["links"][link]["meters"]
        assert meter["kind"] == "policer"
        assert meter["rate"] == f"{100 * hosts:g}kbps"
        assert meter["depth"] == f"{6 * 1500}B"
    queue = sc["links"]["r6-r7"]["queue"]
    assert (queue["kind"], queue["params"], queue["limit"]) == ("rio", "4/18/0.05 5/18/0.02", "24p")
