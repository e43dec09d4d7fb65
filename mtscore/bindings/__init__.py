"""The faces of mtscore to the outside: everything a user calls, on top of :mod:`mtscore.analysis`
and :mod:`mtscore.engine`. Its parts:

* :mod:`.cli` - the ``mtscore`` command line (every subcommand, their options, reports, the one
  error runner); the only place that imports argparse. Nothing else in the package imports it.
* :mod:`.api` - the Python API: :mod:`.api.batch` (the batch API: ``score``, ``score_files``,
  ``score_table``, ``score_stream``) and :mod:`.api.bertscore` (the ``bert_score``-compatible API).
* :mod:`.decoder` - the decoder API (sentence scores, pairwise matrices, MBR, n-best oracle and
  reranking, Moses n-best files), :mod:`.decoder.token_scores` (scores of token-id batches) and
  :mod:`.decoder.rewards` (RL reward functions).
* :mod:`.ray` - scoring on a Ray cluster (``score_ray``, ``score-table --ray``).
* :mod:`.metric_options` - ``metric_kwargs={metric name: options}``, the one way the batch API
  and ``score_ray`` take metric options by name (and their older ``<name>_kwargs`` aliases).

A web front end and the report will be parts of this layer too. Users import the public paths
(``mtscore.score``, ``mtscore.bertscore``, ``mtscore.decoder``, ...), which re-export these
modules; import-linter keeps :mod:`.cli` above the other parts (pyproject.toml).
"""
