"""The faster paths of the Python side give what the plain ones give.

* ``campaign.records`` against pandas' ``to_dict("records")`` on a wide table;
* a series column of floats written without pandas: the same Parquet bytes;
* ``stats.t_quantile`` against ``scipy.stats.t.ppf``;
* ``campaign.reuse_workers``: one pool serves several runs of jobs, is replaced when
  the workers would start differently, ends with the block, and the runs it makes are
  the runs a fresh pool makes.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest

from qossim import campaign, results, stats
from qossim.campaign import gather_jobs, make_job, records, reuse_workers, run_jobs


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def test_records_equal_to_dict_on_a_wide_table():
    rng = np.random.default_rng(7)
    n = 6
    data = {f"m{i}": rng.normal(size=n) for i in range(300)}  # > 254 columns
    data["m3"][2] = np.nan
    data["ints"] = np.arange(n, dtype=np.int64)
    data["small"] = np.arange(n, dtype=np.int32)
    data["flags"] = [True, False] * (n // 2)
    data["label"] = ["a", None, "c", "d", "e", "f"]
    data["mixed"] = [np.float64(1.5), np.int64(2), None, "x", 3, 4.0]
    frame = pd.DataFrame(data)
    expected = frame.to_dict("records")
    got = records(frame)
    assert len(got) == len(expected)
    for want, have in zip(expected, got, strict=True):
        assert list(want) == list(have)
        for key in want:
            assert _same(want[key], have[key]), (key, want[key], have[key])
    assert records(frame.iloc[:0]) == []


@pytest.mark.parametrize(
    "values",
    [[0.5 * i for i in range(50)], [1.0, math.nan, math.inf, -0.0], [1, 2, 3], [1.0, None]],
)
def test_series_column_bytes_unchanged(tmp_path, values):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    columns = {"t": [float(i) for i in range(len(values))], "value": values}
    results._write_series(tmp_path / "new.parquet", columns)
    plain = pa.table({name: pa.array(list(v)) for name, v in columns.items()})
    pq.write_table(plain, tmp_path / "plain.parquet")
    assert (tmp_path / "new.parquet").read_bytes() == (tmp_path / "plain.parquet").read_bytes()


def test_t_quantile_is_scipy_stats_t_ppf():
    scipy_t = pytest.importorskip("scipy.stats").t
    probabilities = [0.0, 0.01, 0.5, 0.9, 0.95, 0.975, 0.995, 1.0, 1.5, -0.1, math.nan]
    for df in [1, 2, 3, 9, 30, 250, 1e6, math.inf, 0.5, 0, -1, math.nan]:
        for p in probabilities:
            want = float(scipy_t.ppf(p, df))
            have = stats.t_quantile(p, df)
            assert _same(want, have) or (math.isnan(want) and math.isnan(have)), (p, df)


def _jobs(scenario_file, out, seeds):
    text = scenario_file.read_text()
    return [make_job(text, str(scenario_file), [], s, {"n": s}, out) for s in seeds]


def test_reuse_workers_keeps_one_pool(fake_engine, scenario_file, tmp_path, monkeypatch):
    plain = _jobs(scenario_file, tmp_path / "plain", [1, 2, 3, 4])
    run_jobs(plain, tmp_path / "plain", jobs_n=2, progress=False)
    with reuse_workers():
        kept = campaign._KEPT[-1]
        first = _jobs(scenario_file, tmp_path / "kept", [1, 2])
        run_jobs(first, tmp_path / "kept", jobs_n=2, progress=False)
        pool = kept.pool
        assert pool is not None
        workers = set(pool._processes)
        second = _jobs(scenario_file, tmp_path / "kept", [3, 4])
        run_jobs(second, tmp_path / "kept", jobs_n=2, progress=False)
        assert kept.pool is pool
        assert workers <= set(pool._processes)  # the first call's workers serve the second
        monkeypatch.setenv("QOSSIM_TEST_REUSE", "1")  # workers would start differently
        third = _jobs(scenario_file, tmp_path / "other", [5, 6])
        run_jobs(third, tmp_path / "other", jobs_n=2, progress=False)
        assert kept.pool is not pool
        assert pool._shutdown_thread  # the replaced pool was shut down
        replaced = kept.pool
        processes = list(replaced._processes.values())
        assert processes
    assert not campaign._KEPT
    assert replaced._shutdown_thread  # the block's end shuts the kept pool down
    assert not any(proc.is_alive() for proc in processes)
    got = gather_jobs(first + second, ["n"]).drop(columns="run_key")
    want = gather_jobs(plain, ["n"]).drop(columns="run_key")
    pd.testing.assert_frame_equal(got, want)
    assert all(os.path.isdir(j.run_dir) for j in third)


def test_without_the_block_no_pool_is_kept(fake_engine, scenario_file, tmp_path):
    jobs = _jobs(scenario_file, tmp_path / "out", [1, 2])
    run_jobs(jobs, tmp_path / "out", jobs_n=2, progress=False)
    assert not campaign._KEPT


def test_a_nested_block_uses_the_outer_pool(fake_engine, scenario_file, tmp_path):
    """`reproduce` opens a block per study inside the command's block: one pool for all."""
    with reuse_workers():
        kept = campaign._KEPT[-1]
        run_jobs(_jobs(scenario_file, tmp_path / "a", [1, 2]), tmp_path / "a", jobs_n=2)
        pool = kept.pool
        with reuse_workers():
            assert campaign._KEPT == [kept]
            run_jobs(_jobs(scenario_file, tmp_path / "b", [3, 4]), tmp_path / "b", jobs_n=2)
        assert kept.pool is pool and not pool._shutdown_thread  # the inner end kept it
    assert pool._shutdown_thread
