"""Every command's bars follow mtscore.engine.progress's rule (P14 item 4): a bar on a terminal
or when forced, never into a log file or CI output (`meta seg` used to print tqdm's lines into
logs whenever stderr was redirected)."""
import io

import pytest

from mtscore.engine.progress import NullBar


@pytest.fixture
def not_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())


def _bars():
    from mtscore.analysis.metaeval.significance import _progress as metaeval_bar
    from mtscore.bindings.api.batch import _progress as api_bar

    return {"meta seg": lambda enabled: metaeval_bar(10, enabled),
            "score": lambda enabled: api_bar(10, enabled)}


@pytest.mark.parametrize("face", ["meta seg", "score"])
def test_no_bar_when_stderr_is_not_a_terminal(not_a_terminal, face):
    assert isinstance(_bars()[face](None), NullBar)


@pytest.mark.parametrize("face", ["meta seg", "score"])
def test_a_forced_bar_is_drawn(not_a_terminal, face):
    bar = _bars()[face](True)
    assert not isinstance(bar, NullBar)
    assert bar.total == 10
    bar.close()


def test_meta_seg_leaves_the_choice_to_the_rule():
    import inspect

    from mtscore.bindings.cli import metaeval as metaeval_cli

    src = inspect.getsource(metaeval_cli)
    assert "progress=True" not in src
    assert "progress=None" in src


def test_significance_curve_draws_a_bar_on_a_terminal_only(monkeypatch):
    """`human significance --sizes` runs a Wilcoxon matrix per size: a bar per size on a
    terminal (here: the rule says yes), nothing otherwise."""
    import sys

    import numpy as np

    import mtscore.engine.progress as progress
    from mtscore.analysis.human.significance import significance_curve

    rng = np.random.default_rng(1)
    system = np.repeat(["a", "b", "c"], 40)
    score = rng.normal(size=120) + (system == "a")
    args = (system, score, np.arange(120), [10, 20, 40])
    for terminal in (False, True):
        err = io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        monkeypatch.setattr(progress, "progress_enabled",
                            lambda enabled=None, stream=None, t=terminal: t if enabled is None else bool(enabled))
        res = significance_curve(*args)
        assert ("judgements per system" in err.getvalue()) == terminal
        assert res["share"].shape == (3, 3)
