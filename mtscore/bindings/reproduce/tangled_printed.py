"""The numbers that Mathur, Baldwin & Cohn (2020), "Tangled up in BLEU: Reevaluating the
Evaluation of Automatic Machine Translation Evaluation Metrics" (ACL 2020, pp. 4984-4997), print,
each keyed by (table, row, column) as laid out in :mod:`.tangled`.

Tables 1 and 2: Pearson r of each metric with the WMT19 system-level DA z-scores over all
systems ("All") and after removing the MAD outliers ("-out"), to-English (Table 1) and the other
directions (Table 2) that have outliers; "BLEU" there is sacreBLEU's BLEU (the release's
``sacreBLEU-BLEU`` column). Row ``#sys``: the number of systems (``All``) and left after removing
outliers (``-out``). The appendix tables give every WMT19 metric; their "BLEU" is the WMT
baseline BLEU (the release's ``BLEU`` column). The to-English appendix is the paper's Table 4;
the into-English-other and non-English appendix values below are the ones Mathur (2021, PhD
thesis, University of Melbourne) prints in Tables 6.3 and 6.5 for the same data.

Only the cells transcribed here are compared; every other reproduced cell is shown with
"printed value not transcribed". Values are the printed text (their decimals are the printed
precision).
"""
from __future__ import annotations

__all__ = ["PAPER", "PRINTED", "SOURCES"]

PAPER = ("Mathur, Baldwin & Cohn (2020), Tangled up in BLEU: Reevaluating the Evaluation of Automatic "
         "Machine Translation Evaluation Metrics, ACL 2020")

#: where each table's printed values come from
SOURCES = {
    "table1": "Mathur et al. (2020), Table 1 (to-English; BLEU = sacreBLEU-BLEU)",
    "table2": "Mathur et al. (2020), Table 2 (other directions with outliers; BLEU = sacreBLEU-BLEU)",
    "appendix-to-en": "Mathur et al. (2020), appendix Table 4 (to-English, all metrics; BLEU = WMT BLEU)",
    "appendix-en-xx": "Mathur (2021), thesis Table 6.3 (out of English, all metrics; BLEU = WMT BLEU)",
    "appendix-non-en": "Mathur (2021), thesis Table 6.5 (de-cs, de-fr, fr-de; BLEU = WMT BLEU)",
}


def _pairs(table: str, lp: str, values: dict[str, tuple[str, str]]) -> dict[tuple[str, str, str], str]:
    out = {}
    for row, (r_all, r_out) in values.items():
        out[(table, row, f"{lp} All")] = r_all
        out[(table, row, f"{lp} -out")] = r_out
    return out


def _sys(table: str, counts: dict[str, tuple[int, int]]) -> dict[tuple[str, str, str], str]:
    out = {}
    for lp, (n_all, n_out) in counts.items():
        out[(table, "#sys", f"{lp} All")] = str(n_all)
        out[(table, "#sys", f"{lp} -out")] = str(n_out)
    return out


#: (table, row, column) -> the printed text
PRINTED: dict[tuple[str, str, str], str] = {
    # Table 1, to-English
    **_sys("table1", {"de-en": (16, 15), "gu-en": (11, 10), "kk-en": (11, 9), "lt-en": (11, 10),
                      "ru-en": (14, 13), "zh-en": (15, 13)}),
    **_pairs("table1", "de-en", {"BLEU": ("0.813", "0.794"), "TER": ("0.874", "0.812"),
                                 "chrF": ("0.917", "0.862"), "ESIM": ("0.941", "0.896"),
                                 "YiSi-1": ("0.949", "0.914")}),
    **_pairs("table1", "gu-en", {"BLEU": ("0.834", "0.975"), "TER": ("0.890", "0.947"),
                                 "chrF": ("0.955", "0.962"), "ESIM": ("0.885", "0.986"),
                                 "YiSi-1": ("0.924", "0.997")}),
    **_pairs("table1", "zh-en", {"BLEU": ("0.903", "0.807"), "TER": ("0.840", "0.717"),
                                 "chrF": ("0.956", "0.841"), "ESIM": ("0.988", "0.961"),
                                 "YiSi-1": ("0.979", "0.899")}),
    # Table 2, the other directions with outliers
    **_sys("table2", {"de-cs": (11, 10), "en-de": (22, 20), "en-fi": (12, 11), "en-kk": (11, 9),
                      "en-ru": (12, 11), "fr-de": (10, 7)}),
    **_pairs("table2", "en-de", {"BLEU": ("0.969", "0.806"), "TER": ("0.969", "0.841"),
                                 "chrF": ("0.979", "0.881"), "ESIM": ("0.991", "0.928"),
                                 "YiSi-1": ("0.991", "0.917")}),
    **_pairs("table2", "en-kk", {"BLEU": ("0.852", "0.576"), "TER": ("0.940", "0.547"),
                                 "chrF": ("0.972", "0.900"), "ESIM": ("0.980", "0.900"),
                                 "YiSi-1": ("0.985", "0.892")}),
    **_pairs("table2", "fr-de", {"BLEU": ("0.869", "0.846"), "TER": ("0.895", "0.673"),
                                 "chrF": ("0.864", "0.796"), "ESIM": ("0.942", "0.825"),
                                 "YiSi-1": ("0.908", "0.846")}),
    # appendix: the WMT baseline BLEU
    **_pairs("appendix-to-en", "de-en", {"BLEU": ("0.849", "0.770")}),
    **_pairs("appendix-to-en", "gu-en", {"BLEU": ("0.834", "0.975")}),
    **_pairs("appendix-to-en", "zh-en", {"BLEU": ("0.899", "0.807")}),
    **_pairs("appendix-en-xx", "en-de", {"BLEU": ("0.921", "0.419")}),
    **_pairs("appendix-en-xx", "en-kk", {"BLEU": ("0.852", "0.576")}),
    **_pairs("appendix-non-en", "fr-de", {"BLEU": ("0.864", "0.821")}),
}
