"""Per-worker random item order of the HIT builder (Mathur 2021, §4.5): each worker's copy of a
HIT has its own seeded order, and every copy passes the HIT checker (hit_problems, the function
behind ``mtscore human check-hits``)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from mtscore.analysis.crowd.hits import (
    build_campaign,
    hit_problems,
    plan_hits,
    worker_copies,
    worker_order,
)
from mtscore.analysis.errors import AnalysisInputError

SYSTEMS = ("online-A", "uedin_nmt", "sys.3", "Ünïcode")
POOL = [(s, g) for s in SYSTEMS for g in range(1, 51)]  # 200 outputs -> 3 HITs


def _content(items):
    return sorted((it.system, it.segment, it.type, it.rid, it.text) for it in items)


@pytest.mark.parametrize("seed", range(40))
def test_every_copy_keeps_the_rules(seed):
    base = plan_hits(POOL, seed=seed)
    c = plan_hits(POOL, seed=seed, workers_per_hit=5)
    assert c.n_hits == 5 * base.n_hits == 15
    assert hit_problems(c) == []
    for h in range(base.n_hits):
        orders = set()
        for w in range(5):
            copy = c.hit(5 * h + w)
            assert [it.hit for it in copy] == [5 * h + w] * 100
            assert [it.position for it in copy] == list(range(100))
            assert _content(copy) == _content(base.hit(h))  # the same items, rids included
            orders.add(tuple(it.rid for it in copy))
        assert len(orders) == 5  # no two workers see one sequence
    assert c.items == plan_hits(POOL, seed=seed, workers_per_hit=5).items  # seeded


def test_orders_are_spread_and_independent():
    """Over 400 copies of one HIT, every item appears in many positions (the reachable orders
    move whole blocks and shuffle inside them: an item can reach any position), and the QC
    items stay 41+ positions from their originals."""
    camp = plan_hits(POOL, seed=3)
    hit = camp.hit(0)
    rng = np.random.default_rng(0)
    where: dict[int, Counter] = {it.rid: Counter() for it in hit}
    for _ in range(400):
        copy = worker_order(hit, rng)
        for it in copy:
            where[it.rid][it.position] += 1
        pos = {(it.system, it.segment): it.position for it in copy if it.type == "SYSTEM"}
        assert min(abs(pos[(it.system, it.segment)] - it.position) for it in copy if it.type != "SYSTEM") >= 41
    spread = [len(c) for c in where.values()]
    assert min(spread) >= 70  # 400 draws over 100 positions: ~98 distinct expected
    first_block = Counter(p // 10 for c in where.values() for p, n in c.items() for _ in range(n))
    assert all(3200 <= first_block[b] <= 4800 for b in range(10))  # 4000 each expected


def test_checker_catches_a_broken_order():
    """The checker the test relies on does fail: moving one item across blocks breaks a rule."""
    c = plan_hits(POOL, seed=1, workers_per_hit=2)
    items = list(c.items)
    i = next(k for k in range(10, 20) if items[k].type != items[0].type)
    items[0], items[i] = items[i], items[0]
    broken = type(c)(items, c.seed)
    assert hit_problems(broken) != []


def test_build_campaign_copies_texts_and_errors():
    outs = {s: [f"{s} says line {i} " + " ".join(f"w{j}" for j in range(i % 27)) for i in range(50)]
            for s in SYSTEMS}
    refs = [f"The reference of line {i} " + " ".join(f"r{j}" for j in range(2 + i % 13)) for i in range(50)]
    a = build_campaign(outs, refs, seed=9)
    b = build_campaign(outs, refs, seed=9, workers_per_hit=3)
    assert b.n_hits == 3 * a.n_hits
    assert b.references == a.references
    assert hit_problems(b) == []
    for h in range(a.n_hits):
        for w in range(3):
            assert _content(b.hit(3 * h + w)) == _content(a.hit(h))
    assert worker_copies(a, 3).items == b.items
    assert worker_copies(a, 1).items != a.items  # one copy is still reordered
    unseeded = plan_hits(POOL, seed=None, workers_per_hit=2)
    assert hit_problems(unseeded) == []
    for bad in (0, -1, 1.5, True):
        with pytest.raises(AnalysisInputError, match="workers_per_hit"):
            worker_copies(a, bad)  # type: ignore[arg-type]
    with pytest.raises(AnalysisInputError, match="100 items"):
        worker_order(a.items[:99], np.random.default_rng(0))
