"""An abi3 wheel installs into a fresh virtual environment and runs a scenario there.

Users who only run studies install a wheel, not the source tree; this builds one
with maturin, installs it (without the source tree on the path) and checks that the
installed engine gives the same result as the one under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "reference.toml"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the abi3 wheel once for this module."""
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run(
        [sys.executable, "-m", "maturin", "build", "--release", "--quiet", "--out", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    wheels = sorted(out.glob("qossim-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _fresh_env(where: Path, wheel: Path) -> Path:
    """A virtual environment holding the wheel; its dependencies come from this one.

    The dependencies (numpy, pandas, ...) are reached through a ``.pth`` line naming
    this environment's site-packages, whose own ``.pth`` files (among them the
    editable install of the source tree) a ``.pth`` line does not process.
    """
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "_deps.pth").write_text("".join(f"{d}\n" for d in sorted(deps)))
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        + ["--no-deps", "--disable-pip-version-check", str(wheel)],
        check=True,
        capture_output=True,
    )
    return python


def test_wheel_is_abi3(wheel: Path) -> None:
    """One wheel for every CPython from 3.11 on."""
    assert "-cp311-abi3-" in wheel.name


def test_wheel_runs_a_scenario(wheel: Path, tmp_path: Path) -> None:
    """The installed command and module run the reference scenario like the tree does."""
    python = _fresh_env(tmp_path / "env", wheel)
    where = subprocess.run(
        [str(python), "-c", "import qossim, qossim._core as c; print(qossim.__file__, c.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout.split()
    assert all(Path(p).is_relative_to(tmp_path / "env") for p in where), where
    out = tmp_path / "run"
    settings = ["--set", "run.duration=0.5s", "--set", "run.warmup=0.1s", "--seed", "3"]
    proc = subprocess.run(
        [str(tmp_path / "env" / "bin" / "qossim"), "run", str(SCENARIO), *settings]
        + ["--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    installed = json.loads((out / "summary.json").read_text())

    import qossim

    here = qossim.run(SCENARIO, seed=3, set={"run.duration": "0.5s", "run.warmup": "0.1s"}).summary
    assert installed == json.loads(json.dumps(here))


def test_wheel_ships_the_published_results(wheel: Path) -> None:
    """Every study's published tables ship inside the package, as in the source tree."""
    import zipfile

    from qossim.studies import published

    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = sorted(p for p in published.DATA_DIR.rglob("*") if p.is_file())
    assert shipped
    for path in shipped:
        inside = "qossim/" + path.relative_to(published.DATA_DIR.parents[1]).as_posix()
        assert inside in names, f"{inside} is not in the wheel"
