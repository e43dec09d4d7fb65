"""The ``mtscore`` command line: every command-line module of the package.

:mod:`.main` is the entry point (``mtscore``, ``python -m mtscore``): it dispatches on the
subcommand and reports user errors. One module per job: :mod:`.options`, :mod:`.inputs` and
:mod:`.report` (the plain ``mtscore REF -i HYP`` command's flags, input files and output),
:mod:`.table` (``score-table``), :mod:`.decoder` (``mbr``, ``nbest``), :mod:`.bertscore`
(``bertscore``), :mod:`.demo`, :mod:`.analysis` (the parser of ``meta ...`` and ``human ...``)
with :mod:`.meta`, :mod:`.human`, :mod:`.analysis_output`, :mod:`.metaeval`, :mod:`.procedures`,
:mod:`.crowd` and :mod:`.campaign`, :mod:`.significance_report`
and :mod:`.text_grid` (sacrebleu's significance tables), :mod:`.parser` (argparse plumbing:
one-line usage errors, option value types). Nothing outside this package imports argparse."""
