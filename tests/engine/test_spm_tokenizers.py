"""spm / flores101 / flores200 tokenizers: with a SentencePiece model trained here (no network),
placed where both sacrebleu and mtscore look for it, BLEU equals sacrebleu's; a missing model
gives a clear offline error."""
import pytest

spm = pytest.importorskip("sentencepiece")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("spm")
    corpus = d / "corpus.txt"
    words = ["the", "cat", "sat", "on", "the", "mat", "while", "a", "dog", "barked", "loudly", "near", "the", "old", "house", "Der", "Hund", "bellte", "laut", "neben", "dem", "alten", "Haus", "und", "die", "Katze", "saß", "auf", "der", "Matte"]
    lines = [" ".join(words[i % len(words):] + words[: i % len(words)]) for i in range(300)]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (d / "models").mkdir()
    prefix = d / "models" / "m"
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), vocab_size=50,
                                   character_coverage=1.0, minloglevel=2)
    model = prefix.with_suffix(".model").read_bytes()
    for name in ("sacrebleu_tokenizer_spm.model", "flores200sacrebleuspm"):
        (d / "models" / name).write_bytes(model)
    return d


@pytest.mark.parametrize("tok", ["flores101", "flores200", "spm"])
def test_spm_bleu_matches_sacrebleu(model_dir, monkeypatch, tok):
    monkeypatch.setenv("SACREBLEU", str(model_dir))
    monkeypatch.setenv("MTSCORE_CACHE", str(model_dir / "mtscore-cache"))
    import sacrebleu
    import sacrebleu.tokenizers.tokenizer_spm as sacre_spm

    import mtscore

    # sacrebleu reads $SACREBLEU once, when first imported (maybe by an earlier test)
    monkeypatch.setattr(sacre_spm, "SACREBLEU_DIR", str(model_dir))

    hyps = ["the cat sat on the mat", "Der Hund bellte laut!", "", "ünïcödé 中文 😀 dog"]
    refs = [["the cat sat on a mat", "Der Hund bellt laut.", "x", "unicode dog"]]
    a = sacrebleu.BLEU(tokenize=tok)
    b = mtscore.BLEU(tokenize=tok)
    assert a.corpus_score(hyps, refs).score == b.corpus_score(hyps, refs).score
    assert str(a.get_signature()) == str(b.get_signature())
    for h in hyps:
        assert b.tokenizer(h) == " ".join(a.tokenizer(h.rstrip()).split())
    for h, r in zip(hyps, refs[0]):  # sentence_score: the single-pair kernel after spm
        x, y = a.sentence_score(h, [r, "the dog"]), b.sentence_score(h, [r, "the dog"])
        assert (x.score, x.counts, x.totals, x.precisions, x.bp) == \
            (y.score, y.counts, y.totals, y.precisions, y.bp)


def test_missing_model_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SACREBLEU", str(tmp_path / "none"))
    monkeypatch.setenv("MTSCORE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("MTSCORE_SPM_MODEL", raising=False)
    import urllib.request

    def offline(*a, **k):
        raise OSError("network unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    import mtscore

    with pytest.raises(RuntimeError, match="MTSCORE_SPM_MODEL"):
        mtscore.BLEU(tokenize="flores200")
