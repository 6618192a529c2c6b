"""HTML reports are single offline pages."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from qossim import plots
from qossim.report import write_report

pytestmark = pytest.mark.usefixtures("fake_engine")


def _png(tmp_path):
    frame = pd.DataFrame({"t_s": [0, 1, 2], "rate_mbps": [1.0, 2.0, 1.5]})
    fig = plots.timeseries(frame, "t_s", "rate_mbps", y_label="rate", y_unit="Mbit/s")
    return plots.save(fig, tmp_path / "fig.png")


def _assert_offline(text):
    assert "http://" not in text
    assert "https://" not in text
    assert "//" not in re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", text)
    for match in re.finditer(r'(?:src|href)="([^"]*)"', text):
        assert match.group(1).startswith(("data:image/png;base64,", "#"))


def test_report_is_self_contained(tmp_path):
    """Tables, embedded figures and notes; no network reference at all."""
    path = write_report(
        tmp_path / "rep",
        "A <title> & more",
        tables=[
            ("Frame", pd.DataFrame({"a": [1, 2], "b": [0.5, float("nan")]})),
            ("Records", [{"x": "<b>", "y": 1.23456789}, {"x": "z", "z": True}]),
        ],
        figures=[("Figure one", _png(tmp_path))],
        notes=["first note", "second <note>"],
    )
    assert path == tmp_path / "rep" / "index.html"
    text = path.read_text()
    _assert_offline(text)
    assert text.count('src="data:image/png;base64,') == 1
    assert "A &lt;title&gt; &amp; more" in text
    assert "&lt;b&gt;" in text and "<b>" not in text
    assert "1.23457" in text
    assert "second &lt;note&gt;" in text
    assert "<style>" in text and "<link" not in text and "<script" not in text


def test_report_rejects_non_png(tmp_path):
    """Figures must be PNG images."""
    bogus = tmp_path / "x.png"
    bogus.write_text("not an image")
    with pytest.raises(ValueError, match="not a PNG"):
        write_report(tmp_path / "rep", "t", figures=[("x", bogus)])
    assert not (tmp_path / "rep" / "index.html").exists()


def test_cli_reports_are_offline(tmp_path, campaign_file, scenario_file, monkeypatch):
    """qossim report on a run and on a campaign writes offline pages."""
    from qossim.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["run", str(scenario_file), "--seed", "1", "--out", "r1", "--quiet"]) == 0
    assert main(["sweep", str(campaign_file), "--out", "camp", "--jobs", "1", "--quiet"]) == 0
    for source in ("r1", "camp"):
        assert main(["report", source]) == 0
        text = (tmp_path / source / "report" / "index.html").read_text()
        _assert_offline(text)
        assert "data:image/png;base64," in text
    # Rebuilding replaces the report; nothing temporary is left behind.
    assert main(["report", "camp"]) == 0
    assert sorted(p.name for p in (tmp_path / "camp").iterdir() if "tmp" in p.name) == []


def test_a_campaign_report_plots_only_the_named_metrics_by_value(tmp_path, make_campaign):
    """Figures for the metrics the campaign names; rate parameters ordered by value."""
    from qossim.campaign import run_campaign
    from qossim.report import campaign_report, quantity

    path = make_campaign(
        tmp_path,
        seeds="2",
        grid='fake.rate = ["10Mbps", "5Mbps", "20Mbps"]',
        extra="",
    )
    text = path.read_text().replace(
        "seeds = 2\n", 'seeds = 2\nmetrics = ["link.a-b.throughput_bps", "group.*.delay_mean_s"]\n'
    )
    path.write_text(text)
    out = tmp_path / "camp"
    run_campaign(path, jobs=1, progress=False, out=out)
    page = campaign_report(out, out / "report").read_text()
    figures = sorted((out / "report" / "figures").glob("metric-*.png"))
    assert len(figures) == 2, figures
    assert "Plotted: the metrics the campaign names" in page
    assert quantity("5Mbps") < quantity("10Mbps") < quantity("20Mbps")
    assert quantity("{kind = red}") is None and quantity(True) is None
