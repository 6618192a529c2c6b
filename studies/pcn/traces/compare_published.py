"""Row-by-row comparison of T1 and T4 with the study's Tables 4.3 and 4.8.

Usage (from the repository root)::

    qossim reproduce pcn --only T1 T4 --format json > t1t4.jsonl
    python studies/pcn/traces/compare_published.py t1t4.jsonl TABLE_4_3.csv TABLE_4_8.csv

Prints, for every published cell, the published value, the reproduction's mean and its
95% interval, and whether the published value lies inside that interval.
"""

from __future__ import annotations

import csv
import json
import sys

#: Table 4.8's row names -> the reproduction's T4 row labels.
ROWS = {"IEA1": "long IEA"} | {f"IEA{k}": f"short IEA {k - 1}" for k in range(2, 7)}
TYPES = {"CBR": "CBR on OC3", "VBR": "VBR on OC3", "VTR": "VTR (synthetic-mpeg) on 1 Gb/s"}
TYPES["SVD"] = "SVD on OC48"


def main() -> None:
    """Print both comparisons and the mean differences per column."""
    records, t43, t48 = sys.argv[1:4]
    cells: dict[tuple, dict] = {}
    meta: dict[str, dict] = {}
    with open(records, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r.get("table") not in ("T1", "T4"):
                continue
            cells[(r["table"], r["row"], r["column"])] = r
            meta.setdefault(f"{r['table']}/{r['row']}", {})[r["column"]] = r["value"]

    def show(pub: float, r: dict) -> tuple[str, float]:
        lo, hi = r["ci_low"], r["ci_high"]
        inside = lo is not None and lo <= pub <= hi
        text = (
            f"{pub:+8.2f}  {r['value']:+8.2f} [{lo:+7.2f}, {hi:+7.2f}]  {'yes' if inside else 'no'}"
        )
        return text, r["value"] - pub

    print("Table 4.3 (T1): published | reproduced mean [95% interval] | inside")
    with open(t43, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            name = {"I1": "I1-F", "I2": "I2-F"}[row["ingress"]]
            for col, key in (
                ("actual", "actual_term"),
                ("over-termination (pts)", "over_term_points"),
            ):
                r = cells[("T1", name, col)]
                pub = float(row[key]) * (100 if col == "actual" else 1)
                r = dict(r)
                if col == "actual":
                    r = {k: (v * 100 if isinstance(v, float) else v) for k, v in r.items()}
                text, _ = show(pub, r)
                print(f"  {row['ingress']} {col:24s} {text}")
    print("Table 4.8 (T4, 2:1): published | reproduced mean [95% interval] | inside")
    diffs: dict[str, list[float]] = {}
    with open(t48, newline="", encoding="utf-8") as f:
        pub_rows = list(csv.DictReader(f))
    # T4 rows are numbered; find the row number of (topology, traffic, entity).
    index = {}
    for key, cols in meta.items():
        if key.startswith("T4/") and cols.get("long:short") == "2:1":
            index[(cols["topology"], cols["traffic"], cols["IEA / bottleneck"])] = key[3:]
    for row in pub_rows:
        n = row["topology"][3:]
        base = row["row"].split("(")[0]
        entity = ROWS.get(base) or f"bottleneck {base[2:]}"
        for t, label in TYPES.items():
            num = index.get((f"PLT-{n}", label, entity))
            if num is None:
                continue
            for col, key in (("A−O", f"{t}_AO"), ("A−E", f"{t}_AE")):
                text, d = show(float(row[key]), cells[("T4", num, col)])
                diffs.setdefault(f"{t} {col}", []).append(d)
                print(f"  PLT-{n} {row['row']:9s} {t} {col}  {text}")
    print()
    print("| PLT | row | " + " | ".join(f"{t} {c}" for t in TYPES for c in ("A−O", "A−E")) + " |")
    print("|---|---|" + "---|" * 2 * len(TYPES))
    for row in pub_rows:
        n = row["topology"][3:]
        base = row["row"].split("(")[0]
        entity = ROWS.get(base) or f"bottleneck {base[2:]}"
        out = []
        for t, label in TYPES.items():
            num = index[(f"PLT-{n}", label, entity)]
            for col, key in (("A−O", f"{t}_AO"), ("A−E", f"{t}_AE")):
                r = cells[("T4", num, col)]
                pub = float(row[key])
                mark = "" if r["ci_low"] <= pub <= r["ci_high"] else " ✗"
                out.append(f"{pub:+.2f} / {r['value']:+.2f}{mark}")
        print(f"| {n} | {row['row']} | " + " | ".join(out) + " |")
    print()
    print("mean reproduced − published over the rows (points):")
    for k, v in diffs.items():
        print(f"  {k}: {sum(v) / len(v):+.2f} over {len(v)} rows")


if __name__ == "__main__":
    main()
