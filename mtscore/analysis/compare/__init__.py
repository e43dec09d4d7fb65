"""The analyses of a system-comparison report (issue P19), after compare-mt (Neubig et al. 2019,
"compare-mt: A Tool for Holistic Comparison of Language Generation Systems", NAACL demo):

* :mod:`.word_accuracy` - word precision / recall / F-measure by reference-frequency bucket;
* :mod:`.ngrams` - n-grams a system over- or under-produces, against the reference and against
  another system (compare-mt's smoothed salience score);
* :mod:`.buckets` - any registered corpus metric per reference- or source-length bucket, with
  sacrebleu's single-system bootstrap CI per bucket;
* :mod:`.differences` - the segments where two systems differ most by a sentence metric, with
  the token-level diff of their outputs;
* :mod:`.tokens` - the metric tokenizers applied to lines and the input checks, :mod:`.edges` -
  compare-mt's bucket edges and labels (shared by the above).

Inputs are token lists (``list[list[str]]``, one list per segment) tokenised with the metric's
tokenizer (:func:`.tokens.tokenize`), or raw lines where a metric scores them. Every function
checks its input and raises :class:`mtscore.analysis.errors.AnalysisInputError` (a
``ValueError``) naming the argument that is wrong.
"""
