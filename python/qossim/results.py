"""Run directories on disk and the :class:`Result` object.

A run directory holds::

    manifest.json        what ran: versions, git commit, scenario hash, seed,
                         overrides, wall time, events processed, simulated time
    summary.json         the run's summary metrics
    scenario.toml        the scenario text as given (before overrides)
    series/NAME.parquet  one Parquet file per time series

Directories are written atomically: everything goes into a temporary
directory ``DIR.tmp-<random>`` beside the target, every file and directory is
fsynced, then the temporary directory is renamed to ``DIR``. ``manifest.json``
is written last, and a directory without it (or whose name contains
``.tmp-``) is never taken for a result, so a crash at any moment leaves either
a complete result or none.

Campaign runs are written without the fsyncs (``durable=False``; they cost tens of
milliseconds per run on a busy disk, more than a short run itself): a crash of the
process still leaves a complete run or none, and after a crash of the machine a run
whose files did not all reach the disk fails its checksums (``manifest.json`` lists
the sha256 of every file), so the campaign sets it aside and runs it again before
using it (:func:`verify_run_dir`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import os
import platform
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from qossim.errors import ResultError

if TYPE_CHECKING:
    import pandas as pd

MANIFEST = "manifest.json"
SUMMARY = "summary.json"
SCENARIO = "scenario.toml"
SERIES_DIR = "series"
TRACES_DIR = "traces"
TMP_MARK = ".tmp-"
FORMAT = "qossim-run/1"

_SHA_RE = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


# ----------------------------------------------------------------------------
# atomic directories
# ----------------------------------------------------------------------------


def is_temp_dir(path: str | os.PathLike[str]) -> bool:
    """Tell whether a path is a temporary directory of an atomic write."""
    return TMP_MARK in Path(path).name


def is_result_dir(path: str | os.PathLike[str]) -> bool:
    """Tell whether ``path`` is a complete run directory (has ``manifest.json``)."""
    path = Path(path)
    return not is_temp_dir(path) and (path / MANIFEST).is_file()


def clean_stale_temps(parent: str | os.PathLike[str]) -> list[Path]:
    """Remove leftover temporary directories of atomic writes under ``parent``.

    Only call this while no other writer can be active in ``parent`` (for
    campaigns, the campaign lock guarantees it). Returns the removed paths.
    """
    parent = Path(parent)
    removed: list[Path] = []
    if not parent.is_dir():
        return removed
    for entry in parent.iterdir():
        if is_temp_dir(entry) and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _fsync_path(path: Path, directory: bool) -> None:
    flags = os.O_RDONLY
    if directory:
        if os.name == "nt":  # directories cannot be opened for fsync on Windows
            return
        flags |= getattr(os, "O_DIRECTORY", 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: str | os.PathLike[str]) -> None:
    """Flush every file and directory under ``root`` (and ``root``) to disk."""
    root = Path(root)
    for dirpath, _dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            _fsync_path(Path(dirpath) / name, directory=False)
        _fsync_path(Path(dirpath), directory=True)


def _make_temp_dir(target: Path) -> Path:
    for _ in range(100):
        candidate = target.with_name(f"{target.name}{TMP_MARK}{secrets.token_hex(6)}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"{target}: cannot create a temporary directory beside it")


@contextlib.contextmanager
def atomic_dir(
    target: str | os.PathLike[str], *, replace: bool = False, durable: bool = True
) -> Iterator[Path]:
    """Build a directory atomically.

    Yields a temporary directory ``TARGET.tmp-<random>`` beside ``target``;
    when the block ends without error its content is fsynced (unless ``durable``
    is false) and it is renamed to ``target``. On error the temporary directory is
    removed and nothing appears at ``target``.

    If ``target`` already exists, :class:`FileExistsError` is raised (and the
    new content discarded) unless ``replace`` is true, in which case the old
    directory is swapped out and removed after the new one is in place.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _make_temp_dir(target)
    try:
        yield tmp
        if durable:
            fsync_tree(tmp)
        _commit(tmp, target, replace)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if durable:
        with contextlib.suppress(OSError):
            _fsync_path(target.parent, directory=True)


def _commit(tmp: Path, target: Path, replace: bool) -> None:
    if os.path.lexists(target):
        if not replace:
            raise FileExistsError(f"{target}: already exists")
        old = target.with_name(f"{target.name}{TMP_MARK}old-{secrets.token_hex(6)}")
        os.rename(target, old)
        try:
            os.rename(tmp, target)
        except BaseException:
            os.rename(old, target)
            raise
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            old.unlink()
        return
    try:
        os.rename(tmp, target)
    except OSError as exc:
        if os.path.lexists(target):
            raise FileExistsError(f"{target}: already exists") from exc
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write a file atomically (temporary file, fsync, rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}{TMP_MARK}{secrets.token_hex(6)}")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write a UTF-8 text file atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


# ----------------------------------------------------------------------------
# provenance
# ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """Return the git commit of the source tree this package runs from, if any.

    Only a package imported from a source checkout (``ROOT/python/qossim`` with
    ``ROOT/.git``) has a commit; an installed package returns ``None``.
    """
    package = Path(__file__).resolve().parent
    root = package.parent.parent
    if package.parent.name != "python" or not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and _SHA_RE.match(sha) else None


def build_manifest(
    raw: Mapping[str, Any],
    *,
    scenario_file: str,
    overrides: list[tuple[str, str]],
    params: Mapping[str, Any] | None,
    version: str,
    run_key: str,
) -> dict[str, Any]:
    """Assemble a run manifest from the engine's raw result and the run inputs."""
    return {
        "format": FORMAT,
        "qossim_version": version,
        "git_commit": git_commit(),
        "run_key": run_key,
        "scenario_file": scenario_file,
        "scenario_hash": str(raw.get("scenario_hash", "")),
        "seed": raw.get("seed"),
        "overrides": [[key, value] for key, value in overrides],
        "params": dict(params or {}),
        "wall_s": raw.get("wall_s"),
        "events": raw.get("events"),
        "sim_time_s": raw.get("sim_time_s"),
        "series_units": {str(k): str(v) for k, v in dict(raw.get("units") or {}).items()},
        "created_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }


# ----------------------------------------------------------------------------
# writing and reading run directories
# ----------------------------------------------------------------------------


def series_file_name(name: str) -> str:
    """Return the file name (inside ``series/``) that stores a time series."""
    return quote(name, safe="") + ".parquet"


def _write_json(path: Path, data: Any) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=False, default=_json_default)
        handle.write("\n")


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _write_series(path: Path, columns: Mapping[str, Any]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if hasattr(columns, "to_dict") and hasattr(columns, "columns"):  # a DataFrame
        table = pa.Table.from_pandas(columns, preserve_index=False)
    else:
        table = pa.table({str(name): _arrow_column(values) for name, values in columns.items()})
    pq.write_table(table, path)


def _arrow_column(values: Any) -> Any:
    """Return one series column as an Arrow array.

    A column of floats (what the engine records) is packed into one buffer: the same
    float64 column as pyarrow makes of the list, without the import of pandas (about
    0.4 s of CPU per process) that pyarrow makes to inspect a sequence or an array.
    """
    import array

    import pyarrow as pa

    values = list(values)
    if values and all(type(v) is float for v in values):
        data = pa.py_buffer(array.array("d", values))
        return pa.Array.from_buffers(pa.float64(), len(values), [None, data])
    return pa.array(values)


def write_run_dir(
    target: str | os.PathLike[str],
    *,
    manifest: Mapping[str, Any],
    summary: Mapping[str, Any],
    series: Mapping[str, Any],
    scenario_text: str | None = None,
    replace: bool = False,
    traces: Mapping[str, str | os.PathLike[str]] | None = None,
    durable: bool = True,
) -> Path:
    """Write a complete run directory atomically and return its path.

    ``series`` maps names to column dictionaries (or DataFrames); ``traces`` maps
    trace file names (``NAME.parquet``, ``NAME.pcap``) to finished files, copied
    into ``traces/`` and listed in the manifest. ``durable=False`` leaves out the
    fsyncs (for runs whose checksums are verified before use: campaign runs; see the
    module's notes). Raises
    :class:`FileExistsError` if ``target`` exists and ``replace`` is false,
    or if it exists and is neither a run directory nor empty (other data is
    never replaced).
    """
    target = Path(target)
    if replace and os.path.lexists(target) and not is_result_dir(target):
        if not target.is_dir() or any(target.iterdir()):
            raise FileExistsError(f"{target}: exists and is not a run directory; not replacing it")
    manifest = dict(manifest)
    with atomic_dir(target, replace=replace, durable=durable) as tmp:
        files: dict[str, str] = {}
        if series:
            (tmp / SERIES_DIR).mkdir()
        for name, columns in series.items():
            rel = f"{SERIES_DIR}/{series_file_name(name)}"
            _write_series(tmp / rel, columns)
            files[name] = rel
        manifest["series"] = files
        if traces:
            (tmp / TRACES_DIR).mkdir()
            manifest["traces"] = {}
            for file_name, source in sorted(traces.items()):
                shutil.copyfile(source, tmp / TRACES_DIR / file_name)
                manifest["traces"][file_name] = f"{TRACES_DIR}/{file_name}"
        if scenario_text is not None:
            (tmp / SCENARIO).write_text(scenario_text, encoding="utf-8")
        _write_json(tmp / SUMMARY, dict(summary))
        manifest["files"] = _checksums(tmp)
        manifest[MANIFEST_DIGEST] = manifest_digest(manifest)
        _write_json(tmp / MANIFEST, manifest)
    return target


#: The manifest's own checksum: sha256 of its canonical JSON without this key.
MANIFEST_DIGEST = "manifest_sha256"


def manifest_digest(manifest: Mapping[str, Any]) -> str:
    """Return the sha256 of a manifest's canonical JSON, leaving its own digest out.

    An edited manifest (a seed or a parameter changed by hand) no longer matches it.
    """
    import hashlib

    body = {k: v for k, v in manifest.items() if k != MANIFEST_DIGEST}
    text = json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha256(path: Path) -> str:
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checksums(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` but the manifest, by relative path."""
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel != MANIFEST:
            out[rel] = _sha256(path)
    return out


def verify_run_dir(path: str | os.PathLike[str], key: str | None = None) -> str | None:
    """Check a stored run: return None when it is whole, else what is wrong with it.

    A run directory is whole when its manifest and summary are readable JSON objects,
    the manifest matches its own checksum (``manifest_sha256``), every file the
    manifest lists has the listed sha256, and, when ``key`` is given, the manifest's
    run key is ``key`` (a run copied or moved into another run's slot is not that run).
    Runs written before these checksums were recorded are checked for what they hold.
    """
    path = Path(path)
    loaded = []
    for name in (MANIFEST, SUMMARY):
        try:
            value = json.loads((path / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return f"{name} is missing"
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            return f"{name} is unreadable ({exc})"
        if not isinstance(value, dict):
            return f"{name} is not a JSON object"
        loaded.append(value)
    manifest = loaded[0]
    digest = manifest.get(MANIFEST_DIGEST)
    if digest is not None and digest != manifest_digest(manifest):
        return f"{MANIFEST} was changed after it was written (its checksum does not match)"
    if key is not None and manifest.get("run_key") != key:
        held = str(manifest.get("run_key"))[:12]
        return f"it holds run {held}, not {key[:12]} (copied or moved into this slot)"
    files = manifest.get("files")
    if isinstance(files, dict):
        for rel, digest in files.items():
            file = path / rel
            if not file.is_file():
                return f"{rel} is missing"
            if _sha256(file) != digest:
                return f"{rel} does not match its checksum"
    return None


def read_manifest(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read the manifest of a run directory (raises ResultError if incomplete)."""
    path = Path(path)
    if not is_result_dir(path):
        raise ResultError(f"{path}: not a qossim run directory (no {MANIFEST})")
    try:
        with open(path / MANIFEST, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise ResultError(f"{path / MANIFEST}: unreadable: {exc}") from None


def read_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read the summary of a run directory."""
    path = Path(path)
    try:
        with open(path / SUMMARY, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        raise ResultError(f"{path / SUMMARY}: unreadable: {exc}") from None


# ----------------------------------------------------------------------------
# Result
# ----------------------------------------------------------------------------


class Summary(dict):  # type: ignore[type-arg]
    """A run's summary: a dict of key to value that also knows each key's declaration.

    ``summary["link.r0-r1.drops"]`` reads a value as before; :attr:`frame` is the
    summary as a DataFrame indexed by key with columns ``value``, ``unit``, ``window``,
    ``component`` and ``doc`` (from the engine's declarations, see
    :mod:`qossim.declared`; a key nobody declared has empty ones); :meth:`unit` and
    :meth:`window` read one key's.
    """

    def unit(self, key: str) -> str | None:
        """Return the unit of ``key`` (None if undeclared)."""
        from qossim.declared import describe

        found = describe(key)
        return found.unit if found else None

    def window(self, key: str) -> str | None:
        """Return the window of ``key``: ``run``, ``after warm-up`` or ``end of run``."""
        from qossim.declared import describe

        found = describe(key)
        return found.window if found else None

    @property
    def frame(self) -> pd.DataFrame:
        """The summary as a DataFrame: index key; columns value, unit, window, component, doc."""
        import pandas as pd

        from qossim.declared import describe

        rows = []
        for key, value in _flat_items(self):
            found = describe(key)
            rows.append(
                {
                    "key": key,
                    "value": value,
                    "unit": found.unit if found else "",
                    "window": found.window if found else "",
                    "component": found.component if found else "",
                    "doc": found.doc if found else "",
                }
            )
        columns = ["key", "value", "unit", "window", "component", "doc"]
        return pd.DataFrame(rows, columns=columns).set_index("key")

    def to_frame(self) -> pd.DataFrame:
        """Return :attr:`frame`."""
        return self.frame


def _flat_items(mapping: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            items.extend(_flat_items(value, f"{prefix}{key}."))
        else:
            items.append((f"{prefix}{key}", value))
    return items


class Result:
    """The outcome of one run: summary, time series and manifest.

    Results come from :func:`qossim.run` (in memory) or
    :meth:`Result.load` (from a run directory, time series read lazily).
    """

    def __init__(
        self,
        summary: Mapping[str, Any],
        manifest: Mapping[str, Any],
        series: Mapping[str, Any] | None = None,
        *,
        scenario_text: str | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        self._summary = Summary(summary)
        self._manifest = dict(manifest)
        self._series: dict[str, Any] = dict(series or {})
        self._files: dict[str, str] = {}
        self._frames: dict[str, pd.DataFrame] = {}
        self._scenario_text = scenario_text
        self._path = Path(path) if path is not None else None
        self._trace_files: dict[str, Path] = {}

    # -- properties --------------------------------------------------------

    @property
    def summary(self) -> Summary:
        """Summary metrics of the run (name to number): a dict with units and windows.

        ``result.summary["group.voice.delay_p99_s"]`` reads a value;
        ``result.summary.frame`` is a DataFrame with ``value``, ``unit`` and ``window``
        columns (see :class:`Summary`).
        """
        return self._summary

    @property
    def manifest(self) -> dict[str, Any]:
        """Provenance of the run (versions, seed, scenario hash, overrides, ...)."""
        return self._manifest

    @property
    def series_names(self) -> list[str]:
        """Names of the time series recorded by the run."""
        return list(self._series) if self._series else list(self._files)

    @property
    def path(self) -> Path | None:
        """Run directory this result was loaded from or last saved to, if any."""
        return self._path

    @property
    def seed(self) -> int | None:
        """Seed the run used."""
        return self._manifest.get("seed")

    @property
    def scenario_text(self) -> str | None:
        """The scenario text as given to the engine (before overrides)."""
        if self._scenario_text is None and self._path is not None:
            file = self._path / SCENARIO
            if file.is_file():
                self._scenario_text = file.read_text(encoding="utf-8")
        return self._scenario_text

    # -- time series -------------------------------------------------------

    def timeseries(self, name: str) -> pd.DataFrame:
        """Return one time series as a DataFrame (one column per recorded column)."""
        import pandas as pd

        if name in self._frames:
            return self._frames[name].copy()
        if name in self._series:
            frame = pd.DataFrame({col: list(vals) for col, vals in self._series[name].items()})
        elif name in self._files and self._path is not None:
            import pyarrow.parquet as pq

            frame = pq.read_table(self._path / self._files[name]).to_pandas()
        else:
            known = ", ".join(self.series_names) or "none"
            raise KeyError(f"no time series {name!r} (recorded: {known})")
        self._frames[name] = frame
        return frame.copy()

    # -- packet traces -----------------------------------------------------

    @property
    def trace_files(self) -> dict[str, Path]:
        """The run's packet-trace files (``NAME.parquet``, ``NAME.pcap``) by file name."""
        if self._trace_files:
            return dict(self._trace_files)
        listed = self._manifest.get("traces")
        if isinstance(listed, dict) and self._path is not None:
            return {str(k): self._path / str(v) for k, v in listed.items()}
        return {}

    def trace(self, name: str | None = None, *, flow: int | None = None) -> pd.DataFrame:
        """Return a packet trace as a DataFrame sorted by time (only ``flow`` if given).

        ``name`` is the ``[[trace]]`` entry's name; it may be left out when the run
        has one trace. Columns: ``t`` (s), ``event``, ``link``, ``node``, ``src``,
        ``dst``, ``flow``, ``kind``, ``transport``, ``class``, ``size``, ``seq``, ``ack``,
        ``marks``, ``cause`` and ``t_ps`` (exact time, picoseconds).
        """
        from qossim.traces import read_trace

        return read_trace(self.trace_path(name), flow=flow)

    def trace_path(self, name: str | None = None) -> Path:
        """Return the Parquet file of a packet trace (``name`` as for :meth:`trace`).

        Raises :class:`KeyError` naming the traces recorded when there is no such trace.
        """
        parquet = {
            k[: -len(".parquet")]: v for k, v in self.trace_files.items() if k.endswith(".parquet")
        }
        if name is None:
            if len(parquet) != 1:
                known = ", ".join(sorted(parquet)) or "none"
                raise KeyError(f"name the trace to read (recorded: {known})")
            name = next(iter(parquet))
        if name not in parquet:
            known = ", ".join(sorted(parquet)) or "none"
            raise KeyError(f"no packet trace {name!r} (recorded: {known})")
        return Path(parquet[name])

    # -- disk --------------------------------------------------------------

    def save(self, directory: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the result as a run directory, atomically; return its path.

        An existing directory is replaced only when ``overwrite`` is true.
        """
        series: dict[str, Any] = {}
        for name in self.series_names:
            series[name] = self._series[name] if name in self._series else self.timeseries(name)
        target = write_run_dir(
            directory,
            manifest=self._manifest,
            summary=self._summary,
            series=series,
            scenario_text=self.scenario_text,
            replace=overwrite,
            traces=self.trace_files,
        )
        self._manifest = read_manifest(target)
        self._path = Path(target)
        self._trace_files = {}
        return Path(target)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Result:
        """Open a run directory written by :meth:`save` or a campaign."""
        directory = Path(directory)
        manifest = read_manifest(directory)
        result = cls(read_summary(directory), manifest, path=directory)
        files = manifest.get("series")
        if isinstance(files, dict):
            result._files = {str(k): str(v) for k, v in files.items()}
        else:
            folder = directory / SERIES_DIR
            if folder.is_dir():
                result._files = {
                    unquote(p.name[: -len(".parquet")]): f"{SERIES_DIR}/{p.name}"
                    for p in sorted(folder.glob("*.parquet"))
                }
        return result

    def __repr__(self) -> str:
        """Show the seed, scenario hash and series names."""
        where = f", path={str(self._path)!r}" if self._path else ""
        digest = str(self._manifest.get("scenario_hash", ""))[:12]
        return (
            f"Result(seed={self.seed!r}, scenario_hash={digest!r}, "
            f"series={self.series_names!r}{where})"
        )
