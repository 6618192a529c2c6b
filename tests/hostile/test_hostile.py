"""Hostile inputs and faults, each run as a process under a memory and a time cap.

Every case of :data:`cases.CASES` (and the signal cases below) is sorted into one of:
clean (the expected exit status and first line), crash (killed by a signal, an internal
error or a traceback), hang (over its time cap), silent accept (exit 0 where a refusal
was due), data lost (a store that lacks the runs it should keep, or leftovers) or wrong
(any other answer). The counts are printed at the end of the session (see
``conftest.py``); every case must be clean.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import importlib.util
import os
import re
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from . import cases as C

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process limits and /proc are Linux's"
)

#: The address space a case may use (the interpreter, the engine and the data).
MEMORY_CAP = 3 << 30

OUTCOMES = ("clean", "crash", "hang", "silent accept", "data lost", "wrong")
#: Outcome of every case run in this session, by name (read by conftest.py).
TALLY: dict[str, str] = {}


#: The table's cases whose backend can be imported here.
CASES = tuple(c for c in C.CASES if c.needs is None or importlib.util.find_spec(c.needs))


def _limits(cap: int | None = MEMORY_CAP) -> None:
    if cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    os.setsid()  # its own session and process group: signals go to it alone


@contextlib.contextmanager
def _ray_env(env: dict[str, str]) -> Iterator[dict[str, str]]:
    """Ray in a temporary directory of its own (short: it holds sockets) with token
    authentication, removed afterwards."""
    temp = tempfile.mkdtemp(prefix="qr", dir="/tmp")
    env = dict(env, RAY_TMPDIR=temp, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token")
    env["RAY_AUTH_TOKEN"] = secrets.token_hex(16)
    try:
        yield env
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (a case's: it started it)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _orphans(sid: int, wait: float = 10.0) -> list[int]:
    """Processes of session ``sid`` still alive ``wait`` s after its leader ended (then
    killed)."""
    end = time.monotonic() + wait
    left = _session(sid)
    while left and time.monotonic() < end:
        time.sleep(0.2)
        left = _session(sid)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


def _env(extra: dict[str, str], folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("QOSSIM_FAKE_ENGINE", None)
    env.pop("QOSSIM_MEMORY_BUDGET", None)
    env.pop("QOSSIM_EVENT_MEMORY_LIMIT", None)
    # Few threads: numerical libraries reserve address space per thread.
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for k, v in extra.items():
        env[k] = str(folder / v) if k == "QOSSIM_FAKE_ENGINE" else v
    return env


def _command(case: C.Case) -> list[str]:
    if case.python:
        return [sys.executable, "-c", case.args[0]]
    return [sys.executable, "-m", "qossim", *case.args]


def _leftovers(case: C.Case, folder: Path) -> list[str]:
    """Names in the case folder that neither the case's files nor its keeps explain."""
    own = {p.split("/")[0] for p in case.files}
    extra = []
    for p in folder.iterdir():
        if p.name in own or any(fnmatch.fnmatch(p.name, k) for k in case.keeps):
            continue
        extra.append(p.name)
    # Inside a kept campaign directory: no temporary directories.
    for k in case.keeps:
        for p in folder.glob(f"{k}/**/*"):
            if ".tmp-" in p.name:
                extra.append(str(p.relative_to(folder)))
    return extra


def _stored(folder: Path) -> int:
    runs = folder / "out" / "runs"
    return sum(1 for p in runs.iterdir() if (p / "manifest.json").is_file()) if runs.is_dir() else 0


def classify(case: C.Case, folder: Path) -> tuple[str, str]:
    """Run one case in ``folder``; return its outcome and what was seen."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in case.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    cap = MEMORY_CAP if case.memory_cap is None else case.memory_cap
    with contextlib.ExitStack() as stack:
        env = _env(case.env, folder)
        if case.needs == "ray":
            env = stack.enter_context(_ray_env(env))
        proc = subprocess.Popen(
            _command(case),
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            preexec_fn=functools.partial(_limits, cap),
        )
        try:
            stdout, stderr = proc.communicate(timeout=case.timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            _orphans(proc.pid, 0)
            return "hang", f"over {case.timeout} s"
        orphans = _orphans(proc.pid)
    if orphans:
        return "data lost", f"exit {proc.returncode}; processes left behind: {orphans}"
    return _judge(
        case, folder, subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    )


def _judge(case: C.Case, folder: Path, proc: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    """Sort a finished case's answer into an outcome."""
    err = proc.stderr.splitlines()
    out = proc.stdout.splitlines()
    first = err[0] if err else (out[0] if out else "")
    seen = f"exit {proc.returncode}; first line {first[:300]!r}"
    if (
        proc.returncode < 0
        or proc.returncode not in (0, 1, 2, 130, 143)
        or "Traceback" in proc.stderr
        or "internal error" in proc.stderr
    ):
        return "crash", seen
    if proc.returncode == 0 and case.exit != 0:
        return "silent accept", seen
    if case.stored_runs is not None and _stored(folder) != case.stored_runs:
        return "data lost", f"{seen}; {_stored(folder)} runs stored, {case.stored_runs} due"
    left = _leftovers(case, folder)
    if left:
        return "data lost", f"{seen}; left behind: {left}"
    if proc.returncode != case.exit or not re.search(case.first, first):
        return "wrong", seen
    if case.max_lines is not None and len(err) > case.max_lines:
        return "wrong", f"{seen}; {len(err)} lines on stderr"
    for text in case.never:
        if text in proc.stderr or text in proc.stdout:
            return "wrong", f"{seen}; output holds {text!r}"
    return "clean", seen


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, str]]:
    """Every table case, run three at a time."""
    root = tmp_path_factory.mktemp("hostile")
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {c.name: pool.submit(classify, c, root / f"case{i}") for i, c in enumerate(CASES)}
        return {name: f.result() for name, f in futures.items()}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: C.Case, results: dict[str, tuple[str, str]]) -> None:
    outcome, seen = results[case.name]
    TALLY[case.name] = outcome
    assert outcome == "clean", f"{case.name}: {outcome}: {seen}"


# -- signals: each case is a process and an action on it ------------------------------

_SLOW = C.BASE.replace("flows = 100", "flows = 20000").replace('"20s"', '"30s"')


def _start(
    args: list[str],
    folder: Path,
    files: dict[str, str],
    env: dict[str, str] | None = None,
    cap: int | None = MEMORY_CAP,
) -> subprocess.Popen[str]:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "qossim", *args],
        cwd=folder,
        env=env if env is not None else _env({}, folder),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=functools.partial(_limits, cap),
    )


def _children(pid: int) -> list[int]:
    try:
        tasks = Path(f"/proc/{pid}/task").iterdir()
        return [int(c) for t in tasks for c in (t / "children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_workers(pid: int, n: int, limit: float) -> list[int]:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        kids = [k for k in _children(pid) if _alive(k)]
        # The pool's workers (a resource tracker may be among the children too).
        if len(kids) >= n:
            return kids
        time.sleep(0.1)
    return [k for k in _children(pid) if _alive(k)]


def _sweep_files() -> dict[str, str]:
    return {"s.toml": _SLOW, "c.toml": C._campaign("s.toml", seeds="[1, 2, 3, 4, 5, 6]")}


def _signal_case(name: str, sig: int, group: bool, tmp: Path) -> tuple[str, str]:
    folder = tmp / name.replace(" ", "_")
    folder.mkdir()
    proc = _start(
        ["sweep", "c.toml", "--quiet", "--out", "out", "--jobs", "2"], folder, _sweep_files()
    )
    workers = _wait_workers(proc.pid, 2, 20.0)
    time.sleep(0.5)
    if group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        os.killpg(proc.pid, signal.SIGKILL)
        return "hang", "the sweep did not stop"
    deadline = time.monotonic() + 5
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [w for w in workers if _alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    first = err.splitlines()[0] if err.strip() else ""
    seen = f"exit {proc.returncode}; first line {first[:300]!r}"
    if left:
        return "data lost", f"{seen}; workers left running: {left}"
    temps = [str(p) for p in folder.glob("out/**/*") if ".tmp-" in p.name]
    if sig == signal.SIGKILL:
        return ("clean" if not workers or not left else "wrong"), seen
    if temps:
        return "data lost", f"{seen}; temporary files left: {temps}"
    if proc.returncode == 0:
        return "silent accept", seen
    want = rf"^out: interrupted by {signal.Signals(sig).name}: \d+ of 6 runs are stored"
    if proc.returncode != 128 + sig or not re.search(want, first):
        return "wrong", seen
    return "clean", seen


SIGNAL_CASES = (
    ("Ctrl-C to the sweep's process group", signal.SIGINT, True),
    ("SIGTERM to the sweep's main process", signal.SIGTERM, False),
    ("kill -9 of the sweep's main process", signal.SIGKILL, False),
)


@pytest.mark.parametrize("name,sig,group", SIGNAL_CASES, ids=[c[0] for c in SIGNAL_CASES])
def test_signal(name: str, sig: int, group: bool, tmp_path: Path) -> None:
    outcome, seen = _signal_case(name, sig, group, tmp_path)
    TALLY[name] = outcome
    assert outcome == "clean", f"{name}: {outcome}: {seen}"


def test_signal_during_a_long_build(tmp_path: Path) -> None:
    """SIGINT while a scenario of a million flows is being built stops it."""
    name = "Ctrl-C while a million flows are built"
    text = C.BASE.replace("flows = 100", "flows = 3000000").replace("[[metric]]", "[[metricx]]")
    text = text.split("[[metricx]]")[0]
    proc = _start(["run", "s.toml", "--quiet", "--out", "out"], tmp_path, {"s.toml": text})
    time.sleep(2.5)
    start = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        TALLY[name] = "hang"
        pytest.fail(f"{name}: hang")
    took = time.monotonic() - start
    outcome = "clean"
    if proc.returncode == 0:
        outcome = "silent accept"
    elif proc.returncode != 130 or "interrupted" not in err or took > 5:
        outcome = "wrong"
    if (tmp_path / "out").exists():
        outcome = "data lost"
    TALLY[name] = outcome
    assert outcome == "clean", f"{name}: exit {proc.returncode} after {took:.1f} s: {err!r}"


# -- signals to a sweep on a Dask or Ray cluster started by the sweep ----------------

BACKEND_SIGNAL_CASES = tuple(
    (f"{how} to a {backend} sweep", backend, module, sig, group)
    for backend, module in (("dask", "distributed"), ("ray", "ray"))
    for how, sig, group in (
        ("Ctrl-C", signal.SIGINT, True),
        ("SIGTERM", signal.SIGTERM, False),
        ("kill -9", signal.SIGKILL, False),
    )
    # Not yet for Ray: its dashboard and runtime-environment agents outlive a driver
    # killed with SIGKILL (they do not share its fate, unlike Ray's other processes).
    if (backend, sig) != ("ray", signal.SIGKILL)
)


def _backend_signal_case(backend: str, sig: int, group: bool, folder: Path) -> tuple[str, str]:
    with contextlib.ExitStack() as stack:
        env = _env({}, folder)
        if backend == "ray":
            env = stack.enter_context(_ray_env(env))
        args = ["sweep", "c.toml", "--quiet", "--out", "out", "--jobs", "2", "--backend", backend]
        cap = 0 if backend == "ray" else MEMORY_CAP
        proc = _start(args, folder, _sweep_files(), env, cap)
        # Once a run has started (its temporary directory is there), the cluster is up.
        end = time.monotonic() + 150
        while not _started(folder) and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.2)
        time.sleep(1.0)
        if proc.poll() is not None:
            _, err = proc.communicate()
            return "wrong", f"ended before the signal: exit {proc.returncode}: {err[-500:]!r}"
        if group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            _orphans(proc.pid, 0)
            return "hang", "the sweep did not stop"
        left = _orphans(proc.pid)
    first = err.splitlines()[0] if err.strip() else ""
    seen = f"exit {proc.returncode}; first line {first[:300]!r}"
    if left:
        return "data lost", f"{seen}; processes left behind: {left}"
    if sig == signal.SIGKILL:
        # Nothing can be tidied by a process killed so; the next sweep removes its
        # temporary files. What matters: the cluster went with it.
        return "clean", seen
    temps = [str(p) for p in folder.glob("out/**/*") if ".tmp-" in p.name]
    if temps:
        return "data lost", f"{seen}; temporary files left: {temps}"
    if proc.returncode == 0:
        return "silent accept", seen
    if "Traceback" in err:
        return "crash", f"{seen}; {err[-800:]!r}"
    want = rf"^out: interrupted by {signal.Signals(sig).name}: (\d+) of 6 runs are stored"
    match = re.search(want, first)
    if proc.returncode != 128 + sig or not match:
        return "wrong", f"{seen}; {err[-800:]!r}"
    if int(match.group(1)) != _stored(folder):
        return "data lost", f"{seen}; {_stored(folder)} runs stored"
    return "clean", seen


def _started(folder: Path) -> bool:
    """True once a run of the sweep in ``folder`` has started or been stored."""
    runs = folder / "out" / "runs"
    return runs.is_dir() and any(".tmp-" in p.name or p.is_dir() for p in runs.iterdir())


@pytest.mark.parametrize(
    "name,backend,module,sig,group",
    BACKEND_SIGNAL_CASES,
    ids=[c[0] for c in BACKEND_SIGNAL_CASES],
)
def test_backend_signal(
    name: str, backend: str, module: str, sig: int, group: bool, tmp_path: Path
) -> None:
    """A sweep on a cluster it started stops on Ctrl-C or SIGTERM: exit 130 or 143,
    every stored run kept, nothing of the cluster left running; killed with SIGKILL, it
    leaves nothing of the cluster running either."""
    if not importlib.util.find_spec(module):
        pytest.skip(f"{module} is not installed")
    outcome, seen = _backend_signal_case(backend, sig, group, tmp_path)
    TALLY[name] = outcome
    assert outcome == "clean", f"{name}: {outcome}: {seen}"
