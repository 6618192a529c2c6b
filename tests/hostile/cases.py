"""The hostile inputs and faults, as data: each case is a command run as a process (under
a memory and a time cap) and what it must answer: its exit status and a pattern of the
first line of its standard error (or output). Files a case needs are written by
:func:`write_files` into the case's own folder, which must hold nothing more afterwards
than the case leaves on purpose (``keeps``)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

#: The reference scenario of these cases: two links, 100 CBR flows, one metric.
BASE = textwrap.dedent(
    """\
    [run]
    duration = "20s"

    [topology]
    kind = "chain"
    length = 2
    rate = "10Gbps"
    delay = "1ms"
    queue = { kind = "droptail", limit = "10000p" }

    [links."n1-n2"]
    rate = "OC3"

    [[traffic]]
    name = "voice"
    from = "n0"
    to = "n2"
    model = "CBR"
    flows = 100

    [[metric]]
    kind = "queue_length"
    link = "n1-n2"
    interval = "50ms"
    """
)

#: A scenario that runs in a fraction of a second.
SHORT = BASE.replace('duration = "20s"', 'duration = "1s"')


def _metrics(n: int, interval: str) -> str:
    return BASE + "".join(
        f'[[metric]]\nname = "q{i}"\nkind = "queue_length"\nlink = "n1-n2"\n'
        f'interval = "{interval}"\n'
        for i in range(n)
    )


def _entries(n: int) -> str:
    return BASE + "".join(
        f'[[traffic]]\nname = "t{i}"\nfrom = "n0"\nto = "n2"\nmodel = "CBR"\nflows = 1\n'
        for i in range(n)
    )


def _campaign(scenario: str, grid: str = "", seeds: str = "[1, 2]") -> str:
    return f'[campaign]\nname = "c"\nscenario = "{scenario}"\nseeds = {seeds}\n\n[grid]\n{grid}\n'


@dataclass(frozen=True)
class Case:
    """One hostile case: a command, the files it needs, and the answer it must give."""

    name: str
    #: Arguments after ``python -m qossim`` (or after ``python -c`` when ``python``).
    args: tuple[str, ...]
    #: Exit status expected.
    exit: int
    #: Regular expression the first line of standard error must match (standard output
    #: when the command succeeds and prints nothing on standard error).
    first: str
    #: Files to write into the case folder: name -> text.
    files: dict[str, str] = field(default_factory=dict)
    #: Environment additions.
    env: dict[str, str] = field(default_factory=dict)
    #: Run ``python -c args[0]`` instead of the command line.
    python: bool = False
    #: Seconds the case may take.
    timeout: float = 20.0
    #: Standard error must have at most this many lines (one mistake, one diagnostic).
    max_lines: int | None = None
    #: Standard error must not contain this text (a file's content, an escape).
    never: tuple[str, ...] = ()
    #: Names (globs) the case folder may hold afterwards besides its own files.
    keeps: tuple[str, ...] = ()
    #: For campaign cases: how many stored runs the output directory must hold.
    stored_runs: int | None = None
    #: Address-space cap in bytes, if not the suite's (``None``: the suite's; 0: none,
    #: for a cluster whose processes reserve more address space than they use).
    memory_cap: int | None = None
    #: A module the case needs (a backend); the case is left out when it is missing.
    needs: str | None = None


def write_files(case: Case, folder: Path) -> None:
    """Write the files of ``case`` into ``folder``."""
    for name, text in case.files.items():
        (folder / name).write_text(text, encoding="utf-8")


_PY_RUN_1PS = """
import qossim
try:
    qossim.run("s.toml", progress=False)
except qossim.ScenarioError as exc:
    print("caught", type(exc).__name__, exc.lines[0])
"""

_PY_OOM = """
import qossim
try:
    qossim.run("s.toml", progress=False)
except qossim.QossimError as exc:
    print("caught", type(exc).__name__, exc.lines[0])
"""

#: A stand-in engine that runs the real one, except that the run of seed 2 kills its own
#: process (as the memory killer or an abort would).
_DYING_ENGINE = """
import os
from qossim import _core

version = _core.version
validate = _core.validate
ScenarioError = _core.ScenarioError
EngineError = _core.EngineError

def run(text, filename, seed=None, overrides=(), progress=None, **kw):
    if seed == 2:
        os.abort()
    return _core.run(text, filename, seed, list(overrides), progress, **kw)
"""

#: A short run with a packet trace, whose trace file is then cut in half before
#: ``qossim trace`` reads it.
_PY_TRUNCATED_TRACE = """
import pathlib, sys
from qossim.cli import main
assert main(["run", "s.toml", "--quiet", "--out", "tr"]) == 0
f = sorted(pathlib.Path("tr/traces").glob("*.parquet"))[0]
f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
sys.exit(main(["trace", "tr"]))
"""

#: A run whose packet trace (every event: 1.5 million records) is larger than the
#: memory cap allows to hold at once, then viewed: both stream.
_PY_BIG_TRACE = """
import contextlib, io, sys
from qossim.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    assert main(["run", "s.toml", "--quiet", "--out", "tr"]) == 0
sys.exit(main(["trace", "tr", "--limit", "3"]))
"""

#: 20 000 CBR timers pending at once, run with the event stores capped at 64 KiB.
_MANY_TIMERS = SHORT.replace("flows = 100", "flows = 20000").split("[[metric]]")[0]

_PY_EVENT_OOM = """
import qossim
try:
    qossim.run("s.toml", progress=False)
except qossim.QossimError as exc:
    print("caught", type(exc).__name__, exc.lines[0])
"""

_TRACED = SHORT.replace("flows = 100", 'flows = 100\n\n[[trace]]\nname = "v7"\nflows = [7]\n')

#: The cases. Their counts are derived from this table (see ``test_hostile.py``).
CASES: tuple[Case, ...] = (
    # -- 1. nothing aborts: what cannot fit is refused at validation, on its line
    Case(
        "metric interval 1ps",
        ("validate", "s.toml"),
        2,
        r"^s\.toml:\d+: metric\.0\.interval: 2\.000e13 samples .* of memory",
        files={"s.toml": BASE.replace('"50ms"', '"1ps"')},
        max_lines=1,
    ),
    Case(
        "metric interval 1ps, run",
        ("run", "s.toml", "--quiet", "--out", "out"),
        2,
        r"^s\.toml:\d+: metric\.0\.interval: .*samples",
        files={"s.toml": BASE.replace('"50ms"', '"1ps"')},
    ),
    Case(
        "metric interval 1ps from Python",
        (_PY_RUN_1PS,),
        0,
        r"^caught ScenarioError s\.toml:\d+: metric\.0\.interval",
        files={"s.toml": BASE.replace('"50ms"', '"1ps"')},
        python=True,
    ),
    Case(
        "queue limit of 1e9 packets, sources that can fill it",
        ("run", "s.toml", "--quiet", "--out", "out"),
        2,
        r"^s\.toml:\d+: topology\.queue: up to .* queued packets.* of memory",
        files={
            "s.toml": BASE.replace('"10000p"', '"1000000000p"')
            .replace("flows = 100", "flows = 10000000")
            .replace('duration = "20s"', 'duration = "200s"')
        },
    ),
    Case(
        "calls at 1e12/s",
        ("run", "s.toml", "--quiet", "--out", "out"),
        2,
        r"^s\.toml:\d+: traffic\.0\.calls\.rate: .*calls",
        files={
            "s.toml": BASE.replace(
                "flows = 100", '[traffic.calls]\nrate = "1000000000000/s"\nholding = "exp:60s"'
            )
        },
    ),
    Case(
        "20 000 traffic entries over a 1 GiB budget",
        ("validate", "s.toml"),
        2,
        r"^s\.toml:\d+: traffic\.16384\.name: 20001 traffic entries at 64 KiB",
        files={"s.toml": _entries(20_000)},
        env={"QOSSIM_MEMORY_BUDGET": "1GiB"},
        max_lines=1,
    ),
    Case(
        "20 000 metrics at 1us",
        ("validate", "s.toml"),
        2,
        r"^s\.toml:\d+: metric\.1\.interval: the scenario needs about .* GiB of memory",
        files={"s.toml": _metrics(20_000, "1us")},
        max_lines=1,
    ),
    Case(
        "a series that outgrows the memory cap at run time",
        (_PY_OOM,),
        0,
        r"^caught RunError s\.toml: out of memory: series \"n1-n2\.queue\" could not grow",
        files={
            "s.toml": BASE.replace('"50ms"', '"1ns"').replace('duration = "20s"', 'duration = "1s"')
        },
        # The budget is raised above the cap so that validation lets it through.
        env={"QOSSIM_MEMORY_BUDGET": "1000GiB"},
        python=True,
        timeout=40.0,
    ),
    # -- 2. no hangs, no degenerate rates
    Case(
        "on-off with on = exp:1ps",
        ("run", "s.toml", "--quiet", "--out", "out"),
        2,
        r"^s\.toml:\d+: traffic\.0\.on: an on period of mean 1e-12 s",
        files={
            "s.toml": BASE.replace(
                'model = "CBR"',
                'model = "onoff"\nsize = "200B"\ninterval = "20ms"\non = "exp:1ps"\noff = "exp:1s"',
            )
        },
    ),
    Case(
        "CBR every picosecond",
        ("validate", "s.toml"),
        2,
        r"^s\.toml:\d+: traffic\.0\.flows: .*events",
        files={
            "s.toml": BASE.replace(
                'model = "CBR"', 'model = "cbr"\nsize = "100B"\ninterval = "1ps"'
            )
        },
    ),
    Case(
        "a grid of 10^9 points",
        ("sweep", "c.toml", "--quiet", "--out", "out"),
        2,
        r"^c\.toml: grid: 1000000000 runs .* more than the 1000000",
        files={
            "s.toml": SHORT,
            "c.toml": _campaign(
                "s.toml",
                "".join(
                    f'"traffic.0.{k}" = [{", ".join(map(str, range(1, 11)))}]\n' for k in ("flows",)
                )
                + "".join(
                    f'"metric.0.x{i}" = [{", ".join(map(str, range(10)))}]\n' for i in range(8)
                ),
                seeds="[1]",
            ),
        },
        timeout=10.0,
    ),
    Case(
        "seeds = 1000000000",
        ("sweep", "c.toml", "--quiet", "--out", "out"),
        2,
        r"^c\.toml: campaign\.seeds: 1000000000 seeds is more than",
        files={"s.toml": SHORT, "c.toml": _campaign("s.toml", seeds="1000000000")},
    ),
    # -- 4. output safety
    Case(
        "a name with an ANSI escape",
        ("validate", "s.toml", "--set", "traffic.0.to=n\x1b[31mred"),
        2,
        r"^--set:1: traffic\.0\.to: unknown node",
        files={"s.toml": BASE},
        never=("\x1b",),
        max_lines=1,
    ),
    Case(
        "a 100 000-character node name",
        ("validate", "s.toml"),
        2,
        r"^s\.toml:\d+: traffic\.0\.to: unknown node \"x{70,}…",
        files={"s.toml": BASE.replace('to = "n2"', 'to = "' + "x" * 100_000 + '"')},
        max_lines=1,
    ),
    Case(
        "a campaign table named with an escape and 5 000 characters",
        ("sweep", "c.toml", "--quiet", "--out", "out"),
        2,
        r"^c\.toml: \\x1b\[31mx{70,}…: unknown table",
        files={
            "s.toml": SHORT,
            "c.toml": _campaign("s.toml") + '["\\u001b[31m' + "x" * 5000 + '"]\na = 1\n',
        },
        never=("\x1b",),
        max_lines=1,
    ),
    Case(
        "a trace file that is a system file",
        ("validate", "s.toml"),
        2,
        r"^s\.toml:\d+: traffic\.0\.trace: .*line 1: expected",
        files={
            "s.toml": BASE.replace(
                'model = "CBR"', 'model = "trace"\ntrace = "/etc/passwd"\nsize = "1000B"'
            )
        },
        never=("root:",),
    ),
    Case(
        "a trace file that is a device",
        ("validate", "s.toml"),
        2,
        r"^s\.toml:\d+: traffic\.0\.trace: cannot read trace /dev/zero: not a regular file",
        files={
            "s.toml": BASE.replace(
                'model = "CBR"', 'model = "trace"\ntrace = "/dev/zero"\nsize = "1000B"'
            )
        },
    ),
    # -- 5. one mistake, one diagnostic, on its line
    Case(
        "a quoted link name in --set",
        ("validate", "s.toml", "--set", 'links."n1-n2".rate="T1"'),
        0,
        r"^s\.toml: ok$",
        files={"s.toml": BASE},
    ),
    Case(
        "a bad value through a quoted --set key",
        ("validate", "s.toml", "--set", 'links."n1-n2".rate="fast"'),
        2,
        r"^--set:1: links\.n1-n2\.rate: ",
        files={"s.toml": BASE},
        max_lines=1,
    ),
    Case(
        "a misspelt grid key",
        ("sweep", "c.toml", "--quiet", "--out", "out"),
        2,
        r"^c\.toml:7: traffic\.0\.flowz: unknown key",
        files={"s.toml": SHORT, "c.toml": _campaign("s.toml", '"traffic.0.flowz" = [1, 2]')},
        max_lines=1,
    ),
    Case(
        "--set topology.kind=ringg",
        ("validate", "s.toml", "--set", "topology.kind=ringg"),
        2,
        r"^--set:1: topology\.kind: unknown topology \"ringg\"",
        files={"s.toml": BASE},
        max_lines=1,
    ),
    # -- 6. exit 2, never an internal error
    Case(
        "validate /dev/zero",
        ("validate", "/dev/zero"),
        2,
        r"^/dev/zero: cannot read: not a regular file",
    ),
    Case(
        "a campaign whose scenario is /dev/zero",
        ("sweep", "c.toml", "--quiet", "--out", "out"),
        2,
        r"^c\.toml: campaign\.scenario: /dev/zero: cannot read: not a regular file",
        files={"c.toml": _campaign("/dev/zero")},
    ),
    Case(
        "--seed 2^64",
        ("run", "s.toml", "--seed", "18446744073709551616"),
        2,
        r"^--seed: must be from 0 to 2\^64 - 1, got 18446744073709551616$",
        files={"s.toml": SHORT},
        max_lines=1,
    ),
    Case(
        "--seed -1",
        ("run", "s.toml", "--seed", "-1"),
        2,
        r"^--seed: must be from 0 to 2\^64 - 1, got -1$",
        files={"s.toml": SHORT},
        max_lines=1,
    ),
    Case(
        "--seed of 5 000 digits",
        ("run", "s.toml", "--seed", "9" * 5000),
        2,
        r"^--seed: not an integer: '9{60}…'$",
        files={"s.toml": SHORT},
        max_lines=1,
    ),
    Case(
        "trace --flow 10^23",
        ("trace", "nowhere", "--flow", "99999999999999999999999"),
        2,
        r"^--flow: a flow id is from 0 to 2\^63 - 1, got 99999999999999999999999$",
        max_lines=1,
    ),
    Case(
        "a size of 1e30B",
        ("validate", "s.toml", "--set", "topology.queue.limit=1e30B"),
        2,
        r"^--set:1: topology\.queue\.limit: size \"1e30B\" is too large",
        files={"s.toml": BASE},
        max_lines=1,
    ),
    Case(
        "a rate of 1e400bps",
        ("validate", "s.toml", "--set", "topology.rate=1e400bps"),
        2,
        r"^--set:1: topology\.rate: rate must be finite and positive",
        files={"s.toml": BASE},
        max_lines=1,
    ),
    Case(
        "show a truncated manifest",
        ("show", "run"),
        2,
        r"^run/?",
        files={"run/manifest.json": '{"run_key": "ab', "run/summary.json": "{}"},
    ),
    Case(
        "trace on a truncated manifest",
        ("trace", "run"),
        2,
        r"^run: stored run is damaged: manifest\.json is unreadable",
        files={"run/manifest.json": '{"run_key": "ab', "run/summary.json": "{}"},
    ),
    Case(
        "a trace of every event, larger than memory, written and viewed",
        (_PY_BIG_TRACE,),
        0,
        r"^ +time \(s\) +event",
        files={
            "s.toml": SHORT.replace("flows = 100", "flows = 1000").replace('"1s"', '"4.3s"')
            + '\n[[trace]]\nname = "all"\n'
        },
        python=True,
        keeps=("tr",),
        # The interpreter and its libraries take about 600 MiB of address space; holding
        # the trace whole (as `qossim trace` did) needs about 1.9 GiB.
        memory_cap=900 << 20,
        timeout=90.0,
    ),
    Case(
        "an event queue that cannot grow at run time",
        ("run", "s.toml", "--quiet", "--out", "out"),
        2,
        r"^s\.toml: out of memory: the event queue could not grow beyond \d+ pending events "
        r"at [0-9.e-]+ s of simulated time; the run was stopped$",
        files={"s.toml": _MANY_TIMERS},
        env={"QOSSIM_EVENT_MEMORY_LIMIT": "64KiB"},
        max_lines=1,
    ),
    Case(
        "an event queue that cannot grow, from Python",
        (_PY_EVENT_OOM,),
        0,
        r"^caught RunError s\.toml: out of memory: the event queue could not grow",
        files={"s.toml": _MANY_TIMERS},
        env={"QOSSIM_EVENT_MEMORY_LIMIT": "64KiB"},
        python=True,
    ),
    Case(
        "trace of a truncated trace file",
        (_PY_TRUNCATED_TRACE,),
        2,
        r"^tr: stored run is damaged: ",
        files={"s.toml": _TRACED},
        python=True,
        keeps=("tr",),
        timeout=40.0,
    ),
    Case(
        "a campaign that runs: one run's process dies, the others are kept",
        ("sweep", "c.toml", "--quiet", "--out", "out", "--jobs", "2"),
        2,
        r"^1 of 3 runs failed \(finished runs are kept\):",
        files={
            "s.toml": SHORT,
            "c.toml": _campaign("s.toml", seeds="[1, 2, 3]"),
            "engine.py": _DYING_ENGINE,
        },
        env={"QOSSIM_FAKE_ENGINE": "engine.py"},
        keeps=("out",),
        stored_runs=2,
        timeout=40.0,
    ),
    *(
        Case(
            f"a {backend} campaign: one run's worker dies, the others are kept",
            ("sweep", "c.toml", "--quiet", "--out", "out", "--jobs", "2", "--backend", backend),
            2,
            r"^1 of 3 runs failed \(finished runs are kept\):",
            files={
                "s.toml": SHORT,
                "c.toml": _campaign("s.toml", seeds="[1, 2, 3]"),
                "engine.py": _DYING_ENGINE,
            },
            env={"QOSSIM_FAKE_ENGINE": "engine.py"},
            keeps=("out",),
            stored_runs=2,
            timeout=180.0,
            memory_cap=0 if backend == "ray" else None,
            needs=module,
            never=("Traceback",),
        )
        for backend, module in (("dask", "distributed"), ("ray", "ray"))
    ),
)
