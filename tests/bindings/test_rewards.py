"""reward_fn called the way TRL's GRPOTrainer calls reward functions, against sacrebleu."""
from __future__ import annotations

import numpy as np
import pytest

from mtscore.bindings.decoder.rewards import reward_fn

sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu (test extra) not installed")


@pytest.fixture(scope="module")
def batch():
    """B = 8 prompts x G = 4 samples of real newstest2021 en-de text (each prompt's samples:
    four system outputs), the reference repeated per sample as the trainer does."""
    from wmt21 import load_pair, pairs

    if "newstest2021.en-de" not in pairs():
        pytest.skip("newstest2021.en-de not in MTSCORE_DATA")
    refs, systems, _ = load_pair("newstest2021.en-de")
    outs = list(systems.values())[:4]
    comps, ref_col, ref_multi = [], [], []
    for i in range(8):
        for s in outs:
            comps.append(s[i])
            ref_col.append(refs[0][i])
            ref_multi.append([r[i] for r in refs])
    return comps, ref_col, ref_multi


def trl_call(fn, completions, **columns):
    return fn(prompts=["p"] * len(completions), completions=completions,
              completion_ids=[[1, 2]] * len(completions), trainer_state=object(), **columns)


@pytest.mark.parametrize(("metric", "opts", "sb"), [
    ("chrf", {}, lambda: sacrebleu.CHRF()),
    ("chrf++", {}, lambda: sacrebleu.CHRF(word_order=2)),
    ("bleu", {"effective_order": True}, lambda: sacrebleu.BLEU(effective_order=True)),
])
def test_text_rewards_equal_sacrebleu(batch, metric, opts, sb):
    comps, refs, multi = batch
    s = sb()
    fn = reward_fn(metric, **opts)
    assert trl_call(fn, comps, reference=refs) == \
        [0.01 * s.sentence_score(c, [r]).score for c, r in zip(comps, refs)]
    fn1 = reward_fn(metric, scale=1.0, **opts)
    assert trl_call(fn1, comps, reference=multi) == \
        [s.sentence_score(c, rs).score for c, rs in zip(comps, multi)]


def test_chat_completions_and_other_column(batch):
    comps, refs, _ = batch
    chat = [[{"role": "assistant", "content": c}] for c in comps]
    fn = reward_fn("chrf", reference_column="solution", scale=1.0)
    assert trl_call(fn, chat, solution=refs) == trl_call(fn, comps, solution=refs)
    assert fn.__name__ == "chrf_reward"


def test_ter_reward_is_negative_error_rate(batch):
    comps, refs, _ = batch
    comps, refs = comps[:8], refs[:8]
    fn = reward_fn("ter", normalized=True)
    s = sacrebleu.TER(normalized=True)
    assert trl_call(fn, comps, reference=refs) == \
        [-0.01 * s.sentence_score(c, [r]).score for c, r in zip(comps, refs)]


def test_every_registered_metric_is_a_reward(batch):
    """METEOR (registered this release) is a reward like the others: 0.01 x its sentence score."""
    pytest.importorskip("Stemmer")
    from mtscore import METEOR

    comps, refs, _ = batch
    comps, refs = comps[:8], refs[:8]
    m = METEOR()
    assert trl_call(reward_fn("meteor"), comps, reference=refs) == \
        [0.01 * m.sentence_score(c, [r]).score for c, r in zip(comps, refs)]


def test_id_mode_rewards(batch):
    comps, refs, multi = batch
    vocab: dict = {}
    enc = [[vocab.setdefault(w, len(vocab)) for w in s.split()] for s in comps]
    renc = [[vocab.setdefault(w, len(vocab)) for w in s.split()] for s in refs]
    menc = [[[vocab.setdefault(w, len(vocab)) for w in r.split()] for r in rs] for rs in multi]
    j = [" ".join(map(str, x)) for x in enc]
    sb = sacrebleu.BLEU(tokenize="none", effective_order=True)
    fn = reward_fn("bleu", effective_order=True)
    assert fn(completions=enc, reference=renc) == \
        [0.01 * sb.sentence_score(h, [" ".join(map(str, r))]).score for h, r in zip(j, renc)]
    assert fn(completions=enc, reference=menc) == \
        [0.01 * sb.sentence_score(h, [" ".join(map(str, r)) for r in rs]).score for h, rs in zip(j, menc)]
    # the trainer's completion_ids column, padded numpy rows work too
    fn_ids = reward_fn("bleu", use_completion_ids=True, effective_order=True)
    assert fn_ids(completions=comps, completion_ids=enc, reference=renc) == fn(completions=enc, reference=renc)
    assert fn(completions=[np.array(x) for x in enc], reference=renc) == fn(completions=enc, reference=renc)


def test_ids_decoded_with_a_vocabulary(batch):
    comps, refs, _ = batch
    words = sorted({w for s in comps + refs for w in s.split()})
    index = {w: i for i, w in enumerate(words)}
    enc = [[index[w] for w in s.split()] for s in comps]
    from mtscore.engine.id_text import load_vocabulary

    fn = reward_fn("chrf", vocab=load_vocabulary(words, rule="space"))
    renc = [[index[w] for w in s.split()] for s in refs]
    s = sacrebleu.CHRF()
    assert fn(completions=enc, reference=renc) == \
        [0.01 * s.sentence_score(" ".join(c.split()), [" ".join(r.split())]).score for c, r in zip(comps, refs)]


def test_reward_errors():
    fn = reward_fn("chrf")
    with pytest.raises(KeyError, match="no 'reference' column among the keyword arguments"):
        fn(completions=["a"], solution=["a"])
    with pytest.raises(ValueError, match="1 values in column 'reference' for 2 completions"):
        fn(completions=["a", "b"], reference=["a"])
    with pytest.raises(TypeError, match=r"reference\[0\] is a int"):
        fn(completions=["a"], reference=[3])
    with pytest.raises(TypeError, match=r"completions\[1\] is a list among text completions"):
        fn(completions=["a", [1]], reference=["a", "b"])
    with pytest.raises(ValueError, match="chrF and chrF\\+\\+ work on characters"):
        fn(completions=[[1, 2]], reference=[[1, 2]])
    with pytest.raises(ValueError, match="unknown metric"):
        reward_fn("no-such-metric")
