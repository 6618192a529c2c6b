"""The ``qossim`` command.

Sub-commands: ``run``, ``validate``, ``sweep``, ``show``, ``trace``, ``fingerprint``,
``report`` and
``reproduce``. Problems a user can cause (a bad scenario, an unreadable
file, an unknown study) are printed one per line on standard error, naming
the file, and end the command with exit status 2, without a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from qossim import __version__, api, campaign, report, studies
from qossim.errors import CampaignInterrupted, EngineError, QossimError, shown
from qossim.params import parse_set
from qossim.results import Result, atomic_dir, is_result_dir

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USER = 2
EXIT_INTERRUPTED = 130


def _print_err(*lines: str) -> None:
    for line in lines:
        print(line, file=sys.stderr)


def _flatten(summary: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for key, value in summary.items():
        if isinstance(value, Mapping):
            items.extend(_flatten(value, f"{prefix}{key}."))
        else:
            items.append((f"{prefix}{key}", value))
    return items


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


def _print_pairs(pairs: Sequence[tuple[str, Any]], indent: str = "  ") -> None:
    width = max((len(k) for k, _ in pairs), default=0)
    for key, value in pairs:
        print(f"{indent}{key.ljust(width)}  {_fmt(value)}")


def _print_declared(pairs: Sequence[tuple[str, Any]], summary: Any, indent: str = "  ") -> None:
    """Print summary pairs with each key's declared unit and window."""
    rows = [(k, _fmt(v), summary.unit(k) or "", summary.window(k) or "") for k, v in pairs]
    widths = [max((len(r[i]) for r in rows), default=0) for i in range(3)]
    for key, value, unit, window in rows:
        line = f"{indent}{key.ljust(widths[0])}  {value.rjust(widths[1])}  {unit.ljust(widths[2])}"
        print(f"{line}  {window}".rstrip())


# ----------------------------------------------------------------------------
# commands
# ----------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    """Run one scenario and store it as a run directory."""
    text, filename = api.scenario_source(args.file)
    overrides = parse_set(args.set or [])
    if args.out is not None:
        _check_target(Path(args.out), force=args.force)
    result = api.run_text(
        text,
        seed=args.seed,
        set=overrides,
        progress=not args.quiet,
        filename=filename,
    )
    if args.out is not None:
        out = Path(args.out)
    else:
        stem = Path(args.file).stem or "scenario"
        key = str(result.manifest.get("run_key", ""))[:8]
        out = Path("runs") / f"{stem}-{key}-s{result.seed}"
    if args.out is None or not args.force:
        _check_target(out, force=args.force)
    try:
        result.save(out, overwrite=args.force)
    except FileExistsError:
        raise QossimError(
            f"{out}: another run was stored there while this one ran; give --force to replace it"
        ) from None
    print("summary:")
    _print_pairs(_flatten(result.summary))
    print(f"run directory: {out}")
    return EXIT_OK


def _check_target(out: Path, force: bool = True) -> None:
    if out.exists() and not is_result_dir(out) and not _empty_dir(out):
        raise QossimError(f"{out}: exists and is not a run directory; choose another --out")
    if is_result_dir(out) and not force:
        raise QossimError(f"{out}: a run is stored there; give --force to replace it")
    parent = out.parent if not out.exists() else out
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not os.access(parent, os.W_OK | os.X_OK):
        raise QossimError(f"{out}: cannot write here ({parent} is not writable)")


def _check_whole(run_dir: Path) -> None:
    """Refuse to show a stored run whose files or manifest were changed or damaged."""
    from qossim.results import verify_run_dir

    if is_result_dir(run_dir):
        problem = verify_run_dir(run_dir)
        if problem is not None:
            raise QossimError(f"{run_dir}: stored run is damaged: {problem}")


def _empty_dir(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate a scenario; print FILE: ok or every diagnostic."""
    text, filename = api.scenario_source(args.file)
    diagnostics = api.validate_text(text, set=parse_set(args.set or []), filename=filename)
    if diagnostics:
        _print_err(*diagnostics)
        return EXIT_USER
    print(f"{args.file}: ok")
    return EXIT_OK


def cmd_describe(args: argparse.Namespace) -> int:
    """List every registered kind, or print one kind's declared parameters."""
    from qossim import describe

    if args.markdown:
        print(
            "\n\n".join(describe.markdown(block) for block in describe.blocks())
            if args.kind is None
            else describe.kind_markdown(describe.find(args.kind))
        )
    elif args.kind is None:
        print(describe.list_text())
    else:
        print(describe.kind_text(describe.find(args.kind)))
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a campaign's missing runs and print a short account of it.

    By default: the counts, a table of the metrics the campaign names
    (``metrics = [...]`` in ``[campaign]``) per grid point, and where the full
    tables are; ``--full`` prints every metric of every point instead.
    """
    spec = campaign.Campaign.load(args.campaign)
    out = Path(args.out) if args.out is not None else spec.default_out_dir()
    if is_result_dir(out) or (
        out.is_dir()
        and any(out.iterdir())
        and not (out / campaign.RUNS_DIR).is_dir()
        and not (out / "campaign.json").is_file()
    ):
        raise QossimError(f"{out}: exists and is not a campaign directory; choose another --out")
    if args.dry_run:
        return _dry_run(spec, out)
    table = campaign.run_campaign(
        spec,
        backend=args.backend,
        address=args.address,
        jobs=args.jobs,
        progress=not args.quiet,
        out=out,
    )
    summary = campaign.summarize(table)
    import pandas as pd

    counts = table.attrs.get("counts", {})
    params = list(summary.attrs.get("params", []))
    points = len(spec.points())
    print(
        f"campaign {spec.name}: {points} point{'s' if points != 1 else ''} x "
        f"{len(spec.seeds)} seed{'s' if len(spec.seeds) != 1 else ''} = "
        f"{counts.get('total', len(table))} runs: {counts.get('done', 0)} executed, "
        f"{counts.get('cached', 0)} already stored"
    )
    names = list(dict.fromkeys(summary["metric"])) if len(summary) else []
    if args.full:
        with pd.option_context("display.max_rows", None, "display.width", 200):
            print(summary.to_string(index=False) if len(summary) else "(no numeric metrics)")
    elif spec.metrics:
        selected, unmatched = campaign.select_metrics(names, spec.metrics)
        for pattern in unmatched:
            _print_err(
                f"{args.campaign}: campaign.metrics: {shown(repr(pattern))} matches no metric "
                "the runs report (qossim show RUN_DIR lists them)"
            )
        if selected:
            print(_point_table(summary, params, selected))
    else:
        print(
            f"{len(names)} metrics per run; name the ones to print here with "
            "metrics = [...] in [campaign], or pass --full for all of them"
        )
    print(f"results: {out}")
    print(
        f"tables: {out / 'runs.csv'} (one row per run), "
        f"{out / 'summary.csv'} (mean and 95% interval per point and metric)"
    )
    return EXIT_OK


_TIME_UNITS = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def _duration_s(text: Any) -> float | None:
    """Seconds of a scenario time such as ``"1.5s"`` (None when it is not one)."""
    import re

    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([a-z]+)\s*", str(text))
    if not match or match.group(2) not in _TIME_UNITS:
        return None
    try:
        return float(match.group(1)) * _TIME_UNITS[match.group(2)]
    except ValueError:
        return None


def _dry_run(spec: campaign.Campaign, out: Path) -> int:
    """Print a campaign's points, its runs and what they cost, and run nothing."""
    from qossim import _toml

    jobs = spec.jobs(out)
    stored = sum(1 for j in jobs if is_result_dir(j.run_dir))
    points = spec.points()
    print(
        f"campaign {spec.name}: {len(points)} points x {len(spec.seeds)} seeds = "
        f"{len(jobs)} runs ({stored} already stored in {out}, {len(jobs) - stored} to run)"
    )
    base = _toml.loads(spec.scenario_text).get("run", {})
    total = 0.0
    for k, point in enumerate(points, start=1):
        fixed = {**spec.fixed, **point}
        duration = _duration_s(fixed.get("run.duration", base.get("duration"))) or 0.0
        mine = jobs[(k - 1) * len(spec.seeds) : k * len(spec.seeds)]
        total += duration * sum(1 for j in mine if not is_result_dir(j.run_dir))
        label = ", ".join(f"{p}={_fmt(campaign.param_label(v))}" for p, v in point.items())
        print(f"  {k:>4}  {label or '(no grid)'}")
    print(f"simulated time to run: {total:g} s over {len(jobs) - stored} runs")
    return EXIT_OK


def _point_table(summary: Any, params: Sequence[str], metrics: Sequence[str]) -> str:
    """One row per grid point, one ``mean ± half-width`` column per metric."""
    rows: dict[tuple[Any, ...], dict[str, str]] = {}
    for record in summary.to_dict("records"):
        if record["metric"] not in metrics:
            continue
        key = tuple(record[p] for p in params)
        cell = {"value": record["mean"], "ci_low": record["ci_low"]}
        cell.update(ci_high=record["ci_high"], runs=record["runs"])
        rows.setdefault(key, {})[record["metric"]] = studies.format_cell(cell)
    header = [*params, *metrics] if params else list(metrics)
    body = [
        [*(_fmt(v) for v in key), *(cells.get(m, "") for m in metrics)]
        for key, cells in rows.items()
    ]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace) -> int:
    """Print a run directory's manifest, summary and time series, or a campaign's table.

    ``--metric PATTERN`` (repeatable, shell-style) keeps some summary metrics;
    ``--format json|csv`` prints the summary (or the campaign's per-point summary) as
    JSON or CSV instead of text.
    """
    path = Path(args.rundir)
    if (path / campaign.RUNS_DIR).is_dir() and not is_result_dir(path):
        return _show_campaign(path, args)
    _check_whole(path)
    result = Result.load(args.rundir)
    pairs = _flatten(result.summary)
    if args.metric:
        pairs = [(k, v) for k, v in pairs if _matches(k, args.metric)]
    if args.format == "json":
        print(json.dumps(dict(pairs), indent=1, allow_nan=False, default=str))
        return EXIT_OK
    if args.format == "csv":
        import csv

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(["metric", "value", "unit", "window"])
        summary = result.summary
        writer.writerows((k, v, summary.unit(k) or "", summary.window(k) or "") for k, v in pairs)
        return EXIT_OK
    print(f"run: {args.rundir}")
    print("manifest:")
    _print_pairs([(k, v) for k, v in result.manifest.items() if k != "series"])
    print("summary:")
    _print_declared(pairs, result.summary)
    print("series:")
    for name in result.series_names:
        frame = result.timeseries(name)
        print(f"  {name}: {len(frame)} rows; columns: {', '.join(map(str, frame.columns))}")
    if not result.series_names:
        print("  (none)")
    return EXIT_OK


def _ranges(values: Sequence[int]) -> str:
    """``0-3, 7, 9-10`` for sorted integers (at most 12 pieces)."""
    pieces: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        pieces.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ", ".join(pieces[:12]) + (", ..." if len(pieces) > 12 else "")


def _matches(name: str, patterns: Sequence[str]) -> bool:
    import fnmatch

    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _show_campaign(path: Path, args: argparse.Namespace) -> int:
    """Print a campaign directory's per-point summary (mean, interval, runs)."""
    table = campaign.gather(path)
    summary = campaign.summarize(table)
    if args.metric:
        summary = summary[[_matches(str(m), args.metric) for m in summary["metric"]]]
    if args.format == "json":
        sys.stdout.write(summary.to_json(orient="records", lines=True))
        return EXIT_OK
    if args.format == "csv":
        sys.stdout.write(summary.to_csv(index=False))
        return EXIT_OK
    params = list(summary.attrs.get("params", []))
    print(f"campaign: {path} ({len(table)} runs; parameters: {', '.join(params) or 'none'})")
    groups = summary.groupby(params, sort=False, dropna=False) if params else [((), summary)]
    for point, rows in groups:
        values = point if isinstance(point, tuple) else (point,)
        label = ", ".join(f"{p}={_fmt(v)}" for p, v in zip(params, values, strict=True))
        print(f"point: {label or '(no grid)'}")
        cells = []
        for record in rows.to_dict("records"):
            cell = {"value": record["mean"], "ci_low": record["ci_low"]}
            cell.update(ci_high=record["ci_high"], runs=record["runs"])
            cells.append((str(record["metric"]), studies.format_cell(cell)))
        _print_pairs(cells)
    return EXIT_OK


def cmd_trace(args: argparse.Namespace) -> int:
    """Print a run's packet trace, one readable line per record, in time order.

    The trace is read in batches, keeping only the records printed, so that a trace
    larger than memory is shown too.
    """
    from qossim.traces import format_view, traced_flows, view_trace

    _check_whole(Path(args.rundir))  # a truncated or edited trace file is named, not read
    result = Result.load(args.rundir)
    try:
        path = result.trace_path(args.name)
    except KeyError as exc:
        raise QossimError(f"{args.rundir}: {exc.args[0]}") from None
    if args.flow is not None:
        _, total = view_trace(path, flow=args.flow, limit=1)
        if total == 0:
            listed = _ranges(traced_flows(path)) or "none"
            raise QossimError(
                f"{args.rundir}: --flow {args.flow}: no record of this flow in the trace "
                f"(flows traced: {listed})"
            )
    frame, total = view_trace(path, flow=args.flow, events=args.event, limit=args.limit)
    print(format_view(frame, limit=args.limit, total=total))
    return EXIT_OK


def cmd_fingerprint(args: argparse.Namespace) -> int:
    """Check (or with --update, record) the fingerprints of scenarios and campaign points."""
    from qossim import fingerprint

    found = fingerprint.find_root(recording=args.update)
    if found is None and not args.store:
        raise QossimError(
            "fingerprint: no qossim checkout here or above (a folder with scenarios/ and "
            "tests/data/fingerprints.jsonl); run it inside a checkout or give --store FILE"
        )
    root = found if found is not None else Path(".")
    paths = args.paths or [str(root / "scenarios"), str(root / "studies")]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        raise QossimError([f"{p}: no such file or directory" for p in missing])
    store = Path(args.store) if args.store else fingerprint.default_store(root)
    if not store.is_file() and not args.update:
        raise QossimError(f"{store}: no fingerprint store (record one with --update)")
    # Names are relative to the checkout, through any symbolic links on the way.
    root = root.resolve()
    paths = [str(Path(p).resolve()) for p in paths]
    files = {
        Path(os.path.relpath(f, root)).as_posix()
        for p in paths
        for f in (sorted(Path(p).rglob("*.toml")) if Path(p).is_dir() else [Path(p)])
    }
    dirs = [Path(os.path.relpath(p, root)).as_posix() + "/" for p in paths if Path(p).is_dir()]

    def covered(file: str) -> bool:
        # A stored file under a checked folder is checked even if it is gone.
        return file in files or any(file.startswith(d) for d in dirs)

    stored = fingerprint.load(store)
    mine = [f for f in stored if covered(f.file)]
    fresh = fingerprint.compute(paths, root)
    changes = fingerprint.compare(mine, fresh)
    for line in changes:
        print(line)
    if args.update:
        kept = [f for f in stored if not covered(f.file)]
        fingerprint.save(store, kept + fresh)
        print(f"{store}: {len(fresh)} fingerprints recorded, {len(changes)} changed")
        return EXIT_OK
    if changes:
        print(
            f"{len(changes)} of {len(fresh)} fingerprints differ from {store}; if the change "
            "is intended, record it with: "
            + " ".join(["qossim fingerprint --update", *(args.paths or [])])
        )
        return 1
    print(f"{len(fresh)} fingerprints match {store}")
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    """Build index.html for a run directory or a campaign directory."""
    source = Path(args.dir)
    out = Path(args.out) if args.out is not None else source / "report"
    if is_result_dir(source):
        _check_whole(source)
        build = report.run_report
    elif (source / campaign.RUNS_DIR).is_dir():
        build = report.campaign_report
    else:
        raise QossimError(
            f"{source}: neither a run directory (no manifest.json) "
            f"nor a campaign directory (no {campaign.RUNS_DIR}/)"
        )
    if out.exists() and not (out / "index.html").is_file() and not _empty_dir(out):
        raise QossimError(f"{out}: exists and is not a report directory; choose another --out")
    with atomic_dir(out, replace=True) as tmp:
        build(source, tmp)
    print(f"report: {out / 'index.html'}")
    return EXIT_OK


def cmd_reproduce(args: argparse.Namespace) -> int:
    """Reproduce one study (or every registered study) and write its report."""
    names = [args.study] if args.study else studies.study_names()
    only = list(args.only) if args.only else None
    plan: list[tuple[str, list[str] | None]] = []
    if only and not args.study:
        claimed: set[str] = set()
        for name in names:
            module = studies.get_study(name)
            mine = [o for o in only if o in [str(e) for e in module.EXPERIMENTS]]
            claimed.update(mine)
            if mine:
                plan.append((name, mine))
        missing = [o for o in only if o not in claimed]
        if missing:
            raise QossimError(
                [f"reproduce: no registered study has experiment {o!r}" for o in missing]
            )
    else:
        for name in names:
            studies.check_only(name, studies.get_study(name), only)
            plan.append((name, only))
    settings = studies.Execution(backend=args.backend, address=args.address, jobs=args.jobs)

    # One pool of local workers serves every study and table (see reuse_workers).
    def out_of(name: str) -> Path | None:
        if args.out is None:
            return None
        return Path(args.out) if args.study else Path(args.out) / name

    if len(plan) > 1 and not args.quiet:
        from qossim import costs

        folders = {n: out_of(n) or Path("reports") / n for n, _ in plan}
        _print_err(costs.estimate_all(folders, args.quick, args.jobs))
    with studies.use_execution(settings), campaign.reuse_workers():
        for name, selected in plan:
            out_dir = out_of(name)
            if not args.quiet:
                from qossim import costs

                folder = out_dir if out_dir is not None else Path("reports") / name
                _print_err(costs.estimate(name, args.quick, folder, args.jobs))
            started = time.perf_counter()
            output, report_path = studies.reproduce(
                name,
                quick=args.quick,
                only=selected,
                out_dir=out_dir,
                progress=not args.quiet,
            )
            from qossim import costs

            elapsed = time.perf_counter() - started
            costs.record(Path(report_path).parent, name, args.quick, elapsed, args.jobs)
            if args.format == "json":
                sys.stdout.write(studies.format_json(output))
                sys.stdout.flush()
                _print_err(f"report: {report_path}")
            else:
                sys.stdout.write(studies.format_text(output, name))
                print(f"report: {report_path}")
    return EXIT_OK


# ----------------------------------------------------------------------------
# parser
# ----------------------------------------------------------------------------


def _int_in(low: int, high: int, message: str) -> Callable[[str], int]:
    """Return an argparse type: an integer from ``low`` to ``high`` (else ``message``).

    A value it refuses is reported by :class:`_Parser` as one line, ``--option: why``.
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {_cut(text)!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{message}, got {_cut(str(value))}")
        return value

    parse.one_line = True  # type: ignore[attr-defined]
    return parse


def _cut(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters (with "…")."""
    return text if len(text) <= limit else text[:limit] + "…"


class _Parser(argparse.ArgumentParser):
    """The command's parser: a refused option value is one line, ``--option: why``.

    It exits with status 2 and prints no usage text (the option is right, its value not).
    """

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError as exc:
            if getattr(action.type, "one_line", False):
                name = "/".join(action.option_strings) or str(action.dest)
                self.exit(EXIT_USER, f"{name}: {exc.message}\n")
            raise


_positive_int = _int_in(1, 2**63 - 1, "must be >= 1")
_flow_id = _int_in(0, 2**63 - 1, "a flow id is from 0 to 2^63 - 1")
_seed = _int_in(0, 2**64 - 1, "must be from 0 to 2^64 - 1")


def _studies_listing() -> str:
    """Return the registered studies with their titles and experiment ids (``--help``)."""
    lines = ["studies and their experiments (--only ID ...):"]
    for name in studies.study_names():
        try:
            module = studies.get_study(name)
        except (QossimError, ImportError) as exc:
            lines.append(f"  {name}: cannot be loaded ({exc})")
            continue
        title = getattr(module, "TITLE", "") or ""
        lines.append(f"  {name}" + (f" — {title}" if title else ""))
        ids = " ".join(str(e) for e in module.EXPERIMENTS)
        lines.append(f"      {ids}")
    return "\n".join(lines) + "\n"


def _version_text() -> str:
    try:
        from qossim import _engine

        engine = _engine.core_version()
    except QossimError:
        engine = "not built"
    return f"qossim {__version__} (engine {engine})"


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``qossim`` command."""
    parser = _Parser(
        prog="qossim",
        description="Discrete-event simulator for network traffic management and QoS.",
    )
    parser.add_argument("--version", action="store_true", help="print versions and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add_set(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--set",
            action="append",
            metavar="KEY.PATH=VALUE",
            help="override a scenario value (repeatable)",
        )

    def add_backend(p: argparse.ArgumentParser) -> None:
        p.add_argument("--backend", choices=campaign.BACKENDS, default="local")
        p.add_argument(
            "--address",
            help="Dask scheduler (tcp://host:8786) or Ray cluster (ray://host:10001, auto)",
        )
        p.add_argument("--jobs", type=_positive_int, help="parallel runs (default: all cores)")

    p = sub.add_parser("run", help="run one scenario")
    p.add_argument("file", help="scenario TOML file")
    add_set(p)
    p.add_argument("--seed", type=_seed, help="run seed (default: chosen by the engine)")
    p.add_argument("--out", help="run directory (default: runs/<scenario>-<hash8>-s<seed>)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--force", action="store_true", help="replace a run stored at --out")
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser("validate", help="check a scenario without running it")
    p.add_argument("file", help="scenario TOML file")
    add_set(p)
    p.set_defaults(handler=cmd_validate)

    p = sub.add_parser("describe", help="list the components, or one's parameters")
    p.add_argument("kind", nargs="?", help="a kind such as queue.pie (default: list every kind)")
    p.add_argument("--markdown", action="store_true", help="print the reference tables")
    p.set_defaults(handler=cmd_describe)

    p = sub.add_parser("sweep", help="run a campaign (scenario x grid x seeds)")
    p.add_argument("campaign", help="campaign TOML file")
    add_backend(p)
    p.add_argument("--out", help="campaign directory (default: runs/<campaign name>)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--full", action="store_true", help="print every metric of every point, not just the named"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the points and the runs to do; run nothing"
    )
    p.set_defaults(handler=cmd_sweep)

    p = sub.add_parser("show", help="print a run directory or a campaign directory")
    p.add_argument("rundir", help="run directory, or campaign directory (its per-point summary)")
    p.add_argument(
        "--metric",
        action="append",
        metavar="PATTERN",
        help="only summary metrics matching this shell-style pattern (repeatable)",
    )
    p.add_argument(
        "--format", choices=("text", "json", "csv"), default="text", help="output format"
    )
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser("trace", help="print a run's packet trace in time order")
    p.add_argument("rundir", help="run directory of a scenario with [[trace]]")
    p.add_argument("--name", help="which [[trace]] (needed when the run has several)")
    p.add_argument("--flow", type=_flow_id, help="only this flow id")
    p.add_argument(
        "--event",
        action="extend",
        nargs="+",
        choices=("enqueue", "drop", "mark", "transmit", "arrival", "deliver"),
        help="only these events",
    )
    p.add_argument("--limit", type=_positive_int, default=200, help="records to print (200)")
    p.set_defaults(handler=cmd_trace)

    p = sub.add_parser("fingerprint", help="check that scenarios still behave exactly as recorded")
    p.add_argument("paths", nargs="*", help="files or folders (default: scenarios studies)")
    p.add_argument("--update", action="store_true", help="record the new fingerprints")
    p.add_argument("--store", help="fingerprint file (default: tests/data/fingerprints.jsonl)")
    p.set_defaults(handler=cmd_fingerprint)

    p = sub.add_parser("report", help="build an HTML report of a run or a campaign")
    p.add_argument("dir", help="run directory or campaign directory")
    p.add_argument("--out", help="report directory (default: DIR/report)")
    p.set_defaults(handler=cmd_report)

    p = sub.add_parser(
        "reproduce",
        help="reproduce a study's tables and figures",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    plain_help = p.format_help

    def help_with_studies(plain: Any = plain_help) -> str:
        # The studies are imported only when the help is asked for.
        return plain() + "\n" + _studies_listing()

    p.format_help = help_with_studies  # type: ignore[method-assign]
    p.add_argument("study", nargs="?", help="study name (default: every registered study)")
    p.add_argument("--quick", action="store_true", help="shorter runs, fewer seeds and points")
    p.add_argument("--only", action="extend", nargs="+", metavar="ID", help="experiment ids to run")
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: aligned tables; json: JSON Lines, one record per line",
    )
    p.add_argument("--out", help="output directory (default: reports/<study>)")
    add_backend(p)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(handler=cmd_reproduce)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``qossim`` command with ``argv`` (default: ``sys.argv[1:]``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        print(_version_text())
        return EXIT_OK
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USER
    try:
        return int(args.handler(args))
    except EngineError as exc:
        _print_err(*exc.lines)
        return EXIT_INTERNAL
    except CampaignInterrupted as exc:
        _print_err(*exc.lines)
        return 128 + exc.signum
    except QossimError as exc:
        _print_err(*exc.lines)
        return EXIT_USER
    except KeyboardInterrupt:
        _print_err("qossim: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except OSError as exc:
        where = exc.filename if exc.filename is not None else "qossim"
        _print_err(f"{where}: {exc.strerror or exc}")
        return EXIT_USER
    except Exception as exc:
        if os.environ.get("QOSSIM_TRACEBACK"):
            raise
        _print_err(
            f"qossim: internal error: {type(exc).__name__}: {exc} "
            "(set QOSSIM_TRACEBACK=1 to see the traceback)"
        )
        return EXIT_INTERNAL


def _silence_stdout() -> None:
    """Point stdout at /dev/null after a broken pipe so exit does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
