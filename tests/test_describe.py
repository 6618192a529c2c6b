"""``qossim describe`` and the generated reference tables of docs/scenarios.md.

Both come from the engine's declarations of its components' parameters; these tests
check what the command prints and that the documentation's tables are current.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qossim import describe
from qossim.cli import main

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="the declarations live in the real engine"
)


def test_every_registered_queue_kind_is_listed(capsys):
    assert main(["describe"]) == 0
    out = capsys.readouterr().out
    names = [k["kind"] for k in describe.kinds()]
    assert {"queue.droptail", "queue.red", "queue.codel", "queue.pie", "queue.fq_codel"} <= set(
        names
    )
    assert {"meter.policer", "meter.token_bucket", "meter.tsw"} <= set(names)
    for name in names:
        assert name in out


def test_one_kind_prints_units_defaults_and_bounds(capsys):
    assert main(["describe", "queue.pie"]) == 0
    out = capsys.readouterr().out
    target = next(line for line in out.splitlines() if line.strip().startswith("target"))
    assert target.split()[:5] == ["target", "time", "s", "15ms", "(0,"]
    alpha = next(line for line in out.splitlines() if line.strip().startswith("alpha"))
    assert alpha.split()[:5] == ["alpha", "number", "1/s", "0.125", "[0,"]
    # A bare name and an alias find their kind too.
    assert main(["describe", "red"]) == 0
    assert "min_th" in capsys.readouterr().out
    assert main(["describe", "fifo"]) == 0
    assert "queue.droptail" in capsys.readouterr().out


def _row(out: str, key: str) -> list[str]:
    """The first five columns of ``key``'s row in a kind's table."""
    return next(line for line in out.splitlines() if line.strip().startswith(key)).split()[:5]


def test_traffic_models_and_family_sections_are_listed(capsys):
    names = {k["kind"] for k in describe.kinds()}
    models = {"traffic.cbr", "traffic.onoff", "traffic.poisson", "traffic.trace", "traffic.tcp"}
    assert models | {"traffic.calls", "traffic.G.711-VBR-20ms", "traffic.MIX"} <= names
    assert {"family.abr", "family.rpr"} <= names
    assert main(["describe", "traffic.tcp"]) == 0
    out = capsys.readouterr().out
    assert 'written: model = "tcp"' in out
    assert _row(out, "min_rto") == ["min_rto", "time", "s", "200ms", ">"]
    assert _row(out, "congestion")[:4] == ["congestion", "choice", "-", "reno"]
    assert main(["describe", "traffic.onoff"]) == 0
    assert _row(capsys.readouterr().out, "on") == ["on", "distribution", "s", "exp:500ms", "mean"]
    assert main(["describe", "family.abr"]) == 0
    out = capsys.readouterr().out
    assert "written: [abr]" in out
    assert _row(out, "nrm") == ["nrm", "integer", "cells", "32", "[2,"]


def test_the_pcn_section_and_its_tables_are_listed(capsys):
    tables = ("thresholds", "cle", "termination", "traffic", "iea")
    names = {k["kind"] for k in describe.kinds()}
    assert {"family.pcn"} | {f"family.pcn.{t}" for t in tables} <= names
    assert main(["describe", "family.pcn"]) == 0
    out = capsys.readouterr().out
    assert "written: [pcn]" in out
    assert _row(out, "ra") == ["ra", "rate", "or", "fraction", "bit/s"]
    assert _row(out, "sample_interval") == ["sample_interval", "time", "s", "50ms", ">"]
    # Each table of [pcn] is a key of [pcn] and a section of its own.
    keys = {line.split()[0] for line in out.splitlines()[4:] if line.strip()}
    assert set(tables) <= keys
    assert main(["describe", "family.pcn.termination"]) == 0
    out = capsys.readouterr().out
    assert _row(out, "rt")[:5] == ["rt", "rate", "or", "fraction", "bit/s"]
    assert _row(out, "depth")[:5] == ["depth", "count", "or", "size", "packets"]


def test_the_core_sections_print_units_defaults_and_bounds(capsys):
    names = {k["kind"] for k in describe.kinds()}
    assert {"core.run", "core.traffic"} <= names
    assert main(["describe", "core.traffic"]) == 0
    out = capsys.readouterr().out
    assert "written: [[traffic]]" in out
    assert _row(out, "jitter") == ["jitter", "number", "-", "0", "[0,"]
    assert _row(out, "start") == ["start", "time", "s", "0s", "any"]
    assert _row(out, "name")[:4] == ["name", "string", "-", "required"]
    assert main(["describe", "core.run"]) == 0
    out = capsys.readouterr().out
    assert _row(out, "duration") == ["duration", "time", "s", "required", ">"]
    # Each core section's table sits in a block of its own in the reference.
    doc = (ROOT / "docs" / "scenarios.md").read_text()
    for name in ("core.run", "core.traffic"):
        assert describe.begin_mark(name) in doc


def test_the_core_topology_kinds_print_their_keys(capsys):
    core = ("single_link", "dumbbell", "merging", "star", "parking_lot", "chain", "tree", "ring")
    names = {k["kind"] for k in describe.kinds()}
    assert {f"topology.{k}" for k in (*core, "graph", "graph.link")} <= names
    assert main(["describe", "topology.dumbbell"]) == 0
    out = capsys.readouterr().out
    assert 'written: kind = "dumbbell"' in out
    assert _row(out, "hosts") == ["hosts", "integer", "-", "required", "[1,"]
    assert _row(out, "delay") == ["delay", "time", "s", "1ms", "any"]
    assert main(["describe", "topology.merging"]) == 0
    assert _row(capsys.readouterr().out, "bottleneck_rate") == [
        "bottleneck_rate",
        "rate",
        "bit/s",
        "T1",
        ">",
    ]
    # The kinds' tables sit in one block of the reference, under [topology].
    doc = (ROOT / "docs" / "scenarios.md").read_text()
    block = doc[
        doc.index(describe.begin_mark("topology")) : doc.index(describe.end_mark("topology"))
    ]
    for kind in core:
        assert f'`kind = "{kind}"`' in block
    assert doc.index("## `[topology]`") < doc.index(describe.begin_mark("topology"))


def test_markdown_without_a_kind_prints_every_generated_block(capsys):
    assert main(["describe", "--markdown"]) == 0
    out = capsys.readouterr().out
    for block in describe.blocks():
        assert describe.begin_mark(block) in out and describe.end_mark(block) in out


def test_declared_entries_and_lists_are_described(capsys):
    names = {k["kind"] for k in describe.kinds()}
    entries = {"family.abr.vc", "family.endpoint.probe", "family.endpoint.mbac"}
    assert entries | {"family.endpoint.virtual_queue"} <= names
    assert main(["describe", "family.endpoint.virtual_queue"]) == 0
    out = capsys.readouterr().out
    assert "written: [[endpoint.virtual_queue]]" in out
    assert _row(out, "fraction") == ["fraction", "number", "fraction", "0.9", "(0,"]
    assert main(["describe", "family.rpr"]) == 0
    watch = next(line for line in capsys.readouterr().out.splitlines() if "watch" in line)
    assert watch.split()[:5] == ["watch", "list", "of", "strings", "-"]


def test_an_unknown_kind_lists_the_known_ones(capsys):
    assert main(["describe", "queue.wred"]) == 2
    err = capsys.readouterr().err
    assert "unknown kind 'queue.wred'" in err and "queue.pie" in err


def test_the_reference_tables_in_the_docs_are_current():
    doc = (ROOT / "docs" / "scenarios.md").read_text()
    assert describe.splice_all(doc) == doc, (
        "docs/scenarios.md's generated tables are stale: run scripts/gen_docs.py"
    )


def test_the_generator_reports_drift(tmp_path):
    doc = (ROOT / "docs" / "scenarios.md").read_text()
    stale = doc.replace("| `target` | time | s | 15ms |", "| `target` | time | s | 20ms |", 1)
    assert stale != doc
    assert describe.splice_all(stale) == doc
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
