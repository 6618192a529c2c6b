"""Fingerprints: a short, exact signature of every shipped scenario and campaign point.

A fingerprint runs a scenario (or one grid point of a campaign, with its first seed)
for at most :data:`EVENTS` events, with the engine's bookkeeping checks on (a violation
fails it), and keeps the hash of every event executed (time, target, kind) and of every
delivery accounted without an event (deliveries to plain sinks, see ``docs/design.md``),
the event count, the simulated time reached and a handful of summary values, among them
the groups' mean delays. Any change to a model's behaviour changes some fingerprint; the
test suite compares them all with ``tests/data/fingerprints.jsonl`` and
``qossim fingerprint [--update] [PATHS]`` shows what changed and, with ``--update``,
records the new values deliberately (see ``docs/reliability.md``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qossim import _engine, _toml
from qossim.campaign import Campaign

__all__ = ["EVENTS", "Fingerprint", "compare", "compute", "default_store", "load", "save"]

#: Events run per fingerprint.
EVENTS = 1 << 17

#: Summary keys kept: per pattern, in this order, the first two (by name) that are not
#: zero, at most :data:`KEEP` in all.
_KEYS = (
    "group.*.rx_pkts",
    "group.*.sent_pkts",
    "group.*.delay_mean_s",
    "link.*.tx_pkts",
    "link.*.drops",
)
KEEP = 10


@dataclass(frozen=True)
class Fingerprint:
    """The signature of one scenario file or campaign point."""

    file: str
    point: str
    seed: int
    events: int
    sim_time_s: float
    trace_hash: str
    summary: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        """Identity: the file and the point within it."""
        return (self.file, self.point)

    def to_json(self) -> str:
        """One line of the store."""
        return json.dumps(
            {
                "file": self.file,
                "point": self.point,
                "seed": self.seed,
                "events": self.events,
                "sim_time_s": self.sim_time_s,
                "trace_hash": self.trace_hash,
                "summary": self.summary,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, line: str) -> Fingerprint:
        """Read one line of the store."""
        d = json.loads(line)
        return cls(
            d["file"],
            d["point"],
            int(d["seed"]),
            int(d["events"]),
            float(d["sim_time_s"]),
            str(d["trace_hash"]),
            dict(d["summary"]),
        )


def default_store(root: str | os.PathLike[str] = ".") -> Path:
    """Where the fingerprints of a checkout are kept."""
    return Path(root) / "tests" / "data" / "fingerprints.jsonl"


def find_root(start: str | os.PathLike[str] = ".", *, recording: bool = False) -> Path | None:
    """Return the qossim checkout holding ``start`` (or the installed package), or None.

    A checkout is a folder with ``scenarios/`` and the store ``tests/data/
    fingerprints.jsonl``: the first such folder from ``start`` upwards, else the
    checkout the running package was installed from in editable mode. When
    ``recording`` (``--update``), a folder with ``scenarios/`` and no store yet is one
    too: the store is then created there.
    """
    here = Path(start).resolve()
    package = Path(__file__).resolve().parents[2]
    upwards = (here, *here.parents)
    for folder in upwards:
        if default_store(folder).is_file() and (folder / "scenarios").is_dir():
            return folder
    if recording:
        for folder in upwards:
            if (folder / "scenarios").is_dir():
                return folder
    if default_store(package).is_file() and (package / "scenarios").is_dir():
        return package
    return None


def _files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        found = sorted(p.rglob("*.toml")) if p.is_dir() else [p]
        # A study's published data (studies/<study>/published/) is not a scenario.
        out.extend(f for f in found if p == f or "published" not in f.relative_to(p).parts)
    return out


def _runs(path: Path) -> Iterator[tuple[str, str, str, list[tuple[str, str]], int]]:
    """(point label, scenario text, scenario file, overrides, seed) of one file."""
    text = path.read_text(encoding="utf-8")
    data = _toml.loads(text)
    if "campaign" not in data:
        seed = int(data.get("run", {}).get("seed", 1))
        yield "", text, os.fspath(path), [], seed
        return
    spec = Campaign.load(path)
    for point in spec.points():
        label = json.dumps(point, sort_keys=True, default=str) if point else ""
        overrides = spec.overrides_for(point)
        yield label, spec.scenario_text, spec.scenario_file, overrides, spec.seeds[0]


def _pick(summary: Mapping[str, Any]) -> dict[str, Any]:
    import fnmatch

    keys: list[str] = []
    for pattern in _KEYS:
        keys += sorted(k for k in summary if fnmatch.fnmatchcase(k, pattern) and summary[k])[:2]
    return {k: summary[k] for k in keys[:KEEP]}


def compute(
    paths: Sequence[str | os.PathLike[str]], root: str | os.PathLike[str] = "."
) -> list[Fingerprint]:
    """Fingerprint every scenario and campaign point under ``paths``.

    File names are recorded relative to ``root``, so a checkout anywhere gives the
    same store.
    """
    out = []
    for path in _files(paths):
        name = Path(os.path.relpath(path, root)).as_posix()
        for label, text, filename, overrides, seed in _runs(path):
            raw = _engine.run_raw(
                text,
                filename,
                seed,
                overrides,
                None,
                fingerprint_events=EVENTS,
                check_invariants=True,
            )
            out.append(
                Fingerprint(
                    name,
                    label,
                    seed,
                    int(raw["events"]),
                    float(raw["sim_time_s"]),
                    str(raw["trace_hash"]),
                    _pick(raw.get("summary", {})),
                )
            )
    return out


def load(store: str | os.PathLike[str]) -> list[Fingerprint]:
    """Read a store (no file: no fingerprints)."""
    path = Path(store)
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [Fingerprint.from_json(line) for line in lines if line.strip()]


def save(store: str | os.PathLike[str], prints: Iterable[Fingerprint]) -> None:
    """Write a store, sorted by file and point."""
    from qossim.results import atomic_write_text

    lines = [f.to_json() for f in sorted(prints, key=lambda f: f.key)]
    Path(store).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(store, "".join(line + "\n" for line in lines))


def _fmt(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def compare(old: Iterable[Fingerprint], new: Iterable[Fingerprint]) -> list[str]:
    """Readable differences between two sets of fingerprints (empty: identical)."""
    before = {f.key: f for f in old}
    after = {f.key: f for f in new}
    lines: list[str] = []
    for key in sorted(set(before) | set(after)):
        where = key[0] + (f" {key[1]}" if key[1] else "")
        a, b = before.get(key), after.get(key)
        if a is None:
            lines.append(f"{where}: new (no stored fingerprint)")
            continue
        if b is None:
            lines.append(f"{where}: stored, but the file or point is gone")
            continue
        changes = []
        for field in ("seed", "events", "sim_time_s", "trace_hash"):
            va, vb = getattr(a, field), getattr(b, field)
            if va != vb:
                changes.append(f"{field} {_fmt(va)} -> {_fmt(vb)}")
        for k in sorted(set(a.summary) | set(b.summary)):
            va, vb = a.summary.get(k), b.summary.get(k)
            if va != vb:
                changes.append(f"{k} {_fmt(va)} -> {_fmt(vb)}")
        if changes:
            lines.append(f"{where}: " + "; ".join(changes))
    return lines
