"""A BERTScore rescale baseline from a monolingual corpus, by bert_score's recipe
(``get_rescale_baseline/get_rescale_baseline.py`` in its repository): the first 1,000,000 lines,
stripped, those with fewer than 32 space-separated words (an empty line counts as one word and is
kept, as there); two disjoint random halves paired line by line (the first half are candidates,
the second references); every layer scored without idf, in chunks of 1,000 pairs with bert_score's
batches of ``batch_size`` (64) pairs; the baseline of a layer is the mean P, R and F over all pairs.

The batches matter: on random (unrelated) pairs some tokens have only negative cosines, and
bert_score's zero padding turns such a maximum into 0 when the pair is padded in its batch (the
padding quirk, reproduced by ``pad_quirk_batch``). Its shipped baselines contain that effect
(about 5e-4 on MiniLM's layer 6), so it is reproduced by default; ``batch_size=None`` gives the
quirk-free means mtscore's own scores would have on the same pairs."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .bertscore import BERTScore

__all__ = ["baseline_pairs", "compute_baseline"]

MAX_LINES = 1_000_000
#: pairs per bert_score call in its recipe (the padding-quirk batches restart at each chunk)
CHUNK_PAIRS = 1000


def baseline_pairs(sentences: Iterable[str], n_pairs: int | None = None, seed: int = 0,
                   max_words: int = 32, max_lines: int = MAX_LINES) -> tuple[list[str], list[str]]:
    """``(cands, refs)``: bert_score's random pairing of a corpus (see the module docstring);
    ``n_pairs`` keeps only that many of the pairs (default: all, ``len // 2``)."""
    lines = []
    for i, s in enumerate(sentences):
        if i == max_lines:
            break
        s = s.strip()
        if len(s.split(" ")) < max_words:
            lines.append(s)
    half = len(lines) // 2
    if half < 1:
        raise ValueError(f"a baseline needs at least 2 corpus lines with fewer than {max_words} words, "
                         f"got {len(lines)}")
    pick = np.random.default_rng(seed).choice(len(lines), size=(2, half), replace=False)
    if n_pairs is not None:
        pick = pick[:, :max(1, int(n_pairs))]
    return [lines[i] for i in pick[0]], [lines[i] for i in pick[1]]


def compute_baseline(sentences: Sequence[str], model: str | None = None, layers: Iterable[int] | None = None,
                     n_pairs: int | None = None, seed: int = 0, max_words: int = 32,
                     revision: str | None = None, batch_size: int | None = 64, **encoder_kw) -> np.ndarray:
    """float64 ``[L+1, 3]``: the mean P, R, F of :func:`baseline_pairs` for each layer 0..L of
    ``model`` (rows of layers not in ``layers`` are NaN), with bert_score's padding quirk for its
    ``batch_size`` (None: without it). Save it with ``write_baseline``."""
    from .encoder import resolve_source
    from .encoder.model_dir import read_config
    from .encoder.onnx_builder import model_dims

    cands, refs = baseline_pairs(sentences, n_pairs, seed, max_words)
    path = resolve_source(model, revision).path
    n_layers = model_dims(read_config(path if path.is_dir() else path.parent))[2]
    layers = list(range(n_layers + 1)) if layers is None else list(layers)
    table = np.full((n_layers + 1, 3), np.nan)
    for L in layers:
        if not 0 <= L <= n_layers:
            raise ValueError(f"--layers {L}: the model has layers 0..{n_layers}")
        scorer = BERTScore(model=model, layer=L, progress=False, revision=revision, pad_quirk_batch=batch_size,
                           chunk_size=CHUNK_PAIRS, **encoder_kw)
        r = scorer.score(cands, [refs])
        table[L] = (r.mean_precision, r.mean_recall, r.mean_f1)
    return table
