"""Packet traces through the compiled engine: Parquet, pcap read back by a pcap library,
the readable view, traces kept by campaigns, and runs unchanged by tracing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dpkt
import pandas as pd
import pytest

import qossim
from qossim import campaign, traces

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = (ROOT / "scenarios" / "reference.toml").read_text()
CODEL = (ROOT / "scenarios" / "codel.toml").read_text()
SHORT = {"run.duration": "1.2s"}

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="needs the real engine"
)

ONE_FLOW = '\n[[trace]]\nname = "voice7"\nflows = [7]\npcap = true\n'


def _pcap(path: Path) -> list[tuple[float, dpkt.ip.IP]]:
    with path.open("rb") as f:
        reader = dpkt.pcap.Reader(f)
        assert reader.datalink() == dpkt.pcap.DLT_RAW or reader.datalink() == 101
        return [(ts, dpkt.ip.IP(buf)) for ts, buf in reader]


def test_one_flow_of_the_reference_scenario(tmp_path):
    """Every packet of flow 7 crosses both hops in order; the pcap holds the same packets."""
    plain = qossim.run_text(REFERENCE, seed=3, set=SHORT)
    res = qossim.run_text(REFERENCE + ONE_FLOW, seed=3, set=SHORT)
    assert res.summary == plain.summary, "tracing changed the run"
    frame = res.trace()
    assert set(frame["flow"]) == {7}
    sent = frame[frame["event"] == "enqueue"]["seq"].nunique()
    assert sent >= 55  # one packet per 20 ms for 1.2 s, whatever the phase
    path = ["enqueue", "transmit", "arrival", "enqueue", "transmit", "arrival", "deliver"]
    where = ["n0-n1", "n0-n1", "n0-n1", "n1-n2", "n1-n2", "n1-n2", ""]
    complete = 0
    for _, packet in frame.groupby("seq"):
        events = packet["event"].tolist()
        if events == path:
            assert packet["link"].tolist() == where
            assert packet["node"].iloc[-1] == "n2"
            # 160 B at 10 Gb/s plus 1 ms, then queueing at the bottleneck, 160 B at
            # 155.52 Mb/s plus 1 ms: the one-way delay is at least their sum.
            delay = packet["t_ps"].iloc[-1] - packet["t_ps"].iloc[0]
            assert delay >= 128_000 + 1_000_000_000 + 8_230_453 + 1_000_000_000
            complete += 1
        else:  # still on the way at the end of the run
            assert events == path[: len(events)]
    assert complete >= sent - 1
    saved = res.save(tmp_path / "run")
    again = qossim.Result.load(saved)
    pd.testing.assert_frame_equal(again.trace("voice7"), frame)
    pcap = _pcap(saved / "traces" / "voice7.pcap")
    assert len(pcap) == len(frame)
    for (ts, ip), row in zip(pcap, frame.to_dict("records"), strict=True):
        assert abs(float(ts) - row["t"]) < 2e-9
        assert ip.len == row["size"] == 160
        assert ip.p == dpkt.ip.IP_PROTO_UDP
        assert (ip.src, ip.dst) == (bytes([10, 0, 0, 1]), bytes([10, 0, 0, 3]))  # n0 -> n2


def test_tcp_flow_pcap_and_drop_causes(tmp_path):
    """A TCP flow's segments and acknowledgements become TCP packets; CoDel's drops say early."""
    extra = '\n[[trace]]\nname = "ftp0"\nflows = [0]\nlinks = ["r0-r1"]\npcap = true\n'
    res = qossim.run_text(CODEL + extra, seed=1, set={"run.duration": "6s"})
    frame = res.trace()
    assert set(frame["link"]) == {"r0-r1"}
    drops = frame[frame["event"] == "drop"]
    assert len(drops) > 0 and set(drops["cause"]) == {"early"}
    assert drops["flow"].eq(0).all()
    saved = res.save(tmp_path / "run")
    pcap = _pcap(saved / "traces" / "ftp0.pcap")
    assert len(pcap) == len(frame)
    data = frame[frame["kind"] == "data"]
    tcp = [ip.data for _, ip in pcap if ip.p == dpkt.ip.IP_PROTO_TCP]
    assert len(tcp) == len(pcap)
    assert sorted(t.seq for t in tcp) == sorted(int(s) for s in data["seq"])


def test_batches_give_the_same_parquet(tmp_path, monkeypatch):
    """Converting in small batches (bounded memory) gives the same table as in one."""
    whole = qossim.run_text(REFERENCE + "\n[[trace]]\n", seed=2, set={"run.duration": "1.05s"})
    monkeypatch.setattr(traces, "_BATCH", 1000)
    small = qossim.run_text(REFERENCE + "\n[[trace]]\n", seed=2, set={"run.duration": "1.05s"})
    one, many = whole.trace(), small.trace()
    assert len(one) > 10_000
    pd.testing.assert_frame_equal(one, many)


def test_view_and_pcap_stream_in_small_batches(tmp_path):
    """The streaming readers give what reading the whole trace gives: `view_trace` the
    first records of the sorted, filtered table and their total; `write_pcap` with runs of
    1 000 records merged the same bytes as with one run of the whole trace."""
    res = qossim.run_text(
        REFERENCE + "\n[[trace]]\n", seed=2, set={"run.duration": "0.6s", "run.warmup": "0.1s"}
    )
    path = res.trace_path()
    whole = traces.read_trace(path)
    assert len(whole) > 10_000
    for flow, events, limit in (
        (None, None, 200),
        (None, None, 5000),
        (7, None, 10),
        (7, ["deliver", "arrival"], 10_000),
        (None, ["transmit"], 1),
        (123456, None, 5),
    ):
        want = whole if flow is None else whole[whole["flow"] == flow]
        if events:
            want = want[want["event"].isin(events)]
        got, total = traces.view_trace(path, flow=flow, events=events, limit=limit, batch=1000)
        assert total == len(want)
        pd.testing.assert_frame_equal(got, want.head(limit).reset_index(drop=True))
    assert traces.traced_flows(path, batch=1000) == sorted(int(f) for f in whole["flow"].unique())
    one, many = tmp_path / "one.pcap", tmp_path / "many.pcap"
    assert traces.write_pcap(path, one, batch=10**9) == len(whole)
    assert traces.write_pcap(path, many, batch=1000) == len(whole)
    assert one.read_bytes() == many.read_bytes()
    stamps = [ts for ts, _ in _pcap(many)]
    assert stamps == sorted(stamps) and len(stamps) == len(whole)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.pcap", "one.pcap"]


def test_cli_view_and_campaign_runs_keep_their_traces(tmp_path):
    """`qossim trace` prints a readable view; a campaign's run directories hold the trace."""
    scenario = tmp_path / "s.toml"
    scenario.write_text(REFERENCE + ONE_FLOW)
    (tmp_path / "c.toml").write_text(
        '[campaign]\nname = "t"\nscenario = "s.toml"\nseeds = 1\n\n[set]\n'
        '"run.duration" = "1.2s"\n\n[grid]\n"traffic.0.flows" = [100]\n'
    )
    table = campaign.run_campaign(tmp_path / "c.toml", out=tmp_path / "camp", jobs=1)
    run_dir = tmp_path / "camp" / "runs" / table["run_key"].iloc[0]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["traces"] == {
        "voice7.parquet": "traces/voice7.parquet",
        "voice7.pcap": "traces/voice7.pcap",
    }
    assert not [p for p in (tmp_path / "camp" / "runs").iterdir() if "traces-" in p.name]
    env = dict(os.environ)
    env.pop("QOSSIM_FAKE_ENGINE", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "qossim",
            "trace",
            str(run_dir),
            "--event",
            "deliver",
            "--limit",
            "3",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["time", "(s)", "event"]
    assert len(lines) == 5 and lines[4].startswith("... ")
    assert all(line.split()[1:3] == ["deliver", "n2"] for line in lines[1:4])
    bad = subprocess.run(
        [sys.executable, "-m", "qossim", "trace", str(run_dir), "--name", "nope"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == f"{run_dir}: no packet trace 'nope' (recorded: voice7)"
    for flow, message in (
        ("99", f"{run_dir}: --flow 99: no record of this flow in the trace (flows traced: 7)"),
        ("99999999999999999999999", "a flow id is from 0 to 2^63 - 1"),
    ):
        unknown = subprocess.run(
            [sys.executable, "-m", "qossim", "trace", str(run_dir), "--flow", flow],
            capture_output=True,
            text=True,
            env=env,
        )
        assert unknown.returncode == 2, unknown.stderr
        assert message in unknown.stderr and not unknown.stdout


def test_trace_errors_name_file_and_line(tmp_path):
    """A mistake in [[trace]] is one FILE:LINE: key: reason diagnostic; nothing is run."""
    text = REFERENCE + '\n[[trace]]\nlinks = ["n1-n9"]\n'
    line = len(text.splitlines())
    with pytest.raises(qossim.ScenarioError) as info:
        qossim.run_text(text, filename="ref.toml")
    lines = str(info.value).splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        f'ref.toml:{line}: trace.0.links.0: unknown link "n1-n9"; links are: '
    )
