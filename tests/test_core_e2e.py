"""End to end through the compiled engine: the Python API, the CLI in a child process,
diagnostics for malformed scenarios, progress, the GIL, and campaigns on every backend.

These tests need the built extension (``pip install -e .``); they never use the
stand-in engine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import qossim
from qossim import campaign

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "scenarios" / "reference.toml"
EXAMPLE_CAMPAIGN = ROOT / "studies" / "examples" / "flows.toml"

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="needs the real engine"
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("QOSSIM_FAKE_ENGINE", None)
    return env


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "qossim", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


SMALL = {
    "run": {"duration": "2s", "warmup": "0.5s"},
    "topology": {"kind": "dumbbell", "hosts": 2, "rate": "100Mbps", "bottleneck_rate": "10Mbps"},
    "traffic": [{"name": "v", "from": "s0", "to": "d1", "model": "CBR", "flows": 10}],
    "metric": [{"kind": "link_throughput", "link": "r0-r1"}],
}


def test_run_measures_what_the_scenario_offers():
    res = qossim.run(SMALL, seed=5)
    # 10 CBR flows of 64 kb/s cross the bottleneck: exactly 640 kb/s after warm-up,
    # within one packet per flow over 1.5 s (10 x 1280 bit / 1.5 s = 8.5 kb/s).
    assert abs(res.summary["link.r0-r1.throughput_bps"] - 640_000) < 8_600
    df = res.timeseries("r0-r1.throughput")
    assert list(df.columns[:2]) == ["t", "value"]
    assert len(df) == 40  # 2 s / 50 ms


def test_same_seed_identical_different_seed_different():
    a = qossim.run(REFERENCE, seed=1, set={"run.duration": "1s", "run.warmup": "0.1s"})
    b = qossim.run(REFERENCE, seed=1, set={"run.duration": "1s", "run.warmup": "0.1s"})
    c = qossim.run(REFERENCE, seed=2, set={"run.duration": "1s", "run.warmup": "0.1s"})
    key = "series.n1-n2.queue.mean"
    assert a.summary == b.summary
    assert a.summary["events"] == b.summary["events"]
    assert a.summary[key] != c.summary[key]


def test_progress_is_reported_and_monotone():
    seen: list[float] = []
    qossim.run(REFERENCE, seed=1, set={"run.duration": "5s"}, progress=seen.append)
    assert seen, "no progress reported"
    assert seen == sorted(seen)
    assert seen[-1] == pytest.approx(1.0)


def test_the_gil_is_released_during_a_run():
    ticks = 0
    stop = threading.Event()

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    t0 = time.perf_counter()
    qossim.run(REFERENCE, seed=1, set={"run.duration": "8s"})
    elapsed = time.perf_counter() - t0
    stop.set()
    t.join()
    # A thread sleeping 1 ms per tick gets at least a fifth of its ticks if the GIL is
    # free; with the GIL held for the whole run it would get none in between.
    assert ticks > 0.2 * elapsed / 0.001 * 0.2, (ticks, elapsed)


# Each malformed scenario with the exact diagnostic the user sees.
BASE = """\
[run]
duration = "2s"

[topology]
kind = "dumbbell"
hosts = 2
rate = "10Mbps"

[[traffic]]
name = "v"
from = "s0"
to = "d0"
model = "CBR"
"""

MALFORMED = [
    (
        "unknown key",
        BASE.replace("hosts = 2", "hosts = 2\nhots = 3"),
        '7: topology.hots: unknown key (did you mean "hosts"?)',
    ),
    (
        "rate without unit",
        BASE.replace('"10Mbps"', '"10"'),
        '7: topology.rate: rate "10" has no unit',
    ),
    (
        "wrong rate unit",
        BASE.replace('"10Mbps"', '"10MBps"'),
        '7: topology.rate: unknown rate unit "MBps"',
    ),
    (
        "negative rate",
        BASE.replace('"10Mbps"', '"-10Mbps"'),
        "7: topology.rate: rate must be positive",
    ),
    ("zero rate", BASE.replace('"10Mbps"', '"0bps"'), "7: topology.rate: rate must be positive"),
    ("negative time", BASE.replace('"2s"', '"-2s"'), "2: run.duration: time must not be negative"),
    (
        "number for a time",
        BASE.replace('"2s"', "2"),
        "2: run.duration: expected a string with a unit",
    ),
    (
        "missing duration",
        BASE.replace('duration = "2s"', 'warmup = "1s"'),
        "1: run.duration: missing (required)",
    ),
    ("unknown node", BASE.replace('to = "d0"', 'to = "d7"'), '12: traffic.0.to: unknown node "d7"'),
    (
        "unknown model",
        BASE.replace('"CBR"', '"G.999"'),
        '13: traffic.0.model: unknown model "G.999"',
    ),
    (
        "unknown topology",
        BASE.replace('"dumbbell"', '"mesh"'),
        '5: topology.kind: unknown topology "mesh"',
    ),
    (
        "jitter out of range",
        BASE + "jitter = 2\n",
        "14: traffic.0.jitter: must be between 0 and 1, got 2",
    ),
    (
        "unreadable trace",
        BASE.replace('model = "CBR"', 'model = "trace"\ntrace = "missing.txt"'),
        "14: traffic.0.trace: cannot read trace",
    ),
    (
        "disconnected route",
        BASE + 'route = ["s0", "r1", "d0"]\n',
        "14: traffic.0.route: route does not connect: no link from s0 to r1",
    ),
    ("bad TOML", BASE.replace("[topology]", "[topology"), "4: (syntax): invalid TOML"),
]


@pytest.mark.parametrize("name,text,expected", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_scenarios_get_a_clear_message(tmp_path, name, text, expected):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    problems = qossim.validate(path)
    wanted = f"{path}:{expected}"
    assert any(p.startswith(wanted) for p in problems), (wanted, problems)
    proc = cli("validate", str(path), cwd=tmp_path)
    assert proc.returncode == 2
    assert wanted.split(": ", 1)[0] in proc.stderr
    assert "Traceback" not in proc.stderr
    # A failing run writes nothing.
    proc = cli("run", str(path), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 2
    assert not (tmp_path / "out").exists()


def test_cli_run_show_report(tmp_path):
    out = tmp_path / "ref"
    proc = cli(
        "run",
        str(REFERENCE),
        "--seed",
        "4",
        "--set",
        "run.duration=1s",
        "--set",
        "run.warmup=0.1s",
        "--out",
        str(out),
        "--quiet",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert (out / "manifest.json").is_file()
    assert (out / "series" / "n1-n2.throughput.parquet").is_file()
    loaded = qossim.load(out)
    assert loaded.seed == 4
    assert loaded.manifest["events"] > 0
    proc = cli("show", str(out), cwd=tmp_path)
    assert proc.returncode == 0 and "n1-n2.throughput" in proc.stdout
    proc = cli("report", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    html = (out / "report" / "index.html").read_text()
    assert "http://" not in html and "https://" not in html


def test_cli_bad_override_names_the_flag(tmp_path):
    proc = cli("run", str(REFERENCE), "--set", "links.n1-n2.rate=fast", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--set:1: links.n1-n2.rate:" in proc.stderr


@pytest.mark.parametrize("backend", ["local", "dask", "ray"])
def test_real_campaign_identical_on_every_backend(tmp_path, backend):
    serial = campaign.run_campaign(
        EXAMPLE_CAMPAIGN, backend="local", jobs=1, progress=False, out=tmp_path / "serial"
    )
    other = campaign.run_campaign(
        EXAMPLE_CAMPAIGN, backend=backend, jobs=2, progress=False, out=tmp_path / backend
    )
    cols = [c for c in serial.columns if c not in ("run_key",) and "wall" not in c]
    a = serial[cols].sort_values(["traffic.0.flows", "seed"]).reset_index(drop=True)
    b = other[cols].sort_values(["traffic.0.flows", "seed"]).reset_index(drop=True)
    assert a.equals(b)
    assert len(a) == 6


def test_validation_study_quick_agrees_with_theory(tmp_path):
    proc = cli(
        "reproduce",
        "validation",
        "--quick",
        "--format",
        "json",
        "--out",
        str(tmp_path / "v"),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    records = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    inside = [r for r in records if r["column"] == "theory in CI"]
    assert inside, records[:3]
    assert (tmp_path / "v" / "index.html").is_file()


def test_an_engine_panic_is_a_qossim_error_naming_the_scenario(monkeypatch, tmp_path, capsys):
    """A panic inside a run reaches Python as EngineError naming the file; the CLI exits 1."""
    from qossim import _core
    from qossim.cli import main

    with pytest.raises(_core.EngineError, match="x.toml: internal engine error"):
        _core._panic_for_test("x.toml")

    def panicking_run(text, filename, *args, **kwargs):
        _core._panic_for_test(filename)  # the guard every run goes through

    monkeypatch.setattr(_core, "run", panicking_run)
    with pytest.raises(qossim.EngineError) as info:
        qossim.run(REFERENCE)
    assert str(info.value) == f"{REFERENCE}: internal engine error: deliberate test panic"
    assert isinstance(info.value, qossim.QossimError)
    assert main(["run", str(REFERENCE), "--out", str(tmp_path / "r"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"{REFERENCE}: internal engine error: deliberate test panic"
    assert not (tmp_path / "r").exists()


def test_a_scenario_too_big_for_the_machine_is_refused_up_front(tmp_path):
    """A billion static flows (168 GiB at 180 B each): refused before building, with the
    estimate; exit 2."""
    entries = "".join(
        f'\n[[traffic]]\nname = "v{i}"\nfrom = "n0"\nto = "n2"\nmodel = "CBR"\nflows = 10000000\n'
        for i in range(100)
    )
    scenario = tmp_path / "huge.toml"
    scenario.write_text(
        '[run]\nduration = "1s"\n\n[topology]\nkind = "chain"\nlength = 2\n'
        'rate = "10Gbps"\ndelay = "1ms"\n' + entries
    )
    # Refused at validation where the machine's memory is smaller, else just before the
    # run is built, where the memory available is.
    with pytest.raises((qossim.ScenarioError, qossim.RunError), match="needs about 167.6"):
        qossim.run(scenario)
    proc = cli("run", str(scenario), "--out", "r", "--quiet", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "needs about 167.6" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "r").exists()


def test_building_many_flows_reports_progress():
    """The engine reports how building a scenario of many flows advances (the progress
    bar's data); a small scenario builds silently."""
    from qossim import _engine
    from qossim.progress import build_progress

    def text(flows: int) -> str:
        return (
            '[run]\nduration = "1ms"\n[topology]\nkind = "chain"\nlength = 1\n'
            'rate = "10Mbps"\ndelay = "1ms"\n[[traffic]]\nname = "v"\nfrom = "n0"\n'
            f'to = "n1"\nmodel = "CBR"\nflows = {flows}\nper_flow = false\n'
        )

    def calls(flows: int) -> list[tuple[int, int]]:
        seen: list[tuple[int, int]] = []
        _engine.run_raw(
            text(flows), "s.toml", 1, [], None, build_progress=lambda d, t: seen.append((d, t))
        )
        return seen

    n = 70_000
    assert calls(n) == [(65_536, n), (n, n)]
    assert calls(1_000) == []
    # The bar takes the same calls without failing, and closes at the end.
    with build_progress(True, "s") as update:
        assert update is not None
        update(65_536, n)
        update(n, n)
    with build_progress(None, "s") as update:
        assert update is None


def test_a_traffic_entry_is_set_by_its_name():
    reference = Path(__file__).resolve().parents[1] / "scenarios" / "reference.toml"
    assert qossim.validate(reference, set={"traffic.voice.flows": 3}) == []
    (problem,) = qossim.validate(reference, set={"traffic.video.flows": 3})
    assert problem.startswith('--set:1: traffic.video.flows: no entry named "video"')
    (problem,) = qossim.validate(reference, set={"traffic.voice.flows": -3})
    assert problem.startswith("--set:1: traffic.0.flows:")
