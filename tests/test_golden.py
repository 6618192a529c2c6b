"""The studies' quick-profile records stay identical (golden files under tests/data/golden).

A subset of each study (see ``tests/golden.py``) is reproduced through the real engine
and its JSON records compared byte for byte with the stored ones. A difference means the
numbers or the tables changed; if that is intended, regenerate the files with
``python tests/golden.py --update`` and commit them with the change.
"""

from __future__ import annotations

import difflib

import pytest

from golden import SUBSETS, golden_path, records


@pytest.mark.parametrize("study", list(SUBSETS))
def test_quick_records_match_golden(study, tmp_path):
    """The quick-profile records of the study's subset equal the golden file."""
    expected = golden_path(study).read_text(encoding="utf-8")
    actual = records(study, tmp_path)
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                str(golden_path(study)),
                "reproduced",
                n=0,
            )
        )
        pytest.fail(
            f"{study}: quick-profile records differ from {golden_path(study).name}; if the "
            "change is intended, run `python tests/golden.py --update` and commit the "
            f"files.\n{diff[:4000]}"
        )
