"""A real two-node cluster on this machine: Ray and Dask, losing a worker mid-campaign.

Each node is its own group of processes limited to one CPU: a Ray head and a Ray worker
node (``ray start --head`` / ``ray start --address``), or a Dask scheduler and two Dask
workers. A campaign of the real engine runs on the cluster through ``qossim sweep
--backend ray|dask --address``; once the first run is stored, every process of one
worker node (its whole session) is killed with SIGKILL. The campaign must still finish,
on what is left, with exactly the table a local sweep gives. This is the recipe of
``docs/campaigns.md`` ("A two-node cluster on one machine, losing a node").
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from qossim.campaign import gather

ROOT = Path(__file__).resolve().parent.parent

#: Long enough per run (about two seconds) that the kill lands mid-campaign.
CAMPAIGN = """\
[campaign]
name = "cluster"
scenario = "{scenario}"
seeds = 8
metrics = ["link.n1-n2.utilization", "group.voice.delay_mean_s"]

[set]
"run.duration" = "16s"
"run.warmup" = "0.5s"
"""

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="needs the real engine"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _group(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """Start ``args`` as its own process group; kill the whole group on the way out."""
    with open(log, "wb") as out:
        p = subprocess.Popen(
            args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield p
    finally:
        _kill_session(p.pid)
        p.wait(timeout=30)


def _kill_session(sid: int) -> int:
    """SIGKILL every process of session ``sid`` (a node: Ray puts each task worker in a
    process group of its own, but in the node's session); return how many."""
    killed = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(stat.parent.name), signal.SIGKILL)
                killed += 1
    return killed


def _campaign(tmp_path: Path) -> Path:
    f = tmp_path / "campaign.toml"
    f.write_text(CAMPAIGN.format(scenario=(ROOT / "scenarios" / "reference.toml").as_posix()))
    return f


def _sweep(campaign: Path, out: Path, env: dict[str, str], *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "qossim", "sweep", str(campaign), "--out", str(out), *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stored(out: Path) -> int:
    runs = out / "runs"
    return sum(1 for d in runs.iterdir() if (d / "manifest.json").exists()) if runs.exists() else 0


def _kill_when_stored(sweep: subprocess.Popen, out: Path, victim: subprocess.Popen) -> int:
    """Kill ``victim``'s process group once a run is stored; return runs stored then."""
    deadline = time.monotonic() + 300
    while _stored(out) < 1:
        assert sweep.poll() is None, sweep.communicate()
        assert time.monotonic() < deadline, "no run was stored in 300 s"
        time.sleep(0.2)
    stored = _stored(out)
    assert _kill_session(victim.pid) > 0
    return stored


def _finish(sweep: subprocess.Popen) -> None:
    stdout, stderr = sweep.communicate(timeout=600)
    assert sweep.returncode == 0, f"sweep failed ({sweep.returncode}):\n{stdout}\n{stderr}"


def _same_as_local(campaign: Path, out: Path, tmp_path: Path, env: dict[str, str]) -> None:
    local = tmp_path / "local"
    _finish(_sweep(campaign, local, env, "--jobs", "2"))
    got, want = gather(out), gather(local)
    assert len(got) == len(want) == 8
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.ray
def test_ray_two_nodes_lose_the_worker_node_and_finish_on_the_head(tmp_path):
    pytest.importorskip("ray")
    env = {
        **os.environ,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": secrets.token_hex(16),
    }
    port = _free_port()
    # A temporary directory of its own (short: Ray puts sockets in it): `ray start
    # --head` records the cluster's address there, and a record left in Ray's default
    # directory would make later local `ray.init` calls try to join this dead cluster.
    temp = tempfile.mkdtemp(prefix="qr", dir="/tmp")
    ray = [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]
    node = ["--num-cpus", "1", "--object-store-memory", str(100 * 2**20), "--block"]
    node += ["--disable-usage-stats", "--temp-dir", temp]
    head_args = [*ray, "start", "--head", "--port", str(port), "--include-dashboard", "false"]
    worker_args = [*ray, "start", "--address", f"127.0.0.1:{port}"]
    with (
        _group([*head_args, *node], env, tmp_path / "head.log"),
        _group([*worker_args, *node], env, tmp_path / "worker.log") as worker,
    ):
        # Both nodes joined: the cluster offers two CPUs.
        probe = (
            "import ray, time\n"
            f"ray.init(address='127.0.0.1:{port}', log_to_driver=False)\n"
            "t = time.monotonic()\n"
            "while ray.cluster_resources().get('CPU', 0) < 2 and time.monotonic() - t < 120:\n"
            "    time.sleep(0.5)\n"
            "print(ray.cluster_resources().get('CPU', 0))\n"
        )
        cpus = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300
        )
        assert cpus.stdout.strip().splitlines()[-1:] == ["2.0"], cpus.stdout + cpus.stderr
        campaign = _campaign(tmp_path)
        out = tmp_path / "ray"
        sweep = _sweep(campaign, out, env, "--backend", "ray", "--address", f"127.0.0.1:{port}")
        stored = _kill_when_stored(sweep, out, worker)
        assert stored < 8, "the campaign ended before the worker node was killed"
        _finish(sweep)
    shutil.rmtree(temp, ignore_errors=True)
    assert not Path("/tmp/ray/ray_current_cluster").exists() or _not_ours(port)
    _same_as_local(campaign, out, tmp_path, env)


def _not_ours(port: int) -> bool:
    """True if Ray's default address record names another cluster than ours."""
    return not Path("/tmp/ray/ray_current_cluster").read_text().strip().endswith(f":{port}")


@pytest.mark.dask
def test_dask_scheduler_and_two_workers_lose_one_worker_and_finish(tmp_path):
    pytest.importorskip("distributed")
    env = dict(os.environ)
    port = _free_port()
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    worker = [sys.executable, "-m", "distributed.cli.dask_worker", f"tcp://127.0.0.1:{port}"]
    worker += ["--nthreads", "1", "--nworkers", "1", "--no-dashboard"]
    with (
        _group([*dask, "--port", str(port), "--no-dashboard"], env, tmp_path / "sched.log"),
        _group(worker, env, tmp_path / "w1.log") as first,
        _group(worker, env, tmp_path / "w2.log"),
    ):
        from distributed import Client

        with Client(f"tcp://127.0.0.1:{port}", timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
        campaign = _campaign(tmp_path)
        out = tmp_path / "dask"
        sweep = _sweep(
            campaign, out, env, "--backend", "dask", "--address", f"tcp://127.0.0.1:{port}"
        )
        stored = _kill_when_stored(sweep, out, first)
        assert stored < 8, "the campaign ended before the worker was killed"
        _finish(sweep)
    _same_as_local(campaign, out, tmp_path, env)
