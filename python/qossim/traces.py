"""Packet traces: the engine's raw records turned into Parquet, pcap and a readable view.

During a run the engine streams one 56-byte record per selected event (see the
``[[trace]]`` section in ``docs/traces.md``) to a raw file. :func:`finish_traces`
turns each raw file into ``NAME.parquet`` in batches (memory stays bounded whatever
the trace's length) and, when asked, ``NAME.pcap``, then deletes the raw file.
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


def read_trace(path: str | os.PathLike[str], flow: int | None = None) -> pd.DataFrame:
    """Read a trace's Parquet file as a DataFrame sorted by time (one flow if given)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    if flow is not None:
        table = table.filter(pc.equal(table["flow"], flow))
    frame = table.to_pandas()
    for column in ("event", "link", "node", "src", "dst", "kind", "transport", "cause"):
        if column in frame:
            frame[column] = frame[column].astype(str)
    return frame.sort_values("t_ps", kind="stable").reset_index(drop=True)


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


def write_pcap(parquet: str | os.PathLike[str], pcap: str | os.PathLike[str]) -> int:
    """Write a trace as a pcap file of synthetic IPv4/UDP/TCP headers; return the count.

    Each record becomes one captured packet with its time (nanosecond resolution), an
    IPv4 header whose total length is the packet's size, whose addresses are 10.x.y.z
    of the packet's source and destination nodes and whose DS field carries
    the class and the two lowest mark bits, and a UDP header, or for TCP flows a TCP
    header with the sequence and acknowledgement numbers (segment counts). Only
    the headers are captured; the payload is counted in the lengths. Records are
    written in time order.
    """
    import pyarrow.parquet as pq

    frame = pq.read_table(parquet).to_pandas().sort_values("t_ps", kind="stable")
    # Node i of the run (the dictionary's order) is address 10.x.y.z with xyz = i + 1.
    names = frame["src"].cat.categories if hasattr(frame["src"], "cat") else []
    node_index = {str(n): i + 1 for i, n in enumerate(names)}

    def index(name: Any) -> int:
        return node_index.setdefault(str(name), len(node_index) + 1)

    count = 0
    with open(pcap, "wb") as out:
        out.write(_PCAP_HEADER)
        for row in frame.to_dict("records"):
            data = _packet(row, index(row["src"]), index(row["dst"]), row["transport"] == "tcp")
            t = int(row["t_ps"]) // 1000
            sec, nsec = divmod(t, 1_000_000_000)
            out.write(struct.pack("<IIII", sec, nsec, len(data), max(len(data), int(row["size"]))))
            out.write(data)
            count += 1
    return count


# -- readable view ---------------------------------------------------------------


def format_view(frame: pd.DataFrame, limit: int | None = None) -> str:
    """One aligned line per record: time, event, where, flow, kind, size, seq, marks."""
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
    if limit is not None and len(frame) > limit:
        lines.append(f"... {len(frame) - limit} more records (--limit to see more)")
    return "\n".join(lines)
