"""The Python API, one module per API:

* :mod:`.batch` - the batch API (``mtscore.score``, ``score_files``, ``score_table``,
  ``score_stream``): one or many systems against one reference set, all metrics in one call;
* :mod:`.bertscore` - the ``bert_score``-compatible API (``mtscore.bertscore.score``).

Users import the public paths (``mtscore.score``, ``mtscore.bertscore``), which re-export these
modules; this package imports neither (``import mtscore`` stays fast).
"""
