"""A deterministic stand-in for the compiled engine ``qossim._core``, for tests only.

``qossim._engine`` loads this file when the environment variable ``QOSSIM_FAKE_ENGINE``
names it (the ``fake_engine`` fixture of ``conftest.py`` sets it, so child processes and
Dask/Ray workers use it too). It implements the engine's three functions (``version``,
``validate``, ``run``) and speaks the engine's contract for a subset of the scenario
language, so that the tests of the command line, campaigns and backends check what the
real engine accepts and returns:

* scenarios use the real sections: ``[run]`` (``duration`` required, ``warmup``,
  ``seed``), ``[topology]`` (``single_link`` with nodes ``a``, ``b``, or ``chain`` with
  nodes ``n0..nL``; duplex links named ``FROM-TO``), ``[links."NAME"]``, ``[[traffic]]``
  and ``[[metric]]`` (``link_throughput``, ``queue_length``, ``group_throughput``);
* diagnostics are ``FILE:LINE: key.path: reason`` with the engine's wording for the
  checks it makes (``--set:N`` for a value that came from the N-th override);
* results carry the engine's summary keys (``link.NAME.*``, ``group.NAME.*``,
  ``series.NAME.*``, ``events``, ``sim_time_s``, ``warmup_s``, ``unroutable_pkts``),
  its series names (``LINK.throughput``, ``LINK.queue``, ``TRAFFIC.throughput``, each
  with columns ``t`` and ``value``) and their units.

It simulates nothing: its numbers are arbitrary functions of the scenario, the
overrides and the seed (throughput grows with the number of flows), made to exercise
caching, storage, statistics, campaigns and the command line.

One section exists only here, for tests: ``[fake]`` with ``sleep_s`` (each run takes
that many wall-clock seconds; the environment variable ``QOSSIM_FAKE_SLEEP`` overrides
it), ``fail = "reason"`` (non-empty: the run raises ``RuntimeError(reason)``) and any
other key (e.g. ``tag``) as a free label. When ``QOSSIM_FAKE_LOG`` names a file, every
finished run appends one JSON line ``{"seed", "overrides", "scenario_hash"}`` to it.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from qossim import _toml
from qossim.errors import ScenarioError

VERSION = "0.0.0+fake"
SLEEP_ENV = "QOSSIM_FAKE_SLEEP"
LOG_ENV = "QOSSIM_FAKE_LOG"

SECTIONS = (
    "abr",
    "endpoint",
    "fake",
    "links",
    "metric",
    "pcn",
    "rpr",
    "run",
    "topology",
    "trace",
    "traffic",
)
_TIME_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ps|ns|us|ms|s)\s*$")
_UNIT_S = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_RATE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*/\s*(s|min)\s*$")
_SIZE_RE = re.compile(r"^\s*([0-9]+)\s*B\s*$")
_LINK_KEYS = (
    "drops",
    "drops_after_warmup",
    "drops_early",
    "drops_early_after_warmup",
    "drops_overflow",
    "drops_overflow_after_warmup",
    "drops_policed",
    "drops_policed_after_warmup",
    "drops_pushed_out",
    "drops_pushed_out_after_warmup",
    "loss_ratio",
    "offered_pkts_after_warmup",
    "tx_pkts_after_warmup",
    "queue_max_pkts",
    "queue_mean_pkts",
    "throughput_bps",
    "tx_pkts",
    "utilization",
)
#: Per-flow keys of the engine, with stand-in values (multiplied by the entry's delay).
_FLOW_VALUES = {
    "sent_pkts": 1000,
    "lost_pkts": 0,
    "loss_ratio": 0,
    "delay_mean_s": 1,
    "jitter_mean_s": 0.01,
}
_DELAY_KEYS = ("delay_max_s", "delay_mean_s", "delay_p50_s", "delay_p95_s", "delay_p99_s")

__all__ = ["ScenarioError", "run", "validate", "version"]


def version() -> str:
    """Return the stand-in engine's version."""
    return VERSION


def validate(text: str, filename: str, overrides: Sequence[tuple[str, str]]) -> list[str]:
    """Return the diagnostics of a scenario under the stand-in's rules."""
    return _resolve(text, filename, overrides)[1]


def run(
    text: str,
    filename: str,
    seed: int | None,
    overrides: Sequence[tuple[str, str]],
    progress: Callable[[float], None] | None,
    trace_dir: str | None = None,
    build_progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Produce a deterministic result dictionary shaped like the engine's.

    ``[[trace]]`` entries are accepted and write nothing (``trace_dir`` is unused); there
    is no world to build, so ``build_progress`` is never called.
    """
    started = time.perf_counter()
    scenario, diagnostics = _resolve(text, filename, overrides)
    if diagnostics:
        raise ScenarioError(diagnostics)
    if seed is None:
        seed = int(scenario["run"].get("seed", 1))
    canonical = json.dumps(scenario, sort_keys=True, default=str)
    scenario_hash = hashlib.sha256(canonical.encode()).hexdigest()
    digest = hashlib.sha256(f"{scenario_hash}:{seed}".encode()).hexdigest()
    rng = random.Random(int(digest[:16], 16))

    fake = scenario.get("fake", {})
    sleep_s = float(os.environ.get(SLEEP_ENV) or fake.get("sleep_s", 0.0))
    steps = 10
    for step in range(steps):
        if sleep_s > 0:
            time.sleep(sleep_s / steps)
        if progress is not None:
            progress((step + 1) / steps)
    if fake.get("fail"):
        raise RuntimeError(str(fake["fail"]))

    duration_s = _time_s(scenario["run"]["duration"]) or 0.0
    warmup_s = _time_s(scenario["run"].get("warmup", "0s")) or 0.0
    result = _measure(scenario, rng, duration_s, warmup_s)
    if LOG_ENV in os.environ:
        line = json.dumps(
            {
                "seed": seed,
                "overrides": [list(o) for o in overrides],
                "scenario_hash": scenario_hash,
            }
        )
        fd = os.open(os.environ[LOG_ENV], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    return {
        **result,
        "sim_time_s": duration_s,
        "wall_s": time.perf_counter() - started,
        "seed": seed,
        "scenario_hash": scenario_hash,
    }


# ----------------------------------------------------------------------------
# numbers
# ----------------------------------------------------------------------------


def _measure(
    scenario: dict[str, Any], rng: random.Random, duration_s: float, warmup_s: float
) -> dict[str, Any]:
    topology = scenario["topology"]
    nodes = _nodes(topology)
    links = [f"{a}-{b}" for a, b in zip(nodes, nodes[1:], strict=False)]
    links += [f"{b}-{a}" for a, b in zip(nodes, nodes[1:], strict=False)]
    capacity_bps = _bps(topology.get("rate"), 10e6)
    measured_s = max(duration_s - warmup_s, 1e-9)
    summary: dict[str, Any] = {}
    link_load = dict.fromkeys(links, 0.0)
    groups: dict[str, float] = {}
    for entry in scenario.get("traffic", []):
        offered = int(entry.get("flows", 1)) * _per_flow_bps(entry)
        delivered = min(offered, capacity_bps) * (0.98 + 0.02 * rng.random())
        groups[str(entry["name"])] = delivered
        path = nodes[nodes.index(entry["from"]) : nodes.index(entry["to"]) + 1]
        for a, b in zip(path, path[1:], strict=False):
            link_load[f"{a}-{b}"] += delivered
        packets = int(delivered * measured_s / 1600)
        delay = 1e-3 * (1.0 + rng.random())
        name = entry["name"]
        flows = int(entry.get("flows", 1))
        summary.update(
            {
                f"group.{name}.sent_pkts": packets + rng.randrange(3),
                f"group.{name}.rx_pkts": packets,
                f"group.{name}.sent_pkts_after_warmup": packets,
                f"group.{name}.rx_pkts_after_warmup": packets,
                f"group.{name}.lost_pkts": 0,
                f"group.{name}.loss_ratio": 0.0,
                f"group.{name}.jitter_mean_s": 1e-5,
                f"group.{name}.throughput_bps": delivered,
                **{
                    f"group.{entry['name']}.{key}": delay * (1.0 + 0.1 * k)
                    for k, key in enumerate(_DELAY_KEYS)
                },
            }
        )
        if flows <= 32:  # the engine lists small entries' flows one by one
            for k in range(flows):
                for key, value in _FLOW_VALUES.items():
                    summary[f"flow.{name}.{k}.{key}"] = value * delay
    for link in links:
        load = link_load[link]
        utilization = min(1.0, load / capacity_bps)
        queue = utilization / max(1e-3, 1.0 - utilization) * (0.9 + 0.2 * rng.random())
        values = {
            **{key: 0 for key in _LINK_KEYS if key.startswith("drops")},
            "loss_ratio": None,
            "offered_pkts_after_warmup": int(load * measured_s / 1600),
            "tx_pkts_after_warmup": int(load * measured_s / 1600),
            "queue_max_pkts": math.ceil(3 * queue),
            "queue_mean_pkts": queue,
            "throughput_bps": load,
            "tx_pkts": int(load * measured_s / 1600),
            "utilization": utilization,
        }
        summary.update({f"link.{link}.{key}": values[key] for key in _LINK_KEYS})
    series: dict[str, dict[str, list[float]]] = {}
    units: dict[str, str] = {}
    for metric in scenario.get("metric", []):
        name, unit, level = _series_of(metric, link_load, groups, summary)
        interval = _time_s(metric.get("interval", "50ms")) or 0.05
        count = max(1, int(duration_s / interval))
        t = [interval * (i + 1) for i in range(count)]
        value = [round(level * (0.9 + 0.2 * rng.random()), 6) for _ in t]
        series[name] = {"t": t, "value": value}
        units[name] = unit
        after = [v for ti, v in zip(t, value, strict=True) if ti > warmup_s]
        summary[f"series.{name}.mean"] = sum(after) / len(after) if after else math.nan
        summary[f"series.{name}.ci_half_width"] = 0.05 * level
        summary[f"series.{name}.samples"] = len(after)
    for name in groups:
        # The engine's delay distribution of each entry (its points here: the delays
        # of the stand-in's percentiles).
        base = float(summary[f"group.{name}.delay_mean_s"])
        series[f"group.{name}.delay_cdf"] = {
            "t": [base * (1.0 + 0.1 * k) for k in range(5)],
            "value": [0.5, 0.9, 0.95, 0.99, 1.0],
        }
        units[f"group.{name}.delay_cdf"] = "fraction"
    events = 3 * sum(int(v) for k, v in summary.items() if k.endswith(".rx_pkts"))
    summary.update(
        {
            "events": events,
            "sim_time_s": duration_s,
            "unroutable_pkts": 0,
            "warmup_s": warmup_s,
        }
    )
    return {
        "summary": dict(sorted(summary.items())),
        "series": series,
        "units": units,
        "events": events,
    }


def _series_of(
    metric: dict[str, Any],
    link_load: dict[str, float],
    groups: dict[str, float],
    summary: dict[str, Any],
) -> tuple[str, str, float]:
    kind = metric["kind"]
    if kind == "group_throughput":
        target = str(metric["traffic"])
        return str(metric.get("name", f"{target}.throughput")), "b/s", groups[target]
    link = str(metric["link"])
    if kind == "link_throughput":
        return str(metric.get("name", f"{link}.throughput")), "b/s", link_load[link]
    return (
        str(metric.get("name", f"{link}.queue")),
        "packets",
        float(summary[f"link.{link}.queue_mean_pkts"]),
    )


def _per_flow_bps(entry: dict[str, Any]) -> float:
    rate = _RATE_RE.match(str(entry.get("rate", "")))
    size = _SIZE_RE.match(str(entry.get("size", "")))
    if rate and size:
        per_s = float(rate.group(1)) / (60.0 if rate.group(2) == "min" else 1.0)
        return per_s * int(size.group(1)) * 8
    return 64e3


def _bps(value: Any, default: float) -> float:
    units = {"bps": 1.0, "Kbps": 1e3, "kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}
    match = re.match(r"^\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]+)\s*$", str(value))
    if match and match.group(2) in units:
        return float(match.group(1)) * units[match.group(2)]
    return default


# ----------------------------------------------------------------------------
# checks
# ----------------------------------------------------------------------------


def _nodes(topology: dict[str, Any]) -> list[str]:
    if topology.get("kind") == "chain":
        return [f"n{i}" for i in range(int(topology.get("length", 1)) + 1)]
    return ["a", "b"]


def _resolve(
    text: str, filename: str, overrides: Sequence[tuple[str, str]]
) -> tuple[dict[str, Any], list[str]]:
    try:
        scenario = _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        line = _toml.error_line(exc, text)
        return {}, [f"{filename}:{line}: <toml>: {_toml.error_reason(exc)}"]
    problems: list[str] = []
    overridden: dict[str, int] = {}
    for number, (key, value) in enumerate(overrides, start=1):
        problem = _override(scenario, key, _toml.parse_value(value))
        if problem:
            problems.append(f"--set:{number}: {key}: {problem}")
        overridden[key] = number

    def where(path: str, key: str) -> str:
        if path in overridden:
            return f"--set:{overridden[path]}: {path}"
        return f"{filename}:{_line_of(text, key)}: {path}"

    known = [s for s in SECTIONS if s != "fake"]
    for section in scenario:
        if section not in SECTIONS:
            close = difflib.get_close_matches(section, known, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            problems.append(
                f"{filename}:{_line_of(text, section)}: {section}: unknown key{hint}; "
                f"expected one of: {', '.join(known)}"
            )
    run_table = scenario.get("run")
    if not isinstance(run_table, dict) or "duration" not in run_table:
        problems.append(f"{filename}:1: run.duration: missing (required)")
    else:
        for key in ("duration", "warmup"):
            if key in run_table and (problem := _time_problem(run_table[key])):
                problems.append(f"{where(f'run.{key}', key)}: {problem}")
    topology = scenario.get("topology")
    if not isinstance(topology, dict):
        problems.append(f"{filename}:1: topology: missing (required): describe the network")
        return scenario, problems
    if topology.get("kind") not in ("single_link", "chain"):
        problems.append(
            f"{where('topology.kind', 'kind')}: the stand-in engine knows only "
            f"single_link and chain, got {topology.get('kind')!r}"
        )
        return scenario, problems
    nodes = _nodes(topology)
    names: set[str] = set()
    for i, entry in enumerate(scenario.get("traffic", [])):
        names.add(str(entry.get("name")))
        flows = entry.get("flows", 1)
        path = f"traffic.{i}.flows"
        if isinstance(flows, bool) or not isinstance(flows, int):
            problems.append(f"{where(path, 'flows')}: expected an integer, found {_kind(flows)}")
        elif flows < 0:
            problems.append(f"{where(path, 'flows')}: must not be negative, got {flows}")
        for end in ("from", "to"):
            if entry.get(end) not in nodes:
                problems.append(
                    f"{where(f'traffic.{i}.{end}', end)}: unknown node {entry.get(end)!r}"
                )
        if entry.get("from") in nodes and entry.get("to") in nodes:
            if nodes.index(entry["from"]) >= nodes.index(entry["to"]):
                problems.append(
                    f"{where(f'traffic.{i}.to', 'to')}: the stand-in engine routes only "
                    "forward along its nodes"
                )
    links = {f"{a}-{b}" for a, b in zip(nodes, nodes[1:], strict=False)}
    links |= {f"{b}-{a}" for a, b in zip(nodes, nodes[1:], strict=False)}
    for i, metric in enumerate(scenario.get("metric", [])):
        kind = metric.get("kind")
        if kind == "group_throughput":
            if metric.get("traffic") not in names:
                problems.append(
                    f"{where(f'metric.{i}.traffic', 'traffic')}: unknown traffic entry "
                    f'"{metric.get("traffic")}"'
                )
        elif kind in ("link_throughput", "queue_length"):
            if metric.get("link") not in links:
                problems.append(
                    f'{where(f"metric.{i}.link", "link")}: unknown link "{metric.get("link")}"; '
                    f"links are: {', '.join(sorted(links))}"
                )
        else:
            problems.append(f"{where(f'metric.{i}.kind', 'kind')}: unknown metric {kind!r}")
    return scenario, sorted(problems, key=_position)


def _position(diagnostic: str) -> tuple[int, int]:
    """Order of the engine's diagnostics: overrides first (in order), then by line."""
    source, line = diagnostic.split(": ", 1)[0].rsplit(":", 1)
    return (0 if source == "--set" else 1, int(line))


def _override(scenario: dict[str, Any], key: str, value: Any) -> str | None:
    parts = key.split(".")
    node: Any = scenario
    for part in parts[:-1]:
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                return f"no entry {part}"
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node.setdefault(part, {})
        else:
            return f"{part} is not a table"
    last = parts[-1]
    if isinstance(node, list):
        if not last.isdigit() or int(last) >= len(node):
            return f"no entry {last}"
        node[int(last)] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        return f"{last} is not a table"
    return None


def _time_problem(value: Any) -> str | None:
    if isinstance(value, str):
        if _time_s(value) is None:
            return f'expected a time such as "20ms" or "1.5s", got "{value}"'
        return None
    return f'expected a string with a unit, found {_kind(value)} (quote it, e.g. "10Mbps")'


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "table" if isinstance(value, dict) else "array"


def _time_s(value: Any) -> float | None:
    if isinstance(value, str):
        match = _TIME_RE.match(value)
        if match:
            return float(match.group(1)) * _UNIT_S[match.group(2)]
    return None


def _line_of(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*\[*\s*\"?{re.escape(key)}\"?\s*[=\]]")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return 1
