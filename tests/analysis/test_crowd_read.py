"""Reading raw crowd batches (Mechanical Turk layout of the docqe-eacl2017 release) and bad input."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mtscore.analysis.crowd import read_mturk_batches
from tests.conftest import require


@pytest.fixture(scope="module")
def docqe(shared_data: Path) -> Path:
    return require(shared_data / "docqe-eacl2017" / "batched-hits")


def test_mturk_runs_counts(docqe):
    # DocQE Table 1 as the release has it (evaluation-methods Part G 12): 10,500 and 14,600 judgements
    a = read_mturk_batches(docqe / "runA")
    b = read_mturk_batches(docqe / "runB")
    assert len(a) == 10500 and len(b) == 14600
    assert Counter(a.item_type.tolist()) == {"SYSTEM": 7350, "REF": 1050, "REPEAT": 1050, "BAD_REF": 1050}
    assert Counter(b.status.tolist()) == {"Submitted": 8900, "Rejected": 3400, "Approved": 2300}
    assert len(np.unique(a.assignment)) == 105 and len(np.unique(b.assignment)) == 146
    assert a.skipped == () and b.skipped == ()
    # first assignment of runA, first answer item: all_784_REF_0__71, 671 work seconds
    assert (a.worker[0], a.item_type[0], a.segment[0], a.position[0], a.score[0], a.time[0]) == \
        ("F0028", "REF", "784", 0, 71.0, 671.0)
    assert str(a.accept[0]) == "2016-11-21T08:26:47"
    # two runB records are glued onto the comment before them (comment typed with Enter):
    # they are split again, so F0013's and F0027's assignments both count
    glued = b.select(b.assignment == "3X73LLYYQ2AZFEES3DMRPHQQJ45NHC")
    assert len(glued) == 100 and set(glued.worker.tolist()) == {"F0027"}
    assert glued.time[0] == 1451.0
