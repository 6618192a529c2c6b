"""Print the fidelity summary of a study's JSON records as Markdown, for its README.

Usage::

    qossim reproduce STUDY [--quick] [--only ...] --format json > records.jsonl
    python scripts/fidelity_summary.py records.jsonl

Prints the ``fidelity`` table (cells compared and their verdicts per published table)
and one line per difference with the README section that traces it.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict


def main(path: str) -> int:
    """Print the summary of the records in ``path``."""
    records = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    fidelity = [r for r in records if r["table"] == "fidelity"]
    if not fidelity:
        print("(no published table compared)")
        return 0
    columns: list[str] = []
    rows: dict[str, dict[str, object]] = defaultdict(dict)
    for r in fidelity:
        if r["column"] not in columns:
            columns.append(r["column"])
        rows[r["row"]][r["column"]] = r["value"]
    print("| published table | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for row, cells in rows.items():
        print(f"| {row} | " + " | ".join(str(cells.get(c, "")) for c in columns) + " |")
    differs = [r for r in records if r.get("verdict") == "differs"]
    if differs:
        print()
        print("Cells that differ (published against reproduced):")
        print()
        for r in differs:
            where = f"{r['table']}, {r['row']}, {r['column']}"
            link = r.get("explanation")
            said = f"[traced]({link.removeprefix('README.md')})" if link else "not explained yet"
            print(f"- {where}: {r['published']:.4g} against {r['value']:.4g} — {said}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
