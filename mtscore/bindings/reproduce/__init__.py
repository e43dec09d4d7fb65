"""Reproductions of the source papers' tables and figures from their released data.

:mod:`.tangled` rebuilds Mathur, Baldwin & Cohn (2020), "Tangled up in BLEU: Reevaluating the
Evaluation of Automatic Machine Translation Evaluation Metrics" (ACL 2020) from the WMT19
system-level scores the authors released (``nitikam/tangled``, ``data/wmt19_sys_scores/``);
:mod:`.tangled_printed` holds the numbers the paper prints, :mod:`.output` writes the
CSV / Markdown / figure / ``index.html`` files of any paper's :class:`~.model.Reproduction`.
:mod:`.refbias` rebuilds Ma et al. (2017), "Further Investigation into Reference Bias" from the
released Fomicheva & Specia ratings; :mod:`.docqe` Graham et al. (2017, EACL) document-level DA.
"""
from .docqe import reproduce_docqe, write_docqe
from .model import Cell, Extra, Figure, Reproduction, Table
from .output import write_reproduction
from .refbias import reproduce_refbias, write_refbias
from .tangled import TangledReproduction, reproduce_tangled, required_files, write_tangled

__all__ = [
           "Cell",
           "Extra",
           "Figure",
           "Reproduction",
           "Table",
           "TangledReproduction",
           "reproduce_docqe",
           "reproduce_refbias",
           "reproduce_tangled",
           "required_files",
           "write_docqe",
           "write_refbias",
           "write_reproduction",
           "write_tangled",
]
