"""AR masked sums are exact on every BLAS path: float32 (column sums < 2**24), float64
(< 2**53), the int64 kernel, with the reference-side columns shared by systems multiplied once."""
import numpy as np
import pytest

from mtscore.engine.metrics import bootstrap
from mtscore.engine.significance.resampling import ar_sums, draw_masks


def _exact(blocks, scales, n_trials, seed):
    masks = np.concatenate([m for _, m in draw_masks(np.random.default_rng(seed), n_trials, len(blocks[0]))])
    return [masks.astype(np.int64) @ np.round(b * s).astype(np.int64) for b, s in zip(blocks, scales)]


@pytest.mark.parametrize("high", [50, 2 ** 17, 2 ** 46])   # float32, float64, int64 kernel (column sums >= 2**53)
@pytest.mark.parametrize("force_kernel", [False, True])
def test_ar_sums_exact_with_shared_columns(high, force_kernel, monkeypatch):
    monkeypatch.setattr(bootstrap, "FORCE_KERNEL", force_kernel)
    rng = np.random.default_rng(7)
    n = 300
    shared = rng.integers(0, high, size=(n, 2))            # e.g. reference lengths: every system has them
    blocks = [np.concatenate([rng.integers(0, high, size=(n, 3)), shared], axis=1) for _ in range(3)]
    blocks.append(np.concatenate([shared, shared[:, :1]], axis=1))   # duplicates inside a block
    ter = rng.integers(0, 8, size=(n, 2)) / 4.0                       # dyadic floats (TER)
    blocks.append(ter)
    scales = [1, 1, 1, 1, 4]
    got = ar_sums(blocks, scales, 100, np.random.default_rng(3))
    for g, w in zip(got, _exact(blocks, scales, 100, 3)):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, w)


def test_ar_sums_float_blocks_without_scale():
    # no dyadic scale: sacrebleu's float64 (pos @ x, neg @ x) pairs
    rng = np.random.default_rng(1)
    x = rng.random((64, 3))
    (pos, neg), = ar_sums([x], [None], 40, np.random.default_rng(5))
    masks = np.concatenate([m for _, m in draw_masks(np.random.default_rng(5), 40, 64)])
    np.testing.assert_array_equal(pos, masks @ x)
    np.testing.assert_array_equal(neg, ~masks @ x)
