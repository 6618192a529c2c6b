#!/usr/bin/env python3
"""Regenerate the parameter reference tables of docs/scenarios.md.

The tables (the blocks between the marker comments: one per group of kinds and one per
core section) come from the engine's declarations; with --check, only report whether
they are current (exit 1 when they drifted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from qossim import describe

DOC = Path(__file__).resolve().parent.parent / "docs" / "scenarios.md"


def main() -> int:
    """Rewrite or check the generated block; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if the tables are stale")
    args = parser.parse_args()
    text = DOC.read_text()
    new = describe.splice_all(text)
    if new == text:
        return 0
    if args.check:
        print(f"{DOC}: the generated parameter tables are stale; run scripts/gen_docs.py")
        return 1
    DOC.write_text(new)
    print(f"{DOC}: tables regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
