"""Self-contained HTML reports: one offline page, figures embedded.

The page has inline CSS, PNG figures embedded as ``data:`` URIs and no
reference to any other resource, so it can be mailed, archived or opened
without a network.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from qossim import plots
from qossim.campaign import gather, summarize
from qossim.results import Result, Summary, atomic_write_text

__all__ = [
    "VERDICT_CLASSES",
    "Styled",
    "campaign_report",
    "format_cell",
    "render_report",
    "run_report",
    "write_report",
]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 70rem; padding: 0 1rem; color: #1b1b1b; line-height: 1.45; }
h1 { font-size: 1.6rem; border-bottom: 2px solid #444; padding-bottom: .3rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0 1.5rem; font-size: .9rem; }
th, td { border: 1px solid #bbb; padding: .25rem .6rem; }
th { background: #eee; text-align: left; }
div.scroll { overflow-x: auto; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0 2rem; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: .9rem; color: #444; margin-top: .3rem; }
ul.notes li { margin: .2rem 0; }
footer { margin-top: 3rem; font-size: .8rem; color: #666; }
nav ul { columns: 2; font-size: .9rem; }
td.within { background: #d9f2d9; }
td.close { background: #fff2c2; }
td.differs { background: #f8d0d0; }
ul.differences li { margin: .2rem 0; }
"""

#: CSS class of a table cell by verdict (see :mod:`qossim.studies.published`).
VERDICT_CLASSES = {"within CI": "within", "close": "close", "differs": "differs"}


class Styled(str):
    """A table cell's text with a CSS class (e.g. a verdict's colour) for the HTML page."""

    css: str | None

    def __new__(cls, text: str, css: str | None = None) -> Styled:
        """Return ``text`` carrying the CSS class ``css`` (None: no class)."""
        obj = super().__new__(cls, text)
        obj.css = css
        return obj


TableLike = Any  # a pandas DataFrame or a list of dicts


def format_cell(value: Any) -> str:
    """Format one table cell: numbers with 6 significant digits, None/NaN as blank."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.6g}"
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return format_cell(value.item())
        except (TypeError, ValueError):
            pass
    return str(value)


def _rows_of(table: TableLike) -> tuple[list[str], list[list[Any]]]:
    if hasattr(table, "columns") and hasattr(table, "itertuples"):
        columns = [str(c) for c in table.columns]
        rows = [list(row) for row in table.itertuples(index=False, name=None)]
        return columns, rows
    records = list(table)
    columns: list[str] = []
    for record in records:
        if not isinstance(record, Mapping):
            raise TypeError("a table must be a DataFrame or a list of dicts")
        for key in record:
            if str(key) not in columns:
                columns.append(str(key))
    rows = [[record.get(c) for c in columns] for record in records]
    return columns, rows


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iuf")
    )


def _table_html(table: TableLike) -> str:
    columns, rows = _rows_of(table)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for row in rows:
        cells = []
        for value in row:
            classes = ["num"] if _is_number(value) else []
            if isinstance(value, Styled) and value.css:
                classes.append(value.css)
            css = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{css}>{html.escape(format_cell(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    if not rows:
        body.append(f'<tr><td colspan="{max(1, len(columns))}">(no rows)</td></tr>')
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _figure_html(title: str, png: str | os.PathLike[str] | bytes) -> str:
    data = png if isinstance(png, bytes) else Path(png).read_bytes()
    if not data.startswith(b"\x89PNG"):
        raise ValueError(f"figure {title!r}: not a PNG image")
    encoded = base64.b64encode(data).decode("ascii")
    caption = html.escape(title)
    return (
        f'<figure><img alt="{caption}" src="data:image/png;base64,{encoded}">'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def _anchor(prefix: str, index: int) -> str:
    return f"{prefix}-{index}"


def render_report(
    title: str,
    tables: Sequence[tuple[str, TableLike]] = (),
    figures: Sequence[tuple[str, str | os.PathLike[str] | bytes]] = (),
    notes: str | Iterable[str] | None = None,
    *,
    lead: Sequence[str] = (),
    lead_table: tuple[str, TableLike] | None = None,
    figures_first: bool = False,
) -> str:
    """Return the HTML text of a report (see :func:`write_report`)."""
    from qossim import __version__

    note_list = [notes] if isinstance(notes, str) else list(notes or [])
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if lead or lead_table is not None:
        parts.append('<h2 id="published">Against the published results</h2>')
        if lead_table is not None:
            parts.append(f"<p>{html.escape(lead_table[0])}</p>")
            parts.append(_table_html(lead_table[1]))
        if lead:
            parts.append('<ul class="differences">')
            parts.extend(f"<li>{html.escape(str(n))}</li>" for n in lead)
            parts.append("</ul>")
    toc_tables = [
        f'<li><a href="#{_anchor("t", i)}">{html.escape(t)}</a></li>'
        for i, (t, _) in enumerate(tables)
    ]
    toc_figures = [
        f'<li><a href="#{_anchor("f", i)}">{html.escape(t)}</a></li>'
        for i, (t, _) in enumerate(figures)
    ]
    toc = toc_figures + toc_tables if figures_first else toc_tables + toc_figures
    if len(toc) > 3:
        parts.append("<nav><ul>" + "".join(toc) + "</ul></nav>")
    if note_list:
        parts.append('<h2>Notes</h2><ul class="notes">')
        parts.extend(f"<li>{html.escape(str(n))}</li>" for n in note_list)
        parts.append("</ul>")
    table_parts, figure_parts = [], []
    for i, (table_title, table) in enumerate(tables):
        table_parts.append(f'<h2 id="{_anchor("t", i)}">{html.escape(table_title)}</h2>')
        table_parts.append(_table_html(table))
    for i, (figure_title, png) in enumerate(figures):
        figure_parts.append(f'<h2 id="{_anchor("f", i)}">{html.escape(figure_title)}</h2>')
        figure_parts.append(_figure_html(figure_title, png))
    parts += figure_parts + table_parts if figures_first else table_parts + figure_parts
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f"<footer>qossim {html.escape(__version__)} — {stamp}</footer>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(
    directory: str | os.PathLike[str],
    title: str,
    tables: Sequence[tuple[str, TableLike]] = (),
    figures: Sequence[tuple[str, str | os.PathLike[str] | bytes]] = (),
    notes: str | Iterable[str] | None = None,
    *,
    lead: Sequence[str] = (),
    lead_table: tuple[str, TableLike] | None = None,
    figures_first: bool = False,
) -> Path:
    """Write ``DIRECTORY/index.html`` atomically and return its path.

    ``tables`` is a list of ``(title, DataFrame or list of dicts)``;
    ``figures`` a list of ``(title, PNG path or PNG bytes)``, embedded as
    base64 data URIs; ``notes`` a string or list of strings. ``lead_table`` and
    ``lead`` (lines) open the page under "Against the published results". Cells that
    are :class:`Styled` carry their CSS class; ``figures_first`` puts the figures before
    the tables. The page references no external resource.
    """
    text = render_report(
        title, tables, figures, notes, lead=lead, lead_table=lead_table, figures_first=figures_first
    )
    return atomic_write_text(Path(directory) / "index.html", text)


# ----------------------------------------------------------------------------
# automatic reports of run and campaign directories
# ----------------------------------------------------------------------------

_TIME_COLUMNS = ("t_s", "time_s", "t", "time")


def _time_column(columns: Sequence[str]) -> str:
    for name in _TIME_COLUMNS:
        if name in columns:
            return name
    return str(columns[0])


def _flat(summary: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for key, value in summary.items():
        if isinstance(value, Mapping):
            items.extend(_flat(value, f"{prefix}{key}."))
        else:
            items.append((f"{prefix}{key}", value))
    return items


def _short(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return value


#: What several series of one unit are, for their common axis.
_QUANTITIES = {
    "Mb/s": "rate",
    "packets": "packets",
    "fraction": "fraction",
    "s": "time",
    "segments": "window",
    "cells": "cells",
    "flows": "flows",
    "%": "percentage",
    "B": "bytes",
}

#: Units as written on axes, from the units the engine declares.
_AXIS_UNITS = {"b/s": "Mb/s", "bit/s": "Mb/s"}


def _unit_of(name: str, fallback: str | None = None) -> str:
    """Return the declared unit of a summary key or series (else ``fallback``, else a guess)."""
    from qossim.declared import describe

    found = describe(name)
    if found is not None and found.unit != "the series' unit":
        return found.unit
    if fallback:
        return fallback
    return plots.unit_from_name(name, default="value")


def _scaled(values: Sequence[float], unit: str) -> tuple[list[float], str]:
    """Return values in the unit shown on an axis (rates in Mb/s)."""
    if unit in _AXIS_UNITS:
        return [float(v) / 1e6 for v in values], _AXIS_UNITS[unit]
    return [float(v) for v in values], unit


def _names(summary: Mapping[str, Any], prefix: str, suffix: str) -> list[str]:
    """Return the names NAME of the keys ``PREFIX.NAME.SUFFIX`` (links, entries, agents)."""
    head, tail = prefix + ".", "." + suffix
    return [k[len(head) : -len(tail)] for k in summary if k.startswith(head) and k.endswith(tail)]


def _bars(
    labels: Sequence[str],
    stacks: Mapping[str, Sequence[float]],
    *,
    y_label: str,
    y_unit: str,
    x_label: str,
    title: str,
    legend: bool = False,
) -> Any:
    """Draw a bar chart, stacked when ``stacks`` has several named parts (legend: their names)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.grid(True, axis="y", alpha=0.3)
    bottom = [0.0] * len(labels)
    for part, values in stacks.items():
        ax.bar(list(labels), list(values), bottom=bottom, label=part)
        bottom = [b + float(v) for b, v in zip(bottom, values, strict=True)]
    ax.set_xlabel(x_label)
    ax.set_ylabel(plots.axis_label(y_label, y_unit))
    if len(labels) > 6:
        ax.tick_params(axis="x", labelrotation=45)
    ax.set_title(title)
    if legend or len(stacks) > 1:
        ax.legend(fontsize="small", title="cause" if legend else None)
    return fig


def _drop_causes(summary: Mapping[str, Any], link: str) -> dict[str, float]:
    """Return a link's drops over the run by cause, each under its mechanism's name."""
    p = f"link.{link}."
    get = lambda k: float(summary.get(p + k) or 0)  # noqa: E731
    causes: dict[str, float] = {}
    if p + "red_random_drops" in summary:
        causes["RED early (random)"] = get("red_random_drops")
        causes["RED forced"] = get("red_forced_drops")
    elif p + "rio_early_drops_in" in summary:
        causes["RIO early, IN"] = get("rio_early_drops_in")
        causes["RIO early, OUT"] = get("rio_early_drops_out")
    elif p + "codel_early_drops" in summary:
        causes["CoDel"] = get("codel_early_drops")
    else:
        causes["early (AQM)"] = get("drops_early")
    causes["buffer overflow"] = get("drops_overflow")
    causes["policed"] = get("drops_policed")
    causes["pushed out"] = get("drops_pushed_out")
    return causes


def _run_figures(result: Result, out: Path) -> list[tuple[str, Path]]:
    """Draw the figures of a single-run report, most telling first."""
    summary = result.summary
    figures: list[tuple[str, Path]] = []
    units = dict(result.manifest.get("series_units") or {})

    def keep(fig: Any, title: str) -> None:
        path = plots.save(fig, out / "figures" / f"figure-{len(figures)}.png")
        figures.append((title, path))

    # Time series, one figure per unit: the scenario's names in the legend.
    names = result.series_names
    by_unit: dict[str, list[str]] = {}
    cdfs = [n for n in names if n.endswith(".delay_cdf")]
    for name in names:
        if name in cdfs:
            continue
        by_unit.setdefault(_unit_of(name, units.get(name)), []).append(name)
    for unit, group in by_unit.items():
        import pandas as pd

        frames = []
        for name in group[:12]:
            frame = result.timeseries(name)
            if frame.empty or "value" not in frame.columns:
                continue
            x = _time_column([str(c) for c in frame.columns])
            values, shown = _scaled(frame["value"], unit)
            frames.append((name, pd.DataFrame({"t": frame[x], name: values}), shown))
        if not frames:
            continue
        shown = frames[0][2]
        # A TCP sender's threshold starts at the advertised window (no threshold yet):
        # drawn only where it is within the windows' range, so the windows stay visible.
        windows = [f[name].max() for name, f, _ in frames if name.endswith(".cwnd")]
        fig, ax = plots._new_figure()
        for name, frame, _ in frames:
            values = frame[name]
            if windows and name.endswith(".ssthresh"):
                values = values.where(values <= 2 * max(windows))
            ax.plot(frame["t"], values, label=name)
        ax.set_xlabel(plots.axis_label("time", "s"))
        last = {name.rsplit(".", 1)[-1] for name, _, _ in frames}
        if len(frames) == 1:
            quantity = frames[0][0]
        elif last <= {"cwnd", "ssthresh"}:
            quantity = "TCP window"
        elif len(last) == 1:
            quantity = last.pop().replace("rtt", "RTT")
        else:
            quantity = _QUANTITIES.get(shown, "quantity")
        ax.set_ylabel(plots.axis_label(quantity, shown))
        if len(frames) > 1:
            ax.legend(fontsize="small")
        ax.set_title(frames[0][0] if len(frames) == 1 else f"{quantity} ({shown})")
        more = f" (first 12 of {len(group)})" if len(group) > 12 else ""
        keep(fig, f"Time series in {shown}{more}")
    # Delay distribution of every traffic entry.
    if cdfs:
        fig, ax = plots._new_figure()
        for name in cdfs:
            frame = result.timeseries(name)
            ax.step(frame["t"] * 1e3, frame["value"], where="post", label=name[6:-10])
        ax.set_xlabel(plots.axis_label("one-way delay", "ms"))
        ax.set_ylabel(plots.axis_label("packets delivered with at most this delay", "fraction"))
        ax.legend(fontsize="small", title="traffic entry")
        ax.set_title("Delay distribution per traffic entry (after warm-up)")
        keep(fig, "Delay distribution (CDF) per traffic entry")
    # Throughput per traffic entry.
    groups = _names(summary, "group", "throughput_bps")
    if groups:
        values = [float(summary[f"group.{g}.throughput_bps"] or 0) / 1e6 for g in groups]
        fig = _bars(
            groups,
            {"throughput": values},
            y_label="throughput",
            y_unit="Mb/s",
            x_label="traffic entry",
            title="Throughput per traffic entry (after warm-up)",
        )
        keep(fig, "Throughput per traffic entry")
    # TCP goodput per connection.
    conns = _names(summary, "agent", "rx.goodput_bps")
    if conns:
        values = [float(summary[f"agent.{c}.rx.goodput_bps"] or 0) / 1e6 for c in conns]
        fig = _bars(
            [c.removeprefix("tcp.") for c in conns],
            {"goodput": values},
            y_label="goodput",
            y_unit="Mb/s",
            x_label="TCP connection (entry.index)",
            title="Goodput per TCP connection (after warm-up)",
        )
        keep(fig, "Goodput per TCP connection")
    # Drops by cause per link (links that dropped anything).
    links = [n for n in _names(summary, "link", "drops") if summary.get(f"link.{n}.drops")]
    if links:
        causes = {link: _drop_causes(summary, link) for link in links}
        kinds: list[str] = []
        for c in causes.values():
            kinds += [k for k, v in c.items() if v and k not in kinds]
        stacks = {k: [causes[link].get(k, 0.0) for link in links] for k in kinds}
        fig = _bars(
            links,
            stacks,
            y_label="drops",
            y_unit="packets",
            x_label="link",
            title="Drops by cause per link (whole run)",
            legend=True,
        )
        keep(fig, "Drops by cause per link")
    return figures


def _component_tables(summary: Summary) -> tuple[list[tuple[str, Any]], list[str]]:
    """Return the summary as one table per component: links, entries, flows, TCP, then the rest.

    The per-name tables have one row per link (entry, connection) and one column per
    statistic, its unit in the header; the rest lists key, value, unit and window.
    """
    frame = summary.frame
    used: set[str] = set()
    tables: list[tuple[str, Any]] = []
    notes: list[str] = []

    def pivot(title: str, prefix: str, anchor: str, label: str, busy: str = "") -> None:
        names = _names(summary, prefix, anchor)
        idle = [n for n in names if busy and not summary.get(f"{prefix}.{n}.{busy}")]
        names = [n for n in names if n not in idle]
        if idle:
            used.update(k for n in idle for k in frame.index if k.startswith(f"{prefix}.{n}."))
            notes.append(f"{title} that carried nothing (left out): {', '.join(idle)}.")
        if not names:
            return
        rows = []
        for name in names:
            head = f"{prefix}.{name}."
            row: dict[str, Any] = {label: name}
            for key in frame.index:
                if key.startswith(head) and "." not in key[len(head) :]:
                    stat = key[len(head) :]
                    unit = frame.at[key, "unit"]
                    row[f"{stat} ({unit})" if unit else stat] = frame.at[key, "value"]
                    used.add(key)
            rows.append(row)
        tables.append((title, rows))

    pivot("Links", "link", "tx_pkts", "link", busy="tx_pkts")
    pivot("Traffic entries", "group", "sent_pkts", "entry")
    flows = sorted({k.rsplit(".", 1)[0] for k in frame.index if k.startswith("flow.")})
    if flows:
        rows = []
        for f in flows:
            row: dict[str, Any] = {"flow": f[5:]}
            for key in frame.index:
                if key.startswith(f + ".") and "." not in key[len(f) + 1 :]:
                    row[f"{key[len(f) + 1 :]} ({frame.at[key, 'unit']})"] = frame.at[key, "value"]
                    used.add(key)
            rows.append(row)
        tables.append(("Flows", rows))
    pivot("TCP connections (senders)", "agent", "segments_sent", "connection")
    pivot("TCP connections (receivers)", "agent", "goodput_bps", "receiver")
    rest = [k for k in frame.index if k not in used and not k.startswith("series.")]
    by_component: dict[str, list[dict[str, Any]]] = {}
    for key in rest:
        component = frame.at[key, "component"] or "undeclared"
        by_component.setdefault(component, []).append(
            {
                "statistic": key,
                "value": frame.at[key, "value"],
                "unit": frame.at[key, "unit"],
                "window": frame.at[key, "window"],
            }
        )
    for component, rows in by_component.items():
        tables.append((f"{component[0].upper()}{component[1:]}", rows))
    series = [k for k in frame.index if k.startswith("series.") and k.endswith(".mean")]
    if series:
        rows = [
            {
                "series": k[7:-5],
                "mean": frame.at[k, "value"],
                "95% CI half-width": summary.get(k[:-5] + ".ci_half_width"),
                "samples": summary.get(k[:-5] + ".samples"),
            }
            for k in series
        ]
        tables.append(("Series (after warm-up)", rows))
    return tables, notes


def run_report(run_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> Path:
    """Write a report of one run directory: figures first, then the summary by component.

    Figures: the time series (one figure per unit, the scenario's names in the legends),
    the delay distribution per traffic entry, throughput per entry, goodput per TCP
    connection and drops by cause per link. Tables: links, traffic entries, flows and
    TCP connections one row each with the units in the headers, the other statistics by
    component with unit and window, the series' means, and the manifest last.
    """
    result = Result.load(run_dir)
    out = Path(out_dir)
    manifest = [
        {"field": k, "value": _short(v)}
        for k, v in result.manifest.items()
        if k not in ("series", "files", "series_units")
    ]
    figures = _run_figures(result, out)
    tables, idle = _component_tables(result.summary)
    tables.append(("Manifest", manifest))
    m = result.manifest
    notes = [
        f"Seed {m.get('seed')}, {format_cell(m.get('sim_time_s'))} s simulated "
        f"(warm-up {format_cell(result.summary.get('warmup_s'))} s), "
        f"{m.get('events')} events in {format_cell(m.get('wall_s'))} s.",
        "Windows: 'run' counts the whole run; 'after warm-up' from the end of the warm-up; "
        "'end of run' is a state at the end (see docs/statistics.md).",
        *idle,
    ]
    title = f"qossim run: {Path(run_dir).name}"
    return write_report(out, title, tables, figures, notes, figures_first=True)


#: Metrics a campaign report plots when its campaign names none.
DEFAULT_PLOTTED = 12

_QUANTITY = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]*)\s*$")
_SCALE = {
    "": 1.0,
    "bps": 1.0, "b/s": 1.0, "kbps": 1e3, "kb/s": 1e3, "Mbps": 1e6, "Mb/s": 1e6,
    "Gbps": 1e9, "Gb/s": 1e9,
    "ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0,
    "B": 1.0, "KB": 1e3, "KiB": 1024.0, "MB": 1e6, "MiB": 1024.0**2, "p": 1.0,
}  # fmt: skip


def quantity(value: Any) -> float | None:
    """Return the number a parameter value stands for (``"10Mbps"`` → 1e7), or None.

    Rates, times and sizes in the scenario language's units compare by value, so a
    grid over ``["5Mbps", "10Mbps"]`` sorts and plots 5 before 10.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    match = _QUANTITY.match(str(value))
    if not match or match.group(2) not in _SCALE:
        return None
    return float(match.group(1)) * _SCALE[match.group(2)]


def _base_unit(values: Sequence[Any]) -> str:
    """Return the unit a quantity parameter is plotted in (``b/s``, ``s``, ``B``)."""
    for v in values:
        match = _QUANTITY.match(str(v))
        suffix = match.group(2) if match else ""
        if suffix.endswith(("bps", "b/s")):
            return "b/s"
        if suffix in ("ps", "ns", "us", "ms", "s", "min", "h"):
            return "s"
        if suffix.endswith("B"):
            return "B"
        if suffix == "p":
            return "packets"
    return ""


def _named_metrics(campaign_dir: Path, names: Sequence[str]) -> tuple[list[str], str]:
    """Return the metrics a campaign names (``metrics`` in its file), else the first few."""
    from qossim import _toml
    from qossim.campaign import select_metrics

    try:
        head = _toml.loads((campaign_dir / "campaign.toml").read_text(encoding="utf-8"))
        patterns = [str(p) for p in head.get("campaign", {}).get("metrics", [])]
    except (OSError, ValueError, AttributeError, TypeError):
        patterns = []  # an unreadable copy only loses the selection
    if patterns:
        chosen, _ = select_metrics(names, patterns)
        return chosen, f"Plotted: the metrics the campaign names ({', '.join(patterns)})."
    chosen = list(names)[:DEFAULT_PLOTTED]
    note = (
        f"The campaign names no metrics: the first {len(chosen)} of {len(names)} are plotted "
        "(name them with metrics = [...] in [campaign])."
    )
    return chosen, note


def campaign_report(campaign_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str]) -> Path:
    """Write a report of a campaign directory: summary by grid point, all runs, plots.

    The metrics the campaign names (``metrics`` in ``[campaign]``; else the first
    few) are each plotted against the first grid parameter whose values are numbers or
    quantities with units, in their order of value (one line per value of the other
    parameters), or as a histogram across runs when the grid has none.
    """
    table = gather(campaign_dir)
    summary = summarize(table)
    params = list(table.attrs.get("params", []))
    out = Path(out_dir)
    numeric = [
        p for p in params if all(quantity(v) is not None for v in table[p].dropna().unique())
    ]
    figures: list[tuple[str, Path]] = []
    every = list(dict.fromkeys(summary["metric"])) if len(summary) else []
    metrics, plotted_note = _named_metrics(Path(campaign_dir), every)
    for index, metric in enumerate(metrics):
        unit = _unit_of(metric)
        rows = summary[summary["metric"] == metric]
        if numeric:
            x = numeric[0]
            others = [p for p in params if p != x]
            frame = rows.copy()
            frame[f"{x} (value)"] = [quantity(v) for v in frame[x]]
            group = None
            if others:
                group = ", ".join(others)
                frame[group] = frame[others].astype(str).agg(", ".join, axis=1)
            fig = plots.mean_ci(
                frame,
                f"{x} (value)",
                "mean",
                ci=("ci_low", "ci_high"),
                group=group,
                x_label=x,
                x_unit=_base_unit(list(frame[x])) or plots.unit_from_name(x),
                y_label=metric,
                y_unit=unit,
                title=f"{metric} (mean and 95% CI)",
            )
        else:
            fig = plots.histogram(table[metric].dropna(), label=metric, unit=unit, bins=20)
        path = plots.save(fig, out / "figures" / f"metric-{index}.png")
        figures.append((metric, path))
    name = Path(campaign_dir).resolve().name
    notes = [
        f"{len(table)} runs; parameters: {', '.join(params) or 'none'}.",
        "Intervals are 95% Student-t confidence intervals across seeds.",
        plotted_note,
    ]
    tables = [("Summary by grid point", summary), ("All runs", table)]
    return write_report(out, f"qossim campaign: {name}", tables, figures, notes)
