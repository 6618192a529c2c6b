"""Every example in README.md and docs/*.md runs as written.

Shell examples are the fenced blocks marked ``sh`` (each line one command, ``#``
comments allowed) and ``console`` (lines starting ``$ `` are commands, the others their
output); Python examples are the blocks marked ``python``. The blocks of one file run in
order, in one scratch folder that shows the repository's ``scenarios``, ``studies`` and
``docs`` (so that one example can read what an earlier one wrote), with the ``qossim``
command of the environment under test.

A block may be skipped only with its reason, written in the document right before it:
``<!-- example: skip because ... -->``. Blocks of other languages (toml, text, rust)
are data, not examples.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = re.compile(r"<!--\s*example:\s*skip\s+(?P<why>.*?)\s*-->")
FENCE = re.compile(r"^```(?P<lang>[A-Za-z]*)\s*$")
TIMEOUT_S = 300

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="examples run the real engine"
)


@dataclass(frozen=True)
class Block:
    """One fenced block of a document."""

    doc: Path
    line: int
    lang: str
    text: str
    skip: str | None

    def commands(self) -> list[str]:
        """The shell commands of a ``sh`` or ``console`` block."""
        out = []
        for raw in self.text.splitlines():
            line = raw.strip()
            if self.lang == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            if line and not line.startswith("#"):
                out.append(line)
        return out


def blocks(doc: Path) -> list[Block]:
    """Every fenced block of ``doc``, with the skip reason written before it."""
    out: list[Block] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group("lang").lower()
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        before = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        why = SKIP.search(before)
        out.append(Block(doc, start + 1, lang, "\n".join(lines[i + 1 : j]), why and why["why"]))
        i = j + 1
    return out


def examples(doc: Path) -> list[Block]:
    """The runnable blocks of ``doc``."""
    return [b for b in blocks(doc) if b.lang in ("sh", "bash", "console", "python")]


def _scratch(tmp: Path) -> dict[str, str]:
    for name in ("scenarios", "studies", "docs"):
        (tmp / name).symlink_to(ROOT / name, target_is_directory=True)
    env = dict(os.environ)
    env.pop("QOSSIM_FAKE_ENGINE", None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    return env


def _run(block: Block, tmp: Path, env: dict[str, str]) -> None:
    where = f"{block.doc.relative_to(ROOT)}:{block.line}"
    if block.lang == "python":
        script = tmp / "example.py"
        script.write_text(block.text + "\n", encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        assert done.returncode == 0, f"{where}: python example failed:\n{done.stderr[-3000:]}"
        return
    for command in block.commands():
        done = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {command}"],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        assert done.returncode == 0, (
            f"{where}: `{command}` exited {done.returncode}:\n{done.stderr[-3000:]}"
        )


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_every_example_of_the_document_runs(doc, tmp_path):
    runnable = examples(doc)
    env = _scratch(tmp_path)
    for block in runnable:
        if block.skip is not None:
            assert block.skip.strip(), f"{doc.name}:{block.line}: a skip states its reason"
            continue
        _run(block, tmp_path, env)
    shutil.rmtree(tmp_path / "runs", ignore_errors=True)


def test_shell_examples_are_marked_as_such():
    """A fenced block whose lines are qossim commands must be marked sh or console."""
    for doc in DOCS:
        for block in blocks(doc):
            if block.lang:
                continue
            first = next((x.strip() for x in block.text.splitlines() if x.strip()), "")
            assert not re.match(r"^(\$ )?(qossim|python3?|pip|bash) ", first), (
                f"{doc.relative_to(ROOT)}:{block.line}: mark this command block ```sh"
            )


def test_the_skip_marker_is_read():
    text = "intro\n\n<!-- example: skip because it runs for hours -->\n```sh\nqossim x\n```\n"
    doc = ROOT / "tests" / "data" / "_example_probe.md"
    try:
        doc.write_text(text, encoding="utf-8")
        (block,) = blocks(doc)
    finally:
        doc.unlink()
    assert block.skip == "because it runs for hours"
    assert block.commands() == ["qossim x"]
