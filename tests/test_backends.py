"""The same campaign gives identical tables on the local, Dask and Ray backends.

Dask and Ray start local clusters here (a few seconds each); their workers
use the stand-in engine through the inherited QOSSIM_FAKE_ENGINE variable.
"""

from __future__ import annotations

import pandas as pd
import pytest

from qossim.campaign import gather, run_campaign, summarize

pytestmark = pytest.mark.usefixtures("fake_engine")


def _local_tables(campaign, out):
    table = run_campaign(campaign, backend="local", jobs=1, progress=False, out=out)
    return table, summarize(table)


def _assert_same(table, expected_table):
    pd.testing.assert_frame_equal(table, expected_table)
    pd.testing.assert_frame_equal(summarize(table), summarize(expected_table))


def test_backend_local_pool_matches_serial(campaign_file, tmp_path):
    """Local process pool (2 workers) and in-process runs give the same tables."""
    expected, _ = _local_tables(campaign_file, tmp_path / "serial")
    table = run_campaign(campaign_file, backend="local", jobs=2, progress=False, out=tmp_path / "p")
    _assert_same(table, expected)
    _assert_same(gather(tmp_path / "p"), expected)


@pytest.mark.dask
def test_backend_dask_matches_local(campaign_file, tmp_path, fake_engine):
    """A local Dask cluster gives exactly the local backend's tables."""
    pytest.importorskip("distributed")
    expected, _ = _local_tables(campaign_file, tmp_path / "local")
    assert len(fake_engine.runs) == 6
    table = run_campaign(campaign_file, backend="dask", jobs=2, progress=False, out=tmp_path / "d")
    assert table.attrs["counts"] == {"total": 6, "cached": 0, "done": 6}
    assert len(fake_engine.runs) == 6  # the runs happened in dask workers
    _assert_same(table, expected)
    _assert_same(gather(tmp_path / "d"), expected)


@pytest.mark.ray
def test_backend_ray_matches_local(campaign_file, tmp_path, fake_engine):
    """A local Ray instance gives exactly the local backend's tables."""
    pytest.importorskip("ray")
    expected, _ = _local_tables(campaign_file, tmp_path / "local")
    assert len(fake_engine.runs) == 6
    table = run_campaign(campaign_file, backend="ray", jobs=2, progress=False, out=tmp_path / "r")
    assert table.attrs["counts"] == {"total": 6, "cached": 0, "done": 6}
    assert len(fake_engine.runs) == 6  # the runs happened in ray workers
    _assert_same(table, expected)
    _assert_same(gather(tmp_path / "r"), expected)


@pytest.mark.dask
def test_backend_dask_resumes_local_campaign(campaign_file, tmp_path):
    """Runs stored by one backend are reused by another (same keys)."""
    pytest.importorskip("distributed")
    out = tmp_path / "shared"
    expected, _ = _local_tables(campaign_file, out)
    table = run_campaign(campaign_file, backend="dask", jobs=2, progress=False, out=out)
    assert table.attrs["counts"] == {"total": 6, "cached": 6, "done": 0}
    _assert_same(table, expected)


def test_unknown_backend_is_refused(campaign_file, tmp_path):
    """Only local, dask and ray exist."""
    from qossim.errors import QossimError

    with pytest.raises(QossimError, match="unknown backend"):
        run_campaign(campaign_file, backend="spark", progress=False, out=tmp_path / "x")
