"""The numbers Ma, Graham, Baldwin & Liu (2017), "Further Investigation into Reference Bias in
Monolingual Evaluation of Machine Translation" (EMNLP 2017) print, as printed (text), keyed by
(table, row, column). Table 2: the share (%) of pairs of judge pairs whose Cohen's kappa 95%
confidence intervals do not overlap, and (in brackets) how many pairs of judge pairs were
compared; the text's numbers on Figs. 1 and 3."""
from __future__ import annotations

__all__ = ["PAPER", "PRINTED", "SOURCES"]

PAPER = ("Ma, Graham, Baldwin & Liu (2017), Further Investigation into Reference Bias in Monolingual "
         "Evaluation of Machine Translation (EMNLP 2017)")

SOURCES = {
    "table2": "Ma et al. (2017), Table 2 (percentage)",
    "table2-pairs": "Ma et al. (2017), Table 2 (count in brackets)",
    "text": "Ma et al. (2017), text on Figs. 1 and 3",
}

_T2 = {("SOURCE", "SOURCE"): ("47", "45"), ("SOURCE", "SAME"): ("29", "400"), ("SOURCE", "DIFF"): ("27", "1500"),
       ("SAME", "SAME"): ("12", "780"), ("SAME", "DIFF"): ("13", "6000"), ("DIFF", "DIFF"): ("12", "11175")}

PRINTED: dict[tuple[str, str, str], str] = {
    **{("table2", a, b): pct for (a, b), (pct, _) in _T2.items()},
    **{("table2-pairs", a, b): n for (a, b), (_, n) in _T2.items()},
    ("text", "mean kappa SAME - DIFF", "value"): "0.034",
    ("text", "range of the reference groups' (G2-G5) average ratings", "value"): "0.76",
    ("text", "widest range of judges' average ratings within one group (G5)", "value"): "0.97",
}
