"""COMET's encoder inputs (mtscore.engine.comet.inputs) against unbabel-comet 2.2.7's own logic run with
transformers' tokenizer: ``prepare_sample`` (``truncation=True, max_length=max_positions - 2``) and
``concat_sequences`` (pads removed, ``<s> mt </s></s> src </s>``, the 507/512 cut) reproduced here on
``XLMRobertaTokenizerFast(tokenizer_file=...)``, which reads tokenizer.json as it is (as transformers 4.x,
the version unbabel-comet pins, does for ``from_pretrained``). The tokenizer is a small XLM-R-style one
trained on the shared WMT text (comet_tokenizer_fixture); inputs include adversarial Unicode, empty
and blank strings, literal special tokens and lines that hit the 510 and 512 cuts. Plus the
de-duplication, the batches and the errors."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from comet_fixtures import TINY, write_model_folder
from comet_tokenizer_fixture import ADVERSARIAL, long_lines, train_lines, write_tokenizer_folder

from mtscore.engine.checkpoints import CheckpointError
from mtscore.engine.comet.inputs import (
    CometTokenizer,
    length_batches,
    load_comet_tokenizer,
    padded_batches,
    unique_pairs,
    unique_texts,
)
from mtscore.engine.comet.model import resolve_comet_model

XLMR = {"max_position_embeddings": 514, "vocab_size": 250002, "pad_token_id": 1}



@pytest.fixture(scope="module")
def tok_dir(tmp_path_factory, shared_data):
    return write_tokenizer_folder(tmp_path_factory.mktemp("xlmr-tok"), train_lines(shared_data))


@pytest.fixture(scope="module")
def hf(tok_dir):
    transformers = pytest.importorskip("transformers", reason="transformers (the test extra) is the oracle")
    return transformers.XLMRobertaTokenizerFast(tokenizer_file=str(tok_dir / "tokenizer.json"))


@pytest.fixture(scope="module")
def data_lines(shared_data):
    """Real segments: sources, references and system outputs of several pairs (600 lines)."""
    txt = shared_data / "wmt21-news-systems" / "txt"
    names = ["sources/newstest2021.en-de.src.en", "references/newstest2021.en-de.ref.A.de",
             "sources/newstest2021.zh-en.src.zh", "sources/newstest2021.ha-en.src.ha",
             "sources/newstest2021.is-en.src.is", "references/newstest2021.en-ja.ref.A.ja"]
    out = []
    for n in names:
        f = txt / n
        if not f.is_file():
            pytest.skip(f"missing data file {f} (set MTSCORE_DATA)")
        out += f.read_text(encoding="utf-8").splitlines()[500:600]
    assert len(out) == 600
    return out


def comet_prepare(hf, texts, max_positions):
    """unbabel-comet 2.2.7's ``Encoder.prepare_sample`` (not word level): input_ids and attention_mask
    lists, padded to the longest."""
    out = hf(texts, padding=True, truncation=True, max_length=max_positions - 2)
    return out["input_ids"], out["attention_mask"]


def comet_concat(hf, mt_ids, src_ids, max_positions):
    """unbabel-comet 2.2.7's ``Encoder.concat_sequences`` for [mt, src] with XLM-R (size_separator 2):
    pads removed, ``build_inputs_with_special_tokens`` (transformers 4.x: cls a sep sep b sep), cut."""
    pad = hf.pad_token_id
    mt = [[i for i in x if i != pad] for x in mt_ids]
    src = [[i for i in x if i != pad] for x in src_ids]
    out = []
    for a, b in zip(mt, src):
        lengths = (len(a[1:-1]), len(b[1:-1]))
        seq = [hf.cls_token_id, *a[1:-1], hf.sep_token_id, hf.sep_token_id, *b[1:-1], hf.sep_token_id]
        if sum(lengths) > max_positions - (1 + 2 * 2):
            seq = seq[:max_positions]
        out.append(seq)
    return out


def unpadded(ids, mask):
    return [[i for i, m in zip(row, mrow) if m] for row, mrow in zip(ids, mask)]


def test_fixture_is_the_xlmr_layout(tok_dir, hf):
    tok = CometTokenizer(tok_dir / "tokenizer.json", XLMR)
    assert (tok.bos_id, tok.pad_id, tok.eos_id) == (0, 1, 2)
    assert (hf.cls_token_id, hf.pad_token_id, hf.sep_token_id) == (0, 1, 2)
    assert (tok.max_positions, tok.max_length) == (512, 510)
    assert tok.path == tok_dir / "tokenizer.json"


@pytest.mark.parametrize("mpe", [514, 14])
def test_encode_equals_prepare_sample(tok_dir, hf, data_lines, mpe):
    """Every text: the ids COMET feeds the encoder (without padding), at the real limit (514
    positions) and a tiny one (14: 10 ids, so most lines are cut)."""
    tok = CometTokenizer(tok_dir / "tokenizer.json", {**XLMR, "max_position_embeddings": mpe})
    texts = ADVERSARIAL + data_lines + long_lines(data_lines)
    ids, mask = comet_prepare(hf, texts, mpe - 2)
    want = unpadded(ids, mask)
    got, cut = tok.encode_flagged(texts)
    assert all(g.dtype == np.int64 for g in got)
    assert [g.tolist() for g in got] == want
    assert max(len(w) for w in want) == mpe - 4
    full = [len(x) for x in hf(texts)["input_ids"]]
    assert cut.tolist() == [n > mpe - 4 for n in full]
    assert cut.sum() >= (4 if mpe == 514 else 400)
    assert [g.tolist() for g in tok.encode(texts)] == want


def test_literal_specials_keep_their_ids(tok_dir):
    """``<pad>`` in a text is the pad id inside the sentence (attention mask 1 in COMET), ``</s>`` the
    eos id: they are special tokens of the tokenizer, as transformers treats them."""
    tok = CometTokenizer(tok_dir / "tokenizer.json", XLMR)
    ids = tok.encode(["x <pad> y", "a </s> b", "<s>"])
    assert 1 in ids[0][1:-1].tolist()
    assert 2 in ids[1][1:-1].tolist()
    assert ids[2].tolist() == [0, 0, 2]


def exact_lines(tok, n_pieces: list[int]) -> list[str]:
    """Texts of exactly ``n`` pieces each ("a a a ...": one piece per word in this tokenizer)."""
    texts = [" ".join(["a"] * n) for n in n_pieces]
    assert [len(x) - 2 for x in tok.encode(texts)] == n_pieces  # the premise of the boundary tests
    return texts


def test_cut_at_510_boundary(tok_dir, hf):
    tok = CometTokenizer(tok_dir / "tokenizer.json", XLMR)
    texts = exact_lines(CometTokenizer(tok_dir / "tokenizer.json", {**XLMR, "max_position_embeddings": 4000}),
                        [507, 508, 509, 510, 700])
    got, cut = tok.encode_flagged(texts)
    assert [len(g) for g in got] == [509, 510, 510, 510, 510]
    assert cut.tolist() == [False, False, True, True, True]
    assert [g.tolist() for g in got] == unpadded(*comet_prepare(hf, texts, 512))
    assert got[2][-1] == tok.eos_id


@pytest.mark.parametrize("mpe", [514, 14])
def test_joint_equals_concat_sequences(tok_dir, hf, data_lines, mpe):
    """The unified_metric input for many pairs: short with short, long with short and long, blank,
    literal <pad> (removed before joining), at the real and a tiny limit."""
    tok = CometTokenizer(tok_dir / "tokenizer.json", {**XLMR, "max_position_embeddings": mpe})
    texts = ADVERSARIAL + data_lines[:150] + long_lines(data_lines)
    mt = texts + texts[::-1] + ["x <pad> y"] * 3
    src = texts[::-1] + texts + ["<pad>", "", "a <pad>"]
    mt_ids, _ = comet_prepare(hf, mt, mpe - 2)
    src_ids, _ = comet_prepare(hf, src, mpe - 2)
    want = comet_concat(hf, mt_ids, src_ids, mpe - 2)
    got = tok.joint(tok.encode(mt), tok.encode(src))
    assert all(g.dtype == np.int64 for g in got)
    assert [g.tolist() for g in got] == want
    assert max(len(g) for g in got) == mpe - 2
    lost_eos = sum(1 for g in got if g[-1] != tok.eos_id)
    assert lost_eos >= 1  # some pair is cut inside the source: its final </s> is gone
    inner = tok.encode(["x <pad> y"])[0][1:-1]
    assert got[-3].tolist() == [0, *inner[inner != tok.pad_id].tolist(), 2, 2, 2]  # src "<pad>": nothing left
    assert tok.pad_id not in np.concatenate(got).tolist()


def test_joint_cut_507_512_boundary(tok_dir, hf):
    """Inner lengths summing to 506..509: no cut up to 508 (512 ids with the four specials), then the
    first 512 ids, which end inside the source (no final </s>)."""
    big = CometTokenizer(tok_dir / "tokenizer.json", {**XLMR, "max_position_embeddings": 4000})
    tok = CometTokenizer(tok_dir / "tokenizer.json", XLMR)
    mts = exact_lines(big, [300, 300, 300, 300, 508])
    srcs = exact_lines(big, [206, 207, 208, 209, 508])
    got = tok.joint(tok.encode(mts), tok.encode(srcs))
    assert [len(g) for g in got] == [510, 511, 512, 512, 512]
    a = int(tok.encode(["a"])[0][1])
    assert [int(g[-1]) for g in got] == [2, 2, 2, a, a]  # the last two lost their final </s>
    assert got[4][509:512].tolist() == [2, 2, a]  # <s>, 508 mt pieces, </s></s>, one src piece
    want = comet_concat(hf, comet_prepare(hf, mts, 512)[0], comet_prepare(hf, srcs, 512)[0], 512)
    assert [g.tolist() for g in got] == want


def test_joint_length_mismatch(tok_dir):
    tok = CometTokenizer(tok_dir / "tokenizer.json", XLMR)
    with pytest.raises(ValueError, match="2 translations but 1 sources"):
        tok.joint(tok.encode(["a", "b"]), tok.encode(["c"]))


# --- de-duplication and batches -----------------------------------------------------------------

def test_unique_texts_across_columns():
    src = ["s1", "s2", "s1"]
    ref = ["r1", "s2", "r3"]
    sys_a = ["h", "r1", "h"]
    sys_b = ["h", "x", "s1"]
    texts, index = unique_texts(src, ref, sys_a, sys_b)
    assert texts == ["s1", "s2", "r1", "r3", "h", "x"]
    for col, idx in zip((src, ref, sys_a, sys_b), index):
        assert idx.dtype == np.int64
        assert [texts[i] for i in idx] == col
    assert index[0].tolist() == [0, 1, 0]
    assert index[3].tolist() == [4, 5, 0]
    assert unique_texts() == ([], [])
    t, i = unique_texts([])
    assert t == []
    assert i[0].shape == (0,)


def test_unique_pairs():
    pairs, index = unique_pairs(np.array([3, 1, 3, 1, 0]), np.array([2, 2, 2, 5, 2]))
    assert pairs.tolist() == [[0, 2], [1, 2], [1, 5], [3, 2]]
    assert index.tolist() == [3, 1, 3, 2, 0]
    assert pairs.dtype == np.int64
    assert index.dtype == np.int64
    p, i = unique_pairs(np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert p.shape == (0, 2)
    assert i.shape == (0,)
    with pytest.raises(ValueError, match="two equal 1-d arrays"):
        unique_pairs(np.array([1, 2]), np.array([1]))


def test_dedup_flow_equals_per_segment_comet(tok_dir, hf, data_lines):
    """Two systems against one source set, with repeats: each distinct text is encoded once and each
    distinct (translation, source) pair joined once, yet every segment gets COMET's own input."""
    tok = CometTokenizer(tok_dir / "tokenizer.json", XLMR)
    src = [*data_lines[:30], *data_lines[:10], data_lines[0]]
    mt_a = [*data_lines[100:140], data_lines[100]]  # the last segment repeats the first one
    mt_b = [*data_lines[100:120], *data_lines[:20], data_lines[100]]  # mt_a's texts and src's
    texts, (isrc, ia, ib) = unique_texts(src, mt_a, mt_b)
    assert len(texts) == 70  # of 123 texts
    ids = tok.encode(texts)
    for mt, imt in ((mt_a, ia), (mt_b, ib)):
        pairs, pidx = unique_pairs(imt, isrc)
        assert len(pairs) == 40  # of 41 segments
        joint = tok.joint([ids[i] for i in pairs[:, 0]], [ids[j] for j in pairs[:, 1]])
        want = comet_concat(hf, comet_prepare(hf, mt, 512)[0], comet_prepare(hf, src, 512)[0], 512)
        assert [joint[k].tolist() for k in pidx] == want
        assert [ids[k].tolist() for k in imt] == unpadded(*comet_prepare(hf, mt, 512))


def test_length_batches_budget():
    lengths = np.array([5, 40, 12, 40, 3, 600, 7])
    batches = length_batches(lengths, batch_tokens=100, max_rows=3)
    assert [b.tolist() for b in batches] == [[5], [1, 3], [2, 6, 0], [4]]
    for b in batches:
        assert len(b) == 1 or len(b) * lengths[b].max() <= 100
    assert sorted(np.concatenate(batches).tolist()) == list(range(7))
    assert length_batches(np.array([], dtype=np.int64)) == []


def test_padded_batches_rebuild_every_sequence(tok_dir, data_lines):
    tok = CometTokenizer(tok_dir / "tokenizer.json", XLMR)
    texts = [*data_lines[:60], "", "x <pad> y"]
    ids = tok.encode(texts)
    seen = {}
    for batch in padded_batches(ids, tok.pad_id, batch_tokens=300, max_rows=8):
        assert batch.input_ids.dtype == np.int64
        assert batch.attention_mask.dtype == np.int64
        assert batch.input_ids.shape == batch.attention_mask.shape == (len(batch.rows), batch.input_ids.shape[1])
        assert len(batch.rows) <= 8
        assert (len(batch.rows) == 1 or batch.input_ids.size <= 300)
        for r, row, m in zip(batch.rows, batch.input_ids, batch.attention_mask):
            n = int(m.sum())
            assert m[:n].all()
            assert not m[n:].any()
            assert (row[n:] == tok.pad_id).all()
            seen[int(r)] = row[:n]
    assert sorted(seen) == list(range(len(ids)))
    for i, x in enumerate(ids):
        assert np.array_equal(seen[i], x)
    # the literal <pad> keeps mask 1 (as in COMET's prepare_sample): the mask comes from the length
    k = len(ids) - 1
    assert tok.pad_id in seen[k][1:-1].tolist()


# --- loading and errors -------------------------------------------------------------------------

def model_folder(folder: Path, cid: str = "regression_metric") -> Path:
    """A COMET model folder whose checkpoint is only present (resolving does not read it)."""
    write_model_folder(folder, cid, checkpoint=False)
    (folder / "checkpoints").mkdir()
    (folder / "checkpoints" / "model.ckpt").write_bytes(b"")
    return folder


def encoder_folder(folder: Path, config: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "xlm-roberta"}))
    return folder


def test_load_from_resolved_model(tmp_path, tok_dir):
    enc = encoder_folder(tmp_path / "enc", {**TINY, "vocab_size": 5000})
    (enc / "tokenizer.json").write_text((tok_dir / "tokenizer.json").read_text(encoding="utf-8"), encoding="utf-8")
    cfg = json.loads((enc / "config.json").read_text())
    files = resolve_comet_model(model_folder(tmp_path / "m"), encoder=enc)
    tok = load_comet_tokenizer(files)
    assert (tok.max_positions, tok.max_length) == (cfg["max_position_embeddings"] - 2,
                                                    cfg["max_position_embeddings"] - 4)
    assert len(tok.encode([" ".join(["a"] * 50)])[0]) == tok.max_length


def test_load_sentencepiece_only(tmp_path, tok_dir):
    """No tokenizer.json (microsoft/infoxlm-large): the SentencePiece model is converted; on plain
    text it encodes as the tokenizer.json of the same model (test_comet_spm_tokenizer checks it in full)."""
    enc = encoder_folder(tmp_path / "infoxlm", {**TINY, "vocab_size": 5000})
    (enc / "sentencepiece.bpe.model").write_bytes((tok_dir / "sentencepiece.bpe.model").read_bytes())
    files = resolve_comet_model(model_folder(tmp_path / "m", "unified_metric"), encoder=enc)
    assert files.tokenizer_file is None
    tok = load_comet_tokenizer(files)
    assert tok.path == enc / "sentencepiece.bpe.model"
    texts = ["Hello world.", "Grüße aus Köln", "日本語のテキスト"]
    assert [x.tolist() for x in tok.encode(texts)] == [
        x.tolist() for x in CometTokenizer(tok_dir / "tokenizer.json", files.config).encode(texts)]
    (enc / "sentencepiece.bpe.model").write_bytes(b"")
    with pytest.raises(CheckpointError, match=r"infoxlm/sentencepiece.bpe.model: not a SentencePiece model"):
        load_comet_tokenizer(files)


@pytest.mark.parametrize("mpe", [None, 4, "514", True])
def test_bad_max_position_embeddings(tok_dir, mpe):
    cfg = {k: v for k, v in XLMR.items() if k != "max_position_embeddings"}
    if mpe is not None:
        cfg["max_position_embeddings"] = mpe
    with pytest.raises(CheckpointError, match=r"cfg/config.json: max_position_embeddings: "):
        CometTokenizer(tok_dir / "tokenizer.json", cfg, config_file="cfg/config.json")


def test_vocab_larger_than_encoder(tok_dir):
    with pytest.raises(CheckpointError, match=r"tokenizer.json: 4002 tokens, more than the encoder's vocab_size 24"):
        CometTokenizer(tok_dir / "tokenizer.json", {**XLMR, "vocab_size": 24})


def test_missing_or_broken_tokenizer_json(tmp_path):
    with pytest.raises(CheckpointError, match=r"tokenizer.json: missing"):
        CometTokenizer(tmp_path / "tokenizer.json", XLMR)
    (tmp_path / "tokenizer.json").write_text("[1]")
    with pytest.raises(CheckpointError, match=r"tokenizer.json: expected a JSON object, got list"):
        CometTokenizer(tmp_path / "tokenizer.json", XLMR)
    (tmp_path / "tokenizer.json").write_text('{"version": "1.0"}')
    with pytest.raises(CheckpointError, match=r"tokenizer.json: not a tokenizer.json \(no 'model' entry\)"):
        CometTokenizer(tmp_path / "tokenizer.json", XLMR)
    (tmp_path / "tokenizer.json").write_text('{"model": {"type": "Nope"}}')
    with pytest.raises(CheckpointError, match=r"tokenizer.json: not a valid tokenizer.json"):
        CometTokenizer(tmp_path / "tokenizer.json", XLMR)


def test_other_post_processor_is_refused(tmp_path, tok_dir):
    spec = json.loads((tok_dir / "tokenizer.json").read_text(encoding="utf-8"))
    spec["post_processor"] = None
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(CheckpointError, match=r"post_processor adds \[\] to a sentence; COMET's XLM-R"):
        CometTokenizer(tmp_path / "tokenizer.json", XLMR)


def test_special_token_names_from_special_tokens_map(tmp_path, tok_dir):
    (tmp_path / "tokenizer.json").write_text((tok_dir / "tokenizer.json").read_text(encoding="utf-8"),
                                             encoding="utf-8")
    (tmp_path / "special_tokens_map.json").write_text(json.dumps({"pad_token": {"content": "<mask>"}}))
    assert CometTokenizer(tmp_path / "tokenizer.json", {**XLMR, "pad_token_id": 4001}).pad_id == 4001
    (tmp_path / "special_tokens_map.json").write_text(json.dumps({"pad_token": "<nothing>"}))
    with pytest.raises(CheckpointError, match=r"the pad_token '<nothing>' is not in the vocabulary"):
        CometTokenizer(tmp_path / "tokenizer.json", XLMR)


def test_pad_id_must_be_the_configs(tok_dir):
    """The batches' padding (the tokenizer's <pad>) must be what the encoder takes for padding
    (config.json's pad_token_id): else positions and avg/max pooling would count padding as text."""
    assert CometTokenizer(tok_dir / "tokenizer.json", XLMR).pad_id == 1
    with pytest.raises(CheckpointError, match=r"tokenizer.json: the pad_token '<pad>' is id 1, but "
                                              r"cfg/config.json says pad_token_id 0; the encoder would"):
        CometTokenizer(tok_dir / "tokenizer.json", {**XLMR, "pad_token_id": 0}, config_file="cfg/config.json")
