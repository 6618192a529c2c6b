"""Golden records of the studies' quick profiles: what they are and how to regenerate them.

``tests/test_golden.py`` reproduces a cheap subset of each study in its quick profile
(:data:`SUBSETS`) and compares the JSON records byte for byte with the files under
``tests/data/golden/``. The records depend only on the scenarios, the seeds and the
engine, so a refactoring of the study code must leave them unchanged.

When a change of a model or of a study is *meant* to change the numbers, regenerate the
files deliberately and commit them with that change:

    python tests/golden.py --update

(the command prints which files changed).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

GOLDEN_DIR = Path(__file__).resolve().parent / "data" / "golden"

#: Study name -> experiments reproduced (quick profile) for the golden records.
SUBSETS: dict[str, list[str]] = {
    "validation": ["mm1", "md1", "erlang_b"],
    "pcn": ["A3", "T1"],
    "assured-service": ["S6"],
}


def golden_path(study: str) -> Path:
    """Return the golden file of a study."""
    return GOLDEN_DIR / f"{study}-quick.jsonl"


def records(study: str, out_dir: Path) -> str:
    """Reproduce the study's subset in its quick profile; return its JSON Lines."""
    from qossim.studies import format_json, reproduce

    output, _ = reproduce(
        study, quick=True, only=SUBSETS[study], out_dir=out_dir / study, progress=False
    )
    return format_json(output)


def update() -> int:
    """Rewrite every golden file; print the ones that changed."""
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for study in SUBSETS:
            path = golden_path(study)
            text = records(study, Path(tmp))
            old = path.read_text(encoding="utf-8") if path.exists() else None
            path.write_text(text, encoding="utf-8")
            print(f"{path}: {'unchanged' if old == text else 'written'}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        print("usage: python tests/golden.py --update", file=sys.stderr)
        raise SystemExit(2)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
    raise SystemExit(update())
