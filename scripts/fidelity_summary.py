"""Print the fidelity summary of a study's JSON records as Markdown, for its README.

Usage::

    qossim reproduce STUDY [--quick] [--only ...] --format json > records.jsonl
    python scripts/fidelity_summary.py STUDY records.jsonl

The records are compared again with the study's published tables as declared now (so a
changed declaration needs no new runs). Prints the ``fidelity`` table (cells compared
and their verdicts per published table) and one line per difference with the README
section that traces it.
"""

from __future__ import annotations

import json
import sys

from qossim.studies import StudyOutput, Table, published


def main(study: str, path: str) -> int:
    """Print the summary of the records of ``study`` in ``path``."""
    output = StudyOutput()
    tables: dict[str, Table] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            if r["table"] == "fidelity":
                continue
            if r["table"] not in tables:
                tables[r["table"]] = Table(r["table"], r["table"])
                output.tables.append(tables[r["table"]])
            tables[r["table"]].add(
                r["row"], r["column"], r["value"], r["ci_low"], r["ci_high"], r["runs"]
            )
    differences = published.compare(study, output)
    fidelity = next((t for t in output.tables if t.id == "fidelity"), None)
    if fidelity is None:
        print("(no published table compared)")
        return 0
    print("| published table | " + " | ".join(fidelity.columns) + " |")
    print("|---" * (len(fidelity.columns) + 1) + "|")
    for row in fidelity.rows:
        cells = [fidelity.cell(row, c) for c in fidelity.columns]
        text = ["" if c is None else str(c["value"]) for c in cells]
        print(f"| {row} | " + " | ".join(text) + " |")
    if differences:
        print()
        print("Cells that differ (published against reproduced):")
        print()
        for d in differences:
            where = f"{d.table.number}, {d.cell.row}, {d.cell.column}"
            e = d.explanation
            said = f"[{e.cause}]({e.link.removeprefix('README.md')})" if e else "not explained yet"
            print(f"- {where}: {d.cell.text} against {d.reproduced:.4g} — {said}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
