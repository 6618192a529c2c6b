"""The shared frame of the studies: profiles, overrides, grids, statistics, declarations."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from qossim.stats import mean_ci
from qossim.studies import StudyOutput, Table
from qossim.studies.frame import (
    Context,
    Experiment,
    Profiles,
    Study,
    add_ci_figure,
    apply_overrides,
    ci_of,
    ci_point,
    expand_grid,
)


def test_overrides_create_tables_and_copy_values():
    """Dotted paths create tables on the way; later overrides win; values are copied."""
    scenario = {"run": {"duration": "1s"}}
    value = {"min": "1ms"}
    apply_overrides(scenario, [("pcn.thresholds", value), ("run.duration", "2s")])
    apply_overrides(scenario, [("run.duration", "3s")])
    value["min"] = "changed"
    assert scenario == {"run": {"duration": "3s"}, "pcn": {"thresholds": {"min": "1ms"}}}
    listed = {"traffic": [{"flows": 1}, {"flows": 2}]}
    apply_overrides(listed, [("traffic.1.flows", 5), ("traffic.0", {"flows": 0})])
    assert listed == {"traffic": [{"flows": 0}, {"flows": 5}]}


def test_grid_is_a_cartesian_product_last_fastest():
    """Every combination once, the last path varying fastest."""
    points = expand_grid([("a", [1, 2]), ("b", ["x", "y", "z"])])
    assert points == [
        [("a", 1), ("b", "x")],
        [("a", 1), ("b", "y")],
        [("a", 1), ("b", "z")],
        [("a", 2), ("b", "x")],
        [("a", 2), ("b", "y")],
        [("a", 2), ("b", "z")],
    ]
    assert expand_grid([]) == [[]]


def test_profiles_pick(monkeypatch):
    """--quick picks quick; the environment variable names any profile, or is refused."""
    profiles = Profiles(full="F", quick="Q", others={"tiny": "T"}, env="QOSSIM_TEST_PROFILE")
    monkeypatch.delenv("QOSSIM_TEST_PROFILE", raising=False)
    assert (profiles.pick(False), profiles.pick(True)) == ("F", "Q")
    monkeypatch.setenv("QOSSIM_TEST_PROFILE", "Tiny")
    assert (profiles.pick(False), profiles.pick(True)) == ("T", "T")
    monkeypatch.setenv("QOSSIM_TEST_PROFILE", "huge")
    with pytest.raises(ValueError, match="use one of full, quick, tiny"):
        profiles.pick(True)


def test_profiles_name_their_plans():
    """A plan is named by the profile that holds it; a test's own plan by --quick."""
    full, quick, tiny, own = object(), object(), object(), object()
    profiles = Profiles(full=full, quick=quick, others={"tiny": tiny})
    assert [profiles.name_of(p) for p in (full, quick, tiny)] == ["full", "quick", "tiny"]
    assert (profiles.name_of(own), profiles.name_of(own, quick=True)) == ("full", "quick")


def test_ci_of_leaves_out_missing_values():
    """None, NaN and infinities are not runs; the rest give mean_ci's interval."""
    ci = ci_of([1.0, None, 2.0, math.nan, 4.0, math.inf])
    expected = mean_ci([1.0, 2.0, 4.0])
    assert (ci.mean, ci.low, ci.high, ci.n) == (expected.mean, expected.low, expected.high, 3)
    assert ci_of([]).n == 0 and math.isnan(ci_of([]).mean)
    point = ci_point("k", 3, ci, series="s")
    assert point == {"series": "s", "k": 3, "mean": ci.mean, "low": ci.low, "high": ci.high}


def test_no_points_no_figure(tmp_path):
    """A curve without points draws nothing and lists nothing."""
    output = StudyOutput()
    assert add_ci_figure(output, tmp_path, "f", "caption", [], "x") is None
    assert output.figures == [] and not (tmp_path / "figures").exists()


def _first(plan, out_dir, output):
    """E1: the first experiment."""
    table = Table("E1", f"first with {plan}")
    table.add("r", "c", 1)
    output.tables.append(table)


def _second(plan, out_dir, output):
    """E2: the second experiment."""
    output.tables.append(Table("E2", "second"))


def _call(function, c: Context) -> None:
    function(c.plan, c.out_dir, c.output)


def test_experiment_from_docstring():
    """The id and title come from the docstring's first line; without one it is refused."""
    experiment = Experiment.of(_first, _call)
    assert (experiment.id, experiment.title) == ("E1", "the first experiment")

    def undocumented(plan, out_dir, output):
        pass

    with pytest.raises(ValueError, match="must start 'ID: title'"):
        Experiment.of(undocumented, _call)


def test_study_runs_selected_experiments_in_declared_order(tmp_path):
    """Declared order whatever the order of --only; prepare sees the ids; notes first."""
    prepared: list[tuple[str, list[str]]] = []

    def prepare(plan, ids, out_dir, progress):
        prepared.append((plan, ids))
        return "shared"

    seen: list[object] = []

    def third(c: Context) -> None:
        seen.append(c.shared)

    study = Study(
        profiles=Profiles(full="full plan", quick="quick plan"),
        experiments=(
            Experiment.of(_first, _call),
            Experiment.of(_second, _call),
            Experiment("E3", "third", third),
        ),
        notes=lambda plan, quick: [f"{plan}, quick={quick}"],
        prepare=prepare,
    )
    assert study.ids == ["E1", "E2", "E3"]
    output = study.reproduce(True, ["E3", "E1"], Path(tmp_path), False)
    assert [t.id for t in output.tables] == ["E1"]
    assert output.tables[0].title == "first with quick plan"
    assert output.notes == ["quick plan, quick=True"]
    assert output.profile == "quick"
    assert prepared == [("quick plan", ["E1", "E3"])]
    assert seen == ["shared"]
    everything = study.reproduce(False, None, Path(tmp_path), False)
    assert [t.id for t in everything.tables] == ["E1", "E2"]
    assert everything.profile == "full"
    assert prepared[-1] == ("full plan", ["E1", "E2", "E3"])


def test_log_axes_are_labelled_at_the_plotted_values_and_keep_zero():
    from qossim.studies.frame import log_ticks_at, new_figure

    fig, (ax,) = new_figure()
    xs = [2, 10, 70, 300, 600, 1000]
    ax.plot(xs, range(len(xs)))
    log_ticks_at(ax, xs)
    fig.canvas.draw()
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "10", "70", "300", "600", "1000"]
    assert not ax.xaxis.get_minor_ticks()
    fig, (ax,) = new_figure()
    fs = [0, 0.0001, 0.01, 0.1]
    ax.plot(fs, range(len(fs)))
    log_ticks_at(ax, fs)
    fig.canvas.draw()
    assert ax.get_xscale() == "symlog"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "0.0001", "0.01", "0.1"]


def test_sparse_records_read_as_the_gathered_tables_rows():
    """A study's records hold exactly the gathered table's non-missing cells, typed alike.

    Rows of every kind a column can mix (integers with and without missing cells, with
    floats, NaN, booleans, text, explicit None in a parameter) go through both paths:
    the table (``pandas.DataFrame`` as ``campaign.gather`` builds it, read as
    ``frame.Runs`` reads a table) and ``campaign.sparse_records``. Every record must
    equal its table row without the missing cells, value for value, type for type and in
    the table's column order, and read ``None`` for a column it lacks.
    """
    import random

    from qossim.campaign import _rows_to_frame, sparse_records
    from qossim.studies.frame import Runs

    rng = random.Random(7)
    params = ["topology", "k"]
    kinds = {
        "int_all": lambda: rng.randint(0, 9),
        "int_some": lambda: rng.randint(0, 9),
        "int_float": lambda: rng.choice([rng.randint(0, 9), rng.random()]),
        "float_nan": lambda: rng.choice([rng.random(), math.nan]),
        "bool_some": lambda: rng.choice([True, False]),
        "bool_int": lambda: rng.choice([True, 3]),
        "text_int": lambda: rng.choice(["a", 4]),
    }
    rows = []
    for i in range(40):
        row = {"topology": rng.choice(["PLT-5", "single"]), "k": rng.choice([None, 2, 5])}
        row["seed"] = i
        for name, draw in kinds.items():
            if name.endswith("_all") or rng.random() < 0.7:
                row[name] = draw()
        for _ in range(rng.randint(0, 3)):
            row[f"link.l{rng.randint(0, 5)}.x"] = rng.randint(0, 100)
        row["run_key"] = f"r{i}"
        rows.append(row)
    dense = Runs(_rows_to_frame(rows, params), Path("."))
    sparse = sparse_records(rows, params)
    assert len(sparse) == len(dense.rows)
    for table_row, record in zip(dense.rows, sparse, strict=True):
        kept = [(k, v) for k, v in table_row.items() if v is not None]
        assert list(record.items()) == kept
        assert [type(v) for v in record.values()] == [type(v) for _, v in kept]
        for k, v in table_row.items():
            assert record[k] == v or (v is None and record[k] is None)
