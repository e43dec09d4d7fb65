"""WMT human-evaluation and metric-score files, and the released data sets built on them.

* :mod:`.tables` - text tables into pyarrow tables (errors name file and line).
* :mod:`.wmt_files` - the WMT layouts: DA scores, rankings, ratings, metric scores, combined
  system-level tables, significance matrices, correlation outputs.
* :mod:`.judge_ratings` - individual judges' ratings and judge groups (agreement input).
* :mod:`.released` - the WMT releases in ``shared/data`` as the arrays the statistics take.

Every public name of these modules (those of the former ``loaders`` and ``datasets`` modules)
is importable from here.
"""
from .judge_ratings import (
    ITEM_COLUMNS,
    JUDGE_COLUMNS,
    RATING_COLUMNS,
    read_judge_groups,
    read_judge_ratings,
)
from .released import (
    WMT20_LPS,
    SysLevel,
    load_sys_level,
    tangled_sys_level,
    wmt20_outliers,
    wmt20_seg_da,
    wmt20_seg_metric,
    wmt20_seg_metric_matrix,
    wmt20_sys_level,
)
from .tables import (
    NULL_VALUES,
    PathLike,
    float_column,
    open_text,
    read_table,
    read_table_lines,
    read_text,
    table_to_numpy,
)
from .wmt_files import (
    RATING_KEY,
    SEG_METRIC_LEVELS,
    check_repeated_ratings,
    metric_score_column,
    read_combined_sys_scores,
    read_combined_sys_scores_lines,
    read_cor,
    read_da_scores,
    read_da_scores_lines,
    read_darr_cor,
    read_matrix,
    read_metric_scores,
    read_outlier_dict,
    read_ratings,
    read_ratings_lines,
    read_sys_ranking,
    wmt20_paths,
)

__all__ = [
    "ITEM_COLUMNS",
    "JUDGE_COLUMNS",
    "NULL_VALUES",
    "RATING_COLUMNS",
    "RATING_KEY",
    "SEG_METRIC_LEVELS",
    "WMT20_LPS",
    "PathLike",
    "SysLevel",
    "check_repeated_ratings",
    "float_column",
    "load_sys_level",
    "metric_score_column",
    "open_text",
    "read_combined_sys_scores",
    "read_combined_sys_scores_lines",
    "read_cor",
    "read_da_scores",
    "read_da_scores_lines",
    "read_darr_cor",
    "read_judge_groups",
    "read_judge_ratings",
    "read_matrix",
    "read_metric_scores",
    "read_outlier_dict",
    "read_ratings",
    "read_ratings_lines",
    "read_sys_ranking",
    "read_table",
    "read_table_lines",
    "read_text",
    "table_to_numpy",
    "tangled_sys_level",
    "wmt20_outliers",
    "wmt20_paths",
    "wmt20_seg_da",
    "wmt20_seg_metric",
    "wmt20_seg_metric_matrix",
    "wmt20_sys_level",
]
