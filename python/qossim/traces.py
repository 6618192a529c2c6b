"""Packet traces: the engine's raw records turned into Parquet, pcap and a readable view.

During a run the engine streams one 56-byte record per selected event (see the
``[[trace]]`` section in ``docs/traces.md``) to a raw file. :func:`finish_traces`
turns each raw file into ``NAME.parquet`` in batches (memory stays bounded whatever
the trace's length) and, when asked, ``NAME.pcap``, then deletes the raw file.

Every reader here streams too: :func:`view_trace` (what ``qossim trace`` prints) keeps
only the records it will show, and :func:`write_pcap` puts the records in time order by
an external merge sort (sorted runs of one batch each, spilled beside the pcap file and
merged block by block), so that a trace larger than memory is written and viewed.
:func:`read_trace` returns the whole trace as a DataFrame, for traces that fit.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "CAUSES",
    "EVENTS",
    "KINDS",
    "RECORD",
    "finish_traces",
    "format_view",
    "read_trace",
    "traced_flows",
    "view_trace",
    "write_pcap",
]

#: Layout of one raw record (little-endian, 56 bytes).
RECORD = np.dtype(
    [
        ("t_ps", "<u8"),
        ("seq", "<u8"),
        ("ack", "<u8"),
        ("flow", "<u4"),
        ("size", "<u4"),
        ("link", "<u4"),
        ("node", "<u4"),
        ("src", "<u4"),
        ("dst", "<u4"),
        ("marks", "<u2"),
        ("event", "u1"),
        ("cause", "u1"),
        ("class", "u1"),
        ("kind", "u1"),
        ("pad", "<u2"),
    ]
)
assert RECORD.itemsize == 56

#: Event codes of the records, in code order.
EVENTS = ("enqueue", "drop", "mark", "transmit", "arrival", "deliver")
#: Drop cause codes (0: not a drop).
CAUSES = ("", "overflow", "early", "policed", "pushed_out")
#: Packet kind codes.
KINDS = ("data", "ack")

_NONE = 0xFFFFFFFF
_BATCH = 1 << 16


def _batches(raw: Path, batch: int = _BATCH) -> Iterator[np.ndarray]:
    count = raw.stat().st_size // RECORD.itemsize
    with raw.open("rb") as f:
        for start in range(0, count, batch):
            n = min(batch, count - start)
            yield np.frombuffer(f.read(n * RECORD.itemsize), dtype=RECORD, count=n)


def _names(codes: np.ndarray, names: Sequence[str]) -> Any:
    import pyarrow as pa

    table = list(names) + [""]
    idx = np.where(codes == _NONE, len(table) - 1, codes).astype(np.int32)
    idx = np.minimum(idx, len(table) - 1)
    return pa.DictionaryArray.from_arrays(pa.array(idx), pa.array(table))


def _to_arrow(
    rec: np.ndarray, links: Sequence[str], nodes: Sequence[str], tcp: np.ndarray | None = None
) -> Any:
    import pyarrow as pa

    is_tcp = np.isin(rec["flow"], tcp) if tcp is not None else np.zeros(len(rec), dtype=bool)
    return pa.table(
        {
            "t": pa.array(rec["t_ps"] / 1e12),
            "event": _names(rec["event"].astype(np.uint32), EVENTS),
            "link": _names(rec["link"], links),
            "node": _names(rec["node"], nodes),
            "src": _names(rec["src"], nodes),
            "dst": _names(rec["dst"], nodes),
            "flow": pa.array(rec["flow"]),
            "kind": _names(rec["kind"].astype(np.uint32), KINDS),
            "transport": _names(is_tcp.astype(np.uint32), ("udp", "tcp")),
            "class": pa.array(rec["class"]),
            "size": pa.array(rec["size"]),
            "seq": pa.array(rec["seq"]),
            "ack": pa.array(rec["ack"]),
            "marks": pa.array(rec["marks"]),
            "cause": _names(rec["cause"].astype(np.uint32), CAUSES),
            "t_ps": pa.array(rec["t_ps"]),
        }
    )


def _empty(links: Sequence[str], nodes: Sequence[str]) -> Any:
    return _to_arrow(np.zeros(0, dtype=RECORD), links, nodes)


def finish_traces(raw: Mapping[str, Any], directory: str | os.PathLike[str]) -> dict[str, Path]:
    """Turn the raw trace files of a run's raw result into Parquet (and pcap) files.

    ``raw`` is the engine's result dictionary; files are written into ``directory``
    and the raw files deleted. Returns ``{file name: path}`` of the files written.
    """
    import pyarrow.parquet as pq

    out: dict[str, Path] = {}
    links = [str(n) for n in raw.get("link_names", [])]
    nodes = [str(n) for n in raw.get("node_names", [])]
    tcp = np.asarray(raw.get("tcp_flows", []), dtype=np.uint32)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for entry in raw.get("traces", []):
        name = str(entry["name"])
        source = Path(entry["path"])
        target = directory / f"{name}.parquet"
        schema = _empty(links, nodes).schema
        with pq.ParquetWriter(target, schema) as writer:
            for rec in _batches(source, _BATCH):
                writer.write_table(_to_arrow(rec, links, nodes, tcp).cast(schema))
        out[target.name] = target
        if entry.get("pcap"):
            pcap = directory / f"{name}.pcap"
            write_pcap(target, pcap)
            out[pcap.name] = pcap
        source.unlink(missing_ok=True)
    return out


_TEXT_COLUMNS = ("event", "link", "node", "src", "dst", "kind", "transport", "cause")


def _as_frame(table: Any) -> pd.DataFrame:
    frame = table.to_pandas()
    for column in _TEXT_COLUMNS:
        if column in frame:
            frame[column] = frame[column].astype(str)
    return frame


def read_trace(path: str | os.PathLike[str], flow: int | None = None) -> pd.DataFrame:
    """Read a trace's Parquet file as a DataFrame sorted by time (one flow if given).

    The whole trace is held in memory; :func:`view_trace` reads a part of one of any
    length.
    """
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    if flow is not None:
        table = table.filter(pc.equal(table["flow"], flow))
    return _as_frame(table).sort_values("t_ps", kind="stable").reset_index(drop=True)


def view_trace(
    path: str | os.PathLike[str],
    *,
    flow: int | None = None,
    events: Sequence[str] | None = None,
    limit: int = 200,
    batch: int = _BATCH,
) -> tuple[pd.DataFrame, int]:
    """Return a trace's first ``limit`` records in time order and how many there are.

    Only ``flow`` and only ``events`` are counted and shown, if given.

    The file is read ``batch`` records at a time, keeping the ``limit`` earliest records
    seen so far (ties in file order, as :func:`read_trace` sorts): memory follows
    ``limit`` and ``batch``, not the trace's length. The frame is :func:`read_trace`'s
    filtered and cut to its first ``limit`` rows.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    source = pq.ParquetFile(path)
    keys = [("t_ps", "ascending"), ("_pos", "ascending")]
    wanted = pa.array(list(events), pa.string()) if events else None
    kept: Any = None
    total = 0
    pos = 0
    for part in source.iter_batches(batch_size=batch):
        table = pa.Table.from_batches([part])
        table = table.append_column(
            "_pos", pa.array(np.arange(pos, pos + table.num_rows, dtype=np.int64))
        )
        pos += table.num_rows
        if flow is not None:
            table = table.filter(pc.equal(table["flow"], flow))
        if wanted is not None:
            table = table.filter(pc.is_in(table["event"].cast(pa.string()), value_set=wanted))
        total += table.num_rows
        if kept is not None:
            table = pa.concat_tables([kept, table])
        if table.num_rows > limit:
            table = table.take(pc.sort_indices(table, sort_keys=keys)[:limit])
        kept = table
    if kept is None:
        kept = source.schema_arrow.empty_table().append_column("_pos", pa.array([], pa.int64()))
    kept = kept.take(pc.sort_indices(kept, sort_keys=keys)).drop_columns(["_pos"])
    return _as_frame(kept).reset_index(drop=True), total


def traced_flows(path: str | os.PathLike[str], batch: int = _BATCH) -> list[int]:
    """Return the flow ids a trace holds, sorted (read ``batch`` records at a time)."""
    import pyarrow.parquet as pq

    seen: set[int] = set()
    for part in pq.ParquetFile(path).iter_batches(batch_size=batch, columns=["flow"]):
        seen.update(np.unique(part.column(0).to_numpy()).tolist())
    return sorted(seen)


# -- pcap ------------------------------------------------------------------------

_LINKTYPE_RAW = 101  # raw IPv4
_PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, _LINKTYPE_RAW)


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _address(index: int) -> bytes:
    """10.x.y.z for node ``index`` (synthetic addresses)."""
    return bytes((10, (index >> 16) & 0xFF, (index >> 8) & 0xFF, index & 0xFF))


def _packet(row: Mapping[str, Any], src: int, dst: int, tcp: bool) -> bytes:
    size = max(int(row["size"]), 20 + (20 if tcp else 8))
    flow = int(row["flow"])
    sport, dport = 1024 + flow % 60000, 5000 + flow % 60000
    if tcp:
        flags = 0x10 if row["kind"] == "ack" else 0x18  # ACK / PSH+ACK
        l4 = struct.pack(
            "!HHIIBBHHH",
            sport if row["kind"] != "ack" else dport,
            dport if row["kind"] != "ack" else sport,
            int(row["seq"]) & 0xFFFFFFFF,
            int(row["ack"]) & 0xFFFFFFFF,
            5 << 4,
            flags,
            65535,
            0,
            0,
        )
    else:
        l4 = struct.pack("!HHHH", sport, dport, size - 20, 0)
    tos = (int(row["class"]) & 0x3F) << 2 | (int(row["marks"]) & 0x3)
    header = struct.pack(
        "!BBHHHBBH4s4s",
        0x45,
        tos,
        size,
        int(row["seq"]) & 0xFFFF,
        0,
        64,
        6 if tcp else 17,
        0,
        _address(src),
        _address(dst),
    )
    header = header[:10] + struct.pack("!H", _checksum(header)) + header[12:]
    return header + l4


#: What the pcap writer keeps of a record (node names as address numbers).
_PCAP_RECORD = np.dtype(
    [
        ("t_ps", "<u8"),
        ("seq", "<u8"),
        ("ack", "<u8"),
        ("flow", "<u4"),
        ("size", "<u4"),
        ("src", "<u4"),
        ("dst", "<u4"),
        ("marks", "<u2"),
        ("class", "u1"),
        ("ack_kind", "u1"),
        ("tcp", "u1"),
    ]
)


def _pcap_records(part: Any, index: Any) -> np.ndarray:
    """One batch of Parquet records as :data:`_PCAP_RECORD`, sorted by time (stable)."""
    import pyarrow as pa

    def codes(column: str) -> np.ndarray:
        col = part.column(column)
        table = np.array([index(v) for v in col.dictionary.to_pylist()] or [0], dtype=np.uint32)
        return table[col.indices.to_numpy(zero_copy_only=False)]

    def text(column: str, value: str) -> np.ndarray:
        col = part.column(column).cast(pa.string()).to_numpy(zero_copy_only=False)
        return (col == value).astype(np.uint8)

    rec = np.empty(part.num_rows, dtype=_PCAP_RECORD)
    for name in ("t_ps", "seq", "ack", "flow", "size", "marks", "class"):
        rec[name] = part.column(name).to_numpy(zero_copy_only=False)
    rec["src"], rec["dst"] = codes("src"), codes("dst")
    rec["ack_kind"], rec["tcp"] = text("kind", "ack"), text("transport", "tcp")
    return rec[np.argsort(rec["t_ps"], kind="stable")]


#: How many sorted runs one merge reads at once.
_FAN_IN = 64


def _merged(runs: Sequence[Path], block: int) -> Iterator[np.ndarray]:
    """Merge sorted run files (``.npy`` of :data:`_PCAP_RECORD`); yield merged blocks.

    The order is ``(t_ps, run, place)``; ``block`` records of each run are read at a time.

    Each round takes, from every run, the records not after the smallest of the runs'
    current block ends (on the compound key, so that ties keep the order of the runs):
    everything before that key is in memory, so the round's output is final.
    """
    arrays = [np.load(r, mmap_mode="r") for r in runs]
    counts = [len(a) for a in arrays]
    at = [0] * len(runs)
    while True:
        live = [i for i in range(len(runs)) if at[i] < counts[i]]
        if not live:
            return
        ends = {i: min(at[i] + block, counts[i]) for i in live}
        # The bound: the smallest (time, run) among the blocks' last records.
        bound_t, bound_i = min((int(arrays[i]["t_ps"][ends[i] - 1]), i) for i in live)
        taken = []
        for i in live:
            t = np.asarray(arrays[i]["t_ps"][at[i] : ends[i]])
            side = "right" if i <= bound_i else "left"
            n = int(np.searchsorted(t, bound_t, side=side))
            if n:
                taken.append(np.array(arrays[i][at[i] : at[i] + n]))
                at[i] += n
        merged = np.concatenate(taken)
        yield merged[np.argsort(merged["t_ps"], kind="stable")]


def _merge_down(runs: list[Path], spill: Path, batch: int) -> list[Path]:
    """Merge groups of :data:`_FAN_IN` runs into longer ones until at most that many are left.

    Runs stay in order: run ``i`` of a pass holds the earlier records on ties with run
    ``i + 1``. Memory: ``_FAN_IN`` blocks of ``batch // _FAN_IN`` records.
    """
    block = max(256, batch // _FAN_IN)
    level = 0
    while len(runs) > _FAN_IN:
        level += 1
        longer = []
        for g in range(0, len(runs), _FAN_IN):
            group = runs[g : g + _FAN_IN]
            total = sum(len(np.load(r, mmap_mode="r")) for r in group)
            target = spill / f"{level}-{len(longer)}.npy"
            out = np.lib.format.open_memmap(target, mode="w+", dtype=_PCAP_RECORD, shape=(total,))
            at = 0
            for merged in _merged(group, block):
                out[at : at + len(merged)] = merged
                at += len(merged)
            out.flush()
            del out
            for r in group:
                r.unlink()
            longer.append(target)
        runs = longer
    return runs


def write_pcap(
    parquet: str | os.PathLike[str], pcap: str | os.PathLike[str], *, batch: int = _BATCH
) -> int:
    """Write a trace as a pcap file of synthetic IPv4/UDP/TCP headers; return the count.

    Each record becomes one captured packet with its time (nanosecond resolution), an
    IPv4 header whose total length is the packet's size, whose addresses are 10.x.y.z
    of the packet's source and destination nodes and whose DS field carries
    the class and the two lowest mark bits, and a UDP header, or for TCP flows a TCP
    header with the sequence and acknowledgement numbers (segment counts). Only
    the headers are captured; the payload is counted in the lengths. Records are
    written in time order (ties in the file's order), sorted by an external merge sort:
    runs of ``batch`` records are sorted and spilled beside ``pcap``, merged
    :data:`_FAN_IN` at a time, and removed.
    """
    import shutil
    import tempfile

    import pyarrow.parquet as pq

    source = pq.ParquetFile(parquet)
    # Node i of the run (the dictionary's order) is address 10.x.y.z with xyz = i + 1.
    node_index: dict[str, int] = {}

    def index(name: Any) -> int:
        return node_index.setdefault(str(name), len(node_index) + 1)

    spill = Path(tempfile.mkdtemp(prefix=".pcap-runs-", suffix=".tmp-", dir=Path(pcap).parent))
    try:
        runs: list[Path] = []
        for part in source.iter_batches(batch_size=batch):
            if not node_index:
                for name in part.column("src").dictionary.to_pylist():
                    index(name)
            runs.append(spill / f"0-{len(runs)}.npy")
            np.save(runs[-1], _pcap_records(part, index))
        runs = _merge_down(runs, spill, batch)
        count = 0
        with open(pcap, "wb") as out:
            out.write(_PCAP_HEADER)
            for merged in _merged(runs, max(256, batch // _FAN_IN)):
                count += _write_packets(out, merged)
        return count
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def _write_packets(out: Any, rec: np.ndarray) -> int:
    columns = {name: rec[name].tolist() for name in _PCAP_RECORD.names}
    for i, t_ps in enumerate(columns["t_ps"]):
        row = {
            "size": columns["size"][i],
            "flow": columns["flow"][i],
            "kind": "ack" if columns["ack_kind"][i] else "data",
            "seq": columns["seq"][i],
            "ack": columns["ack"][i],
            "class": columns["class"][i],
            "marks": columns["marks"][i],
        }
        data = _packet(row, columns["src"][i], columns["dst"][i], bool(columns["tcp"][i]))
        sec, nsec = divmod(t_ps // 1000, 1_000_000_000)
        out.write(struct.pack("<IIII", sec, nsec, len(data), max(len(data), int(row["size"]))))
        out.write(data)
    return len(rec)


# -- readable view ---------------------------------------------------------------


def format_view(frame: pd.DataFrame, limit: int | None = None, total: int | None = None) -> str:
    """One aligned line per record: time, event, where, flow, kind, size, seq, marks.

    ``total`` is how many records there are in all when ``frame`` holds only the first
    ones (see :func:`view_trace`); by default, ``frame``'s length.
    """
    rows = frame if limit is None else frame.head(limit)
    lines = [
        f"{'time (s)':>14}  {'event':<8}  {'link/node':<16}  {'flow':>6}  {'kind':<4}  "
        f"{'class':>5}  {'size':>6}  {'seq':>10}  {'marks':>6}  cause"
    ]
    for r in rows.to_dict("records"):
        where = r["link"] if r["link"] else r["node"]
        lines.append(
            f"{r['t']:>14.9f}  {r['event']:<8}  {where:<16}  {r['flow']:>6}  {r['kind']:<4}  "
            f"{r['class']:>5}  {r['size']:>6}  {r['seq']:>10}  {r['marks']:>#6x}  {r['cause']}"
        )
    total = len(frame) if total is None else total
    if limit is not None and total > limit:
        lines.append(f"... {total - limit} more records (--limit to see more)")
    return "\n".join(lines)
