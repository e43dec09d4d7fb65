"""Score and Signature: what a metric returns and how it prints its options, sacrebleu's
classes with sacrebleu's formatting (``Score.format``, the ``nrefs:1|case:mixed|...`` signature).

Importable from :mod:`mtscore.engine.metrics.base` as well, where they were first defined."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..._version import __version__

#: sacrebleu version whose numbers mtscore reproduces; printed in signatures.
SACREBLEU_VERSION = "2.6.0"

#: printed in the signatures of metrics sacrebleu does not have (their numbers are mtscore's)
MTSCORE_VERSION = f"mtscore-{__version__}"


class Score:
    """A metric score (sacrebleu-compatible ``Score``).

    Attributes: ``name`` (str), ``score`` (float, 0-100), and after bootstrap resampling
    ``_mean`` (float) and ``_ci`` (float, the 95% CI half-width).
    """

    def __init__(self, name: str, score: float):
        self.name = name
        self.score = score
        self._mean = -1.0
        self._ci = -1.0
        self._verbose = ""

    def format(self, width: int = 2, score_only: bool = False, signature: str = "",
               is_json: bool = False) -> str:
        """Text or JSON representation, identical to sacrebleu's ``Score.format``."""
        d: dict[str, Any] = {
            "name": self.name,
            "score": float(f"{self.score:.{width}f}"),
            "signature": signature,
        }
        sc = f"{self.score:.{width}f}"
        if self._mean > 0:
            confidence_mean = f"{self._mean:.{width}f}"
            confidence_var = f"{self._ci:.{width}f}"
            confidence_str = f"μ = {confidence_mean} ± {confidence_var}"
            sc += f" ({confidence_str})"
            if is_json:
                d["confidence_mean"] = float(confidence_mean)
                d["confidence_var"] = float(confidence_var)
                d["confidence"] = confidence_str
        full_score = f"{self.name}|{signature}" if signature else self.name
        full_score = f"{full_score} = {sc}"
        if self._verbose:
            full_score += f" {self._verbose}"
            d["verbose_score"] = self._verbose
        if score_only:
            return sc
        if is_json:
            for param in signature.split("|"):
                key, value = param.split(":")
                d[key] = value
            return json.dumps(d, indent=1, ensure_ascii=False)
        return full_score

    def estimate_ci(self, scores: Sequence[Score]) -> None:
        """Store the mean and 95% CI half-width of bootstrap ``scores`` (sacrebleu rule:
        sorted scores at ``n // 40`` and ``n - n // 40 - 1``; exact rational mean)."""
        import statistics

        # float(): a resample's score may be a numpy float32 (TER of empty hypotheses), which
        # statistics.mean cannot mix with floats (sacrebleu 2.6.0 stops there with a TypeError);
        # the conversion is exact, so the mean is the one sacrebleu means to compute
        raw = sorted(float(x.score) for x in scores)
        n = len(raw)
        lower_idx = n // 40
        upper_idx = n - lower_idx - 1
        self._ci = 0.5 * (raw[upper_idx] - raw[lower_idx])
        self._mean = statistics.mean(raw)

    def __repr__(self) -> str:
        return self.format()


class Signature:
    """Reproducibility signature (sacrebleu-compatible key order and abbreviations); ``version``
    names the sacrebleu release whose numbers the metric reproduces."""

    #: what ``version:`` prints
    VERSION = SACREBLEU_VERSION

    def __init__(self, args: dict):
        self._abbr = {
            "version": "v", "nrefs": "#", "test": "t", "lang": "l", "subset": "S",
            "origlang": "o", "bs": "bs", "ar": "ar", "seed": "rs",
        }
        if "num_refs" not in args:
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        num_refs = args["num_refs"]
        if num_refs == -1:
            num_refs = "var"
        self.info: dict[str, Any] = {
            "version": self.VERSION,
            "nrefs": num_refs,
            "bs": args.get("n_bootstrap"),
            "ar": None,
            "seed": args.get("seed"),
            "test": args.get("test_set"),
            "lang": args.get("langpair"),
            "origlang": args.get("origlang"),
            "subset": args.get("subset"),
        }

    def format(self, short: bool = False) -> str:
        pairs = []
        keys = [k for k in self.info if k != "version"] + ["version"]
        for name in keys:
            value = self.info[name]
            if value is not None:
                if isinstance(value, bool):
                    value = "yes" if value else "no"
                pairs.append(f"{self._abbr[name] if short else name}:{value}")
        return "|".join(pairs)

    def update(self, key: str, value: Any) -> None:
        self.info[key] = value

    def __str__(self) -> str:
        return self.format()

    __repr__ = __str__


class OwnSignature(Signature):
    """Signature of a metric sacrebleu does not have: ``version:mtscore-X.Y.Z``."""

    VERSION = MTSCORE_VERSION
