"""The Python API: qossim.run, run_text, validate."""

from __future__ import annotations

import pytest

import qossim
from qossim import _engine, _toml
from qossim.errors import EngineUnavailableError, QossimError, ScenarioError

pytestmark = pytest.mark.usefixtures("fake_engine")


def test_run_from_path_dict_and_text_agree(scenario_file):
    """A file, the same content as a dict, and as text give the same summary."""
    from_path = qossim.run(scenario_file, seed=5)
    from_str = qossim.run(str(scenario_file), seed=5)
    from_dict = qossim.run(_toml.loads(scenario_file.read_text()), seed=5)
    from_text = qossim.run_text(scenario_file.read_text(), seed=5)
    assert from_path.summary == from_str.summary == from_text.summary
    assert from_dict.summary == from_path.summary
    assert from_dict.manifest["scenario_file"] == "<dict>"
    assert from_path.manifest["scenario_file"] == str(scenario_file)


def test_same_seed_same_result_other_seed_differs(scenario_file):
    """Results depend only on scenario, overrides and seed."""
    a = qossim.run(scenario_file, seed=1)
    b = qossim.run(scenario_file, seed=1)
    c = qossim.run(scenario_file, seed=2)
    assert a.summary == b.summary
    assert a.summary != c.summary


def test_overrides_reach_the_engine(scenario_file, fake_engine):
    """set= accepts a dict, key=value strings or pairs, passed on as strings."""
    qossim.run(scenario_file, seed=1, set={"traffic.0.flows": 9})
    qossim.run(scenario_file, seed=1, set=["traffic.0.flows=9"])
    qossim.run(scenario_file, seed=1, set=[("traffic.0.flows", 9)])
    assert [overrides for _, overrides in fake_engine.runs] == [[("traffic.0.flows", "9")]] * 3
    high = qossim.run(scenario_file, seed=1, set={"traffic.0.flows": 9}).summary
    low = qossim.run(scenario_file, seed=1).summary
    assert high["group.voice.throughput_bps"] > low["group.voice.throughput_bps"]


def test_result_interface(scenario_file):
    """Result exposes summary, series names, DataFrames and the manifest."""
    result = qossim.run(scenario_file, seed=1)
    assert set(result.summary) >= {"link.a-b.throughput_bps", "group.voice.delay_mean_s"}
    # In [[metric]] order, then the traffic entry's delay distribution.
    assert result.series_names == ["a-b.throughput", "a-b.queue", "group.voice.delay_cdf"]
    frame = result.timeseries("a-b.throughput")
    assert list(frame.columns) == ["t", "value"]
    assert len(frame) == 10  # 10 s sampled every second
    assert result.manifest["seed"] == 1
    assert "Result(seed=1" in repr(result)


def test_progress_callback_receives_fractions(scenario_file):
    """A callable progress receives increasing fractions up to 1."""
    seen: list[float] = []
    qossim.run(scenario_file, seed=1, progress=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    qossim.run(scenario_file, seed=1, progress=True)  # a bar; hidden when not a TTY


def test_invalid_scenario_raises_with_diagnostics(scenario_file):
    """ScenarioError carries one diagnostic per problem, FILE:LINE: key: reason."""
    with pytest.raises(ScenarioError) as info:
        qossim.run(scenario_file, set={"traffic.0.flows": -1, "run.duration": "x"})
    lines = info.value.diagnostics
    assert len(lines) == 2
    assert [line.split(": ")[:2] for line in lines] == [
        ["--set:1", "traffic.0.flows"],
        ["--set:2", "run.duration"],
    ]
    assert isinstance(info.value, ValueError)
    assert str(info.value) == "\n".join(lines)


def test_validate(scenario_file):
    """validate returns an empty list for a valid scenario, diagnostics otherwise."""
    assert qossim.validate(scenario_file) == []
    assert qossim.validate(scenario_file, set=["traffic.0.flows=-1"]) == [
        "--set:1: traffic.0.flows: must not be negative, got -1"
    ]
    bad = scenario_file.with_name("bad.toml")
    bad.write_text(scenario_file.read_text().replace("flows = 5", "flows = -5"))
    assert qossim.validate(bad) == [f"{bad}:16: traffic.0.flows: must not be negative, got -5"]
    assert qossim.validate_text("x = [", filename="t.toml")[0].startswith("t.toml:1: <toml>:")


def test_unreadable_file_names_the_file(tmp_path):
    """A missing scenario file raises a QossimError naming it."""
    missing = tmp_path / "nope.toml"
    with pytest.raises(QossimError, match="nope.toml: cannot read"):
        qossim.run(missing)


def test_text_is_not_taken_for_a_path():
    """run() takes paths and dicts; TOML text goes through run_text."""
    with pytest.raises(TypeError):
        qossim.run(b"[simulation]")  # type: ignore[arg-type]


def test_core_scenario_error_is_translated(monkeypatch):
    """The core's own ScenarioError becomes qossim.ScenarioError."""

    class CoreScenarioError(ValueError):
        pass

    class FakeCore:
        ScenarioError = CoreScenarioError

        @staticmethod
        def run(text, filename, seed, overrides, progress):
            raise CoreScenarioError("f.toml:1: a: bad\nf.toml:2: b: worse")

    monkeypatch.undo()  # use the real _engine functions with a fake core module
    monkeypatch.setattr(_engine, "_backend", lambda: FakeCore)
    with pytest.raises(ScenarioError) as info:
        _engine.run_raw("", "f.toml", None, [], None)
    assert info.value.diagnostics == ["f.toml:1: a: bad", "f.toml:2: b: worse"]


def test_missing_core_is_a_clear_error(monkeypatch):
    """Without the compiled core (and no test hook) the error says how to build it."""
    import builtins

    monkeypatch.undo()
    monkeypatch.delenv(_engine.FAKE_ENGINE_ENV, raising=False)
    real_import = builtins.__import__

    def no_core(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "qossim" and fromlist and "_core" in fromlist:
            raise ImportError("No module named 'qossim._core'")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", no_core)
    with pytest.raises(EngineUnavailableError, match="maturin develop"):
        _engine.core_version()


@pytest.mark.parametrize("seed", [2**64, -1, True, 1.5, "3"])
def test_a_bad_seed_is_a_qossim_error(scenario_file, seed):
    with pytest.raises(QossimError, match=r"^seed: must be"):
        qossim.run(scenario_file, seed=seed)


def test_api_misuse_raises_qossim_errors(campaign_file, tmp_path):
    with pytest.raises(QossimError, match="summarize: expects the table"):
        qossim.summarize(None)
    with pytest.raises(QossimError, match="jobs: must be a whole number"):
        qossim.run_campaign(campaign_file, jobs="2", out=tmp_path / "c")
    with pytest.raises(QossimError, match="backend: unknown backend .slurm."):
        qossim.run_campaign(campaign_file, backend="slurm", out=tmp_path / "c")
    looped: dict = {"run": {}}
    looped["run"]["self"] = looped
    with pytest.raises(ScenarioError, match="it contains itself"):
        qossim.run(looped)


def test_a_device_or_a_folder_is_not_read_as_a_scenario(tmp_path):
    for path in ("/dev/zero", str(tmp_path)):
        with pytest.raises(QossimError, match="not a regular file"):
            qossim.validate(path)


def test_a_campaign_too_large_is_refused_before_expansion(tmp_path, scenario_file):
    from qossim.campaign import MAX_RUNS, Campaign

    path = tmp_path / "big.toml"
    path.write_text(
        f'[campaign]\nscenario = "{scenario_file.name}"\nseeds = 1000\n'
        f'[grid]\n"a.b" = {list(range(MAX_RUNS // 1000 + 1))}\n'
    )
    with pytest.raises(QossimError, match=r"grid: 1001000 runs .* more than the 1000000"):
        Campaign.load(path)
    path.write_text(f'[campaign]\nscenario = "{scenario_file.name}"\nseeds = 1000000000\n')
    with pytest.raises(QossimError, match="1000000000 seeds is more than"):
        Campaign.load(path)
    path.write_text(f'[campaign]\nscenario = "{scenario_file.name}"\nseeds = [{2**64}]\n')
    with pytest.raises(QossimError, match="integers from 0 to 2.64 - 1"):
        Campaign.load(path)
