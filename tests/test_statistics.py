"""Declared statistics: every summary key and series has a unit, a window and a meaning.

These tests run the compiled engine on small scenarios (a second or two each).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import qossim
from qossim import _engine, _toml, declared
from qossim.fingerprint import _files, _runs

ROOT = Path(__file__).resolve().parent.parent

#: An overloaded bottleneck: four CBR flows of 4 Mb/s (1000-B packets every 2 ms) into a
#: 10 Mb/s link with a 50-packet drop-tail buffer, sampled in 100-ms bins.
OVERLOAD = """
[run]
duration = "3s"
warmup = "{warmup}"
seed = 1

[topology]
kind = "chain"
length = 2
rate = "100Mbps"
delay = "1ms"
queue = {{ kind = "droptail", limit = "50p" }}

[links."n1-n2"]
rate = "10Mbps"
{queue}

[[traffic]]
name = "cbr"
from = "n0"
to = "n2"
model = "cbr"
size = "1000B"
interval = "2ms"
flows = 4

[[metric]]
kind = "link_throughput"
link = "n1-n2"
interval = "100ms"
"""


def _run(tmp_path: Path, warmup: str = "0s", queue: str = "") -> qossim.Result:
    path = tmp_path / "s.toml"
    path.write_text(OVERLOAD.format(warmup=warmup, queue=queue))
    return qossim.run(path, seed=1)


def test_the_reference_page_is_generated_from_the_declarations():
    """docs/statistics.md is what the engine declares (regenerate it when this fails)."""
    page = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
    assert page == declared.reference(), (
        "docs/statistics.md is stale: run `python -m qossim.declared > docs/statistics.md`"
    )


def test_every_key_and_series_of_the_shipped_scenarios_is_declared():
    """Each shipped scenario and study configuration (its first point, a short run)."""
    missing: dict[str, str] = {}
    for path in _files([ROOT / "scenarios", ROOT / "studies"]):
        for _label, text, filename, overrides, seed in list(_runs(path))[:1]:
            raw = _engine.run_raw(text, filename, seed, overrides, None, fingerprint_events=20_000)
            # A [[metric]] entry's own name is the user's: its unit is its kind's.
            named = {m.get("name") for m in _toml.loads(text).get("metric", [])}
            for key in [*raw["summary"], *raw.get("series", {})]:
                if key not in named and declared.describe(key) is None:
                    missing.setdefault(key, str(path.relative_to(ROOT)))
    assert not missing, f"undeclared: {sorted(missing.items())[:20]}"


def test_summary_reads_as_a_dict_and_carries_units_and_windows(tmp_path):
    """Dict access as before; the frame has unit and window columns."""
    result = _run(tmp_path, warmup="1s")
    summary = result.summary
    assert summary["link.n1-n2.drops"] == dict(summary)["link.n1-n2.drops"]
    frame = summary.frame
    assert {"value", "unit", "window"} <= set(frame.columns)
    assert frame.at["link.n1-n2.drops", "window"] == "run"
    assert frame.at["link.n1-n2.drops_after_warmup", "window"] == "after warm-up"
    assert summary.unit("group.cbr.delay_p99_s") == "s"
    assert summary.unit("link.n1-n2.throughput_bps") == "b/s"
    assert (frame["unit"] != "").all(), frame[frame["unit"] == ""].index.tolist()
    # Both windows of the drop count: the run's includes the warm-up's drops.
    assert summary["link.n1-n2.drops"] > summary["link.n1-n2.drops_after_warmup"] > 0


def test_loss_ratios_count_every_lost_packet(tmp_path):
    """Without a warm-up, the entry's lost packets are exactly the bottleneck's drops."""
    s = _run(tmp_path).summary
    drops = sum(v for k, v in s.items() if k.startswith("link.") and k.endswith(".drops"))
    assert drops > 0
    assert s["group.cbr.lost_pkts"] == drops
    assert s["group.cbr.loss_ratio"] == drops / s["group.cbr.sent_pkts_after_warmup"]
    assert s["link.n1-n2.loss_ratio"] == drops / s["link.n1-n2.offered_pkts_after_warmup"]
    # The four flows are listed one by one and add up to their entry.
    flows = [f"flow.cbr.{k}." for k in range(4)]
    assert sum(s[f + "sent_pkts"] for f in flows) == s["group.cbr.sent_pkts_after_warmup"]
    assert sum(s[f + "lost_pkts"] for f in flows) == drops
    for f in flows:
        assert s[f + "delay_mean_s"] > 0 and s[f + "jitter_mean_s"] >= 0
    assert s["group.cbr.jitter_mean_s"] > 0


def test_no_throughput_bin_exceeds_the_link_rate(tmp_path):
    """100-ms bins of a saturated 10 Mb/s link: at most 10 Mb/s each, 10 Mb/s on average.

    A bin counting packets by the start of their transmission would hold one packet too
    many whenever a packet starts just before its end (10.08 Mb/s for 1000-B packets).
    """
    result = _run(tmp_path, warmup="1s")
    frame = result.timeseries("n1-n2.throughput")
    rate = 10e6
    busy = frame[frame["t"] > 0.2]["value"]
    assert len(busy) >= 20
    # Bits are put on the wire at the rate exactly (transmission times rounded up to a
    # picosecond: at most 1e-12 s x 10 Mb/s = 1e-5 bit per packet less).
    assert busy.max() <= rate * (1 + 1e-12)
    assert busy.min() >= rate * (1 - 1e-6)
    assert result.summary["link.n1-n2.utilization"] <= 1.0


def test_class_throughput_bins_add_up_to_the_links(tmp_path):
    """The per-class series of a saturated link split each bin of the link's series.

    Both count bits as they go onto the wire: the part of a packet still being sent at
    the end of a bin counts in the next bin, for its class as for the link. Counted by
    transmission start, a class bin would hold a whole packet that the link's bin holds
    only in part, and the two classes would not add up to the link.
    """
    text = OVERLOAD.format(warmup="0s", queue="")
    text = text.replace("flows = 4", "flows = 2")
    text += """
[[traffic]]
name = "other"
from = "n0"
to = "n2"
model = "cbr"
size = "700B"
interval = "1ms"
flows = 2
class = 1
""" + "".join(
        f"""
[[metric]]
kind = "link_throughput"
link = "n1-n2"
interval = "100ms"
class = {c}
name = "class{c}"
"""
        for c in (0, 1)
    )
    path = tmp_path / "s.toml"
    path.write_text(text)
    result = qossim.run(path, seed=1)
    link = result.timeseries("n1-n2.throughput")["value"].to_numpy()
    c0 = result.timeseries("class0")["value"].to_numpy()
    c1 = result.timeseries("class1")["value"].to_numpy()
    assert len(link) == len(c0) == len(c1) >= 20
    assert (c0 > 0).all() and (c1[2:] > 0).all()
    # Sums of a few hundred bit counts of at most 1e7 in floating point: exact to 1e-6.
    assert abs(c0 + c1 - link).max() <= 1e-6 * 1e7
    assert max(c0.max(), c1.max()) <= 10e6 * (1 + 1e-12)


def test_red_drops_under_their_own_names(tmp_path):
    """A RED port reports its early drops as random and forced, beside the link's causes."""
    queue = 'queue = { kind = "red", limit = "50p", min_th = 5, max_th = 15, max_p = 0.1 }'
    s = _run(tmp_path, queue=queue).summary
    red = s["link.n1-n2.red_random_drops"] + s["link.n1-n2.red_forced_drops"]
    assert red == s["link.n1-n2.red_early_drops"] == s["link.n1-n2.drops_early"] > 0
    assert s["link.n1-n2.red_overflow_drops"] == s["link.n1-n2.drops_overflow"]
    assert declared.describe("link.n1-n2.red_random_drops").window == "run"


def test_patterns_match_names_with_dots():
    """A placeholder stands for a name that may hold dots; alternatives are exact."""
    found = declared.describe("agent.tcp.ftp.3.rx.goodput_bps")
    assert found is not None and found.unit == "b/s" and found.window == "after warm-up"
    assert declared.describe("link.a.b.nonsense_key") is None


@pytest.mark.parametrize("window", declared.WINDOWS)
def test_every_window_is_used(window):
    """The three windows all occur (a declaration table with a typo would not)."""
    assert any(d.window == window for d in declared.declarations())


#: TCP and CBR through a RED bottleneck, for the single-run report.
MIXED = """
[run]
duration = "4s"
warmup = "1s"
seed = 1

[topology]
kind = "dumbbell"
hosts = 2
access_rate = "100Mbps"
access_delay = "2ms"
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"

[links."r0-r1"]
queue = { kind = "red", limit = "100p", min_th = 5, max_th = 15, max_p = 0.1 }

[[traffic]]
name = "ftp"
from = "s0"
to = "d0"
model = "tcp"
flows = 3
packet_size = "1500B"

[[traffic]]
name = "voice{i}"
count = 2
from = "s1"
to = "d1"
model = "cbr"
size = "200B"
interval = "10ms"
flows = 2

[[metric]]
kind = "link_throughput"
link = "r0-r1"
interval = "100ms"

[[metric]]
kind = "queue_length"
link = "r0-r1"
interval = "100ms"

[[metric]]
kind = "tcp_window"
traffic = "ftp"
"""


def test_count_makes_indexed_entries_addressable_by_name(tmp_path):
    """`count = 2` gives voice0 and voice1, each measured and settable by its name."""
    path = tmp_path / "mixed.toml"
    path.write_text(MIXED)
    result = qossim.run(path, seed=1, set={"traffic.voice1.flows": 3})
    s = result.summary
    assert s["group.voice0.sent_pkts"] > 0
    # 3 flows of 200 B every 10 ms against 2: the sent counts are in that ratio (to a
    # packet per flow: the flows start at random phases).
    assert abs(s["group.voice1.sent_pkts"] / s["group.voice0.sent_pkts"] - 1.5) < 0.01
    assert "flow.voice1.2.sent_pkts" in s and "flow.voice1.3.sent_pkts" not in s


def test_the_single_run_report_shows_figures_first_with_units(tmp_path, monkeypatch):
    """Figures before tables; axes with units; legends with the scenario's names."""
    from qossim import plots
    from qossim.report import run_report

    path = tmp_path / "mixed.toml"
    path.write_text(MIXED)
    run_dir = qossim.run(path, seed=1).save(tmp_path / "run")
    seen = []
    save = plots.save

    def keep(fig, target, **kw):
        ax = fig.axes[0]
        legend = ax.get_legend()
        seen.append(
            (
                ax.get_title(),
                ax.get_xlabel(),
                ax.get_ylabel(),
                [t.get_text() for t in legend.get_texts()] if legend else [],
            )
        )
        return save(fig, target, **kw)

    monkeypatch.setattr(plots, "save", keep)
    page = run_report(run_dir, tmp_path / "report").read_text()
    assert page.index("<figure") < page.index("<table")
    for needle in ("a.u.", "series=", "type=", "point="):
        assert needle not in page
    titles = " | ".join(t for t, *_ in seen)
    for wanted in (
        "Delay distribution",
        "Throughput per traffic entry",
        "Goodput per TCP",
        "Drops by cause",
    ):
        assert wanted in titles, titles
    for title, x, y, legend in seen:
        # An axis of numbers has its unit; a bar chart's axis of names has none.
        categories = ("traffic entry", "link", "TCP connection (entry.index)")
        assert (x.endswith(")") or x in categories) and y.endswith(")"), (title, x, y)
        assert "a.u." not in x + y and "value (" not in y, (title, y)
        assert not any("=" in t for t in legend), legend
    # The TCP connections' windows and RTT samples over time, named by connection.
    window = next(s for s in seen if s[2] == "TCP window (segments)")
    assert "tcp.ftp.0.cwnd" in window[3] and "tcp.ftp.2.ssthresh" in window[3]
    rtt = next(s for s in seen if s[2] == "RTT (s)")
    assert rtt[1] == "time (s)" and rtt[3] == ["tcp.ftp.0.rtt", "tcp.ftp.1.rtt", "tcp.ftp.2.rtt"]
    cdf = next(s for s in seen if s[0].startswith("Delay distribution"))
    assert cdf[3] == ["ftp", "voice0", "voice1"]
    drops = next(s for s in seen if s[0].startswith("Drops by cause"))
    assert "RED early (random)" in drops[3] or drops[3] == []
    # The summary is grouped by component, the links' units in the headers.
    assert "<h2" in page and "Links" in page and "throughput_bps (b/s)" in page
    assert "Traffic entries" in page and "loss_ratio (fraction)" in page
