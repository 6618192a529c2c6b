"""`qossim reproduce` states its estimated wall time first, from measured run costs."""

from __future__ import annotations

import json

from qossim import costs


def _runs(folder, walls):
    for i, wall in enumerate(walls):
        run = folder / "runs" / f"r{i}"
        run.mkdir(parents=True)
        (run / "manifest.json").write_text(json.dumps({"wall_s": wall}))


def test_a_reproduction_records_its_runs_engine_time(tmp_path):
    """cost.json sums the wall_s of every stored run."""
    _runs(tmp_path, [1.5, 2.5, 4.0])
    cost = costs.record(tmp_path, "demo", quick=True)
    assert cost == {"study": "demo", "profile": "quick", "runs": 3, "engine_s": 8.0}
    assert json.loads((tmp_path / costs.COST_FILE).read_text()) == cost


def test_the_estimate_comes_from_the_last_measurement_of_that_profile(tmp_path):
    """8 engine seconds on 2 jobs: about 4 s; another profile has no measurement."""
    _runs(tmp_path, [1.5, 2.5, 4.0])
    costs.record(tmp_path, "demo", quick=True)
    line = costs.estimate("demo", True, tmp_path, jobs=2)
    assert "about 4 s on 2 jobs" in line and "3 runs" in line and "2.67 s per run" in line
    assert "no measured cost yet" in costs.estimate("demo", False, tmp_path, jobs=2)
    # What was not engine time (10 s - 8/2 s = 6 s) is added: 6 + 8/4 = 8 s on 4 jobs.
    costs.record(tmp_path, "demo", quick=True, elapsed_s=10.0, jobs=2)
    assert "about 8 s on 4 jobs" in costs.estimate("demo", True, tmp_path, jobs=4)


def test_every_shipped_cost_names_a_study_and_a_profile():
    """The shipped table: registered studies, quick or full, positive numbers."""
    from qossim import studies

    for study, profiles in costs.shipped().items():
        assert study in studies.study_names()
        for profile, cost in profiles.items():
            assert profile in ("quick", "full")
            assert cost["runs"] > 0 and cost["engine_s"] > 0
    line = costs.estimate("pcn", False, None, jobs=2)
    assert "1662 runs" in line and "measured for the release" in line


def test_several_studies_are_estimated_as_the_sum_of_their_measurements(tmp_path):
    """Two measured studies add up (4 s + 6 s on 2 jobs); one without a cost is named."""
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    _runs(a, [3.0, 5.0])
    _runs(b, [12.0])
    costs.record(a, "a", quick=True)
    costs.record(b, "b", quick=True)
    line = costs.estimate_all({"a": a, "b": b}, True, jobs=2)
    assert line == "2 studies (quick profiles): about 10 s on 2 jobs"
    line = costs.estimate_all({"a": a, "b": b, "c": c}, True, jobs=2)
    assert line.endswith("about 10 s on 2 jobs, plus c (no measured cost yet)")
