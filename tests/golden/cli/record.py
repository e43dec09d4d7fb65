"""Record the golden command-line transcripts that tests/test_cli_golden.py replays.

Each case is one ``mtscore`` command line (argv, optional stdin, input files) run in a fresh
subprocess in an empty temporary folder; its exit code, stdout, stderr and the files it writes
(``capture``) are stored in ``tests/golden/cli/<name>.json``. The replay asserts that all of them
are byte-identical, so that a restructuring of the code (P16: registry, CLI package, analysis by
role, kernel splits) provably changes no behaviour.

Inputs are made in the temporary folder from the bundled demo files (``repo:``), from the shared
WMT data (``data:``, the first ``head`` lines; located through ``MTSCORE_DATA``, default
``../shared/data`` next to the repository), or written inline (``text`` / ``b64`` / ``rows`` for a
Parquet table). Only what must vary is normalised: the temporary folder becomes ``{TMP}``, the
data folder ``{DATA}`` and the repository root ``{REPO}``. Parquet outputs are compared as their
schema, schema metadata and rows read with pyarrow, not as bytes.

Re-record ONLY when a change of behaviour is intended (and say which in the commit message)::

    .venv/bin/python tests/golden/cli/record.py               # every case
    .venv/bin/python tests/golden/cli/record.py NAME [NAME..]  # only these cases
    .venv/bin/python tests/golden/cli/record.py --repo PATH    # record another checkout, e.g. a
                                                               # git worktree of an older commit

then review ``git diff tests/golden/cli/``: every changed byte must be one you meant to change.
A new case is added to ``CASES`` below and recorded by name. ``--check`` replays instead of
recording and prints the cases that differ (what the test does, without pytest).
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent
#: environment variables that change mtscore's output; removed from the child's environment
DROP_ENV = ("SACREBLEU", "MTSCORE_SIGNIFICANCE_SCALAR", "MTSCORE_SPM_MODEL", "NO_COLOR", "FORCE_COLOR",
            "RAY_ADDRESS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONWARNINGS", "PYTHONHOME", "COLUMNS", "LINES")
TIMEOUT_S = 120

# ------------------------------------------------------------------------------------- inputs
WMT21 = "wmt21-news-systems/txt"
DEMO = [{"dest": n, "repo": f"mtscore/data/demo/{n}"} for n in ("ref.en", "sys1.en", "sys2.en")]
DE_EN = [{"dest": "refA.en", "data": f"{WMT21}/references/newstest2021.de-en.ref.A.en", "head": 200},
         {"dest": "refB.en", "data": f"{WMT21}/references/newstest2021.de-en.ref.B.en", "head": 200}] + [
    {"dest": f"{s}.en", "data": f"{WMT21}/system-outputs/newstest2021.de-en.hyp.{s}.en", "head": 200}
    for s in ("Facebook-AI", "Online-A", "Borderline")]
EN_DE = [{"dest": "ref.de", "data": "wmt17-en-de-systems/reference.txt", "head": 200},
         {"dest": "uedin.de", "data": "wmt17-en-de-systems/newstest2017.uedin-nmt.4722.en-de.txt", "head": 200},
         {"dest": "online-A.de", "data": "wmt17-en-de-systems/newstest2017.online-A.0.en-de.txt", "head": 200}]
ENDE19 = [{"dest": "ende.csv", "data": "tangled/wmt19_sys_scores/DA-newstest2019-ende-sys-nohy-scores.csv"}]
CSEN = [{"dest": "csen.csv", "data": "wmt21-news-systems/humaneval/newstest2021-toen/ad-csen-good-stnd.csv",
         "head": 3001}]
BATCH = [{"dest": "Batch_2607652_batch_results.csv",
          "data": "docqe-eacl2017/batched-hits/runA/Batch_2607652_batch_results.csv"}]
REFBIAS = [{"dest": "ratings.csv", "data": "refbias/data/ratings.csv"}]


def _demo_lines(name: str) -> list[str]:
    return (REPO / "mtscore" / "data" / "demo" / name).read_text(encoding="utf-8").splitlines()


def _demo_rows() -> list[dict[str, str]]:
    """The demo as a long table: 2 systems x 16 segments, test sets 'a' (0-7) and 'b' (8-15)."""
    ref = _demo_lines("ref.en")
    return [{"test_set": "a" if i < 8 else "b", "system": s, "hyp": h, "ref": r}
            for s in ("sys1", "sys2") for i, (h, r) in enumerate(zip(_demo_lines(f"{s}.en"), ref))]


def _jsonl(rows: list[dict[str, str]], keys: list[str]) -> str:
    return "".join(json.dumps({k: r[k] for k in keys}, ensure_ascii=False) + "\n" for r in rows)


def _csv(rows: list[dict[str, str]], keys: list[str], sep: str = ",") -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, keys, delimiter=sep, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _tables() -> list[dict[str, Any]]:
    rows = _demo_rows()
    return [{"dest": "table.jsonl", "text": _jsonl(rows, ["system", "hyp", "ref"])},
            {"dest": "table.csv", "text": _csv(rows, ["test_set", "system", "hyp", "ref"])},
            {"dest": "table.parquet", "rows": [{k: r[k] for k in ("system", "hyp", "ref")} for r in rows]}]


def _tab_refs() -> list[dict[str, Any]]:
    """One file of two tab-separated references (ref.en and sys2.en as a second reference)."""
    text = "".join(f"{a}\t{b}\n" for a, b in zip(_demo_lines("ref.en"), _demo_lines("sys2.en")))
    return [{"dest": "refs.tsv", "text": text}]


def _bad_utf8() -> list[dict[str, Any]]:
    """sys1.en with one invalid UTF-8 byte in line 3."""
    lines = [s.encode("utf-8") for s in _demo_lines("sys1.en")]
    lines[2] = lines[2][:5] + b"\xff" + lines[2][5:]
    return [{"dest": "bad.en", "b64": base64.b64encode(b"\n".join(lines) + b"\n").decode("ascii")}]


SAMPLES = [{"dest": "samples.txt", "text": "the cat sat on the mat\na cat sat on a mat\nthe cat is on the mat\n\n"
            "hello world\nhello there world\nhi world\n"},
           {"dest": "samples.jsonl", "text": '["the cat sat on the mat", "a cat sat on a mat", "the cat is on the mat"]\n'
            '{"samples": ["hello world", "hello there world", "hi world"], "log_probs": [-1.0, -0.5, -2.0]}\n'},
           {"dest": "logp.txt", "text": "the cat sat on the mat\t-1.5\na cat sat on a mat\t-0.5\n\n"
            "hello world\t-2.0\nhello there world\t-0.25\n"}]
NBEST = [{"dest": "nb.txt", "text": "0 ||| the cat sat on the mat ||| F0= -1 ||| -1.5\n"
          "0 ||| a cat sat on a mat ||| F0= -2 ||| -2.5\n0 ||| the cat is on a mat . ||| F0= -2 ||| -2.0\n"
          "1 ||| hello there world ||| F0= -1 ||| -1.0\n1 ||| hello world ||| F0= -3 ||| -3.0\n"},
         {"dest": "nbref.txt", "text": "the cat sat on the mat .\nhello world\n"}]


def _campaign() -> list[dict[str, Any]]:
    """Two small systems and a reference for build-hits (60 segments: 2 HITs of 100 items)."""
    a = "".join(f"a says {i} " + "x " * (i % 9) + "\n" for i in range(60))
    b = "".join(f"b says {i} " + "y " * (i % 7) + "\n" for i in range(60))
    ref = "".join(f"the ref of line {i} r r\n" for i in range(60))
    return [{"dest": "A.txt", "text": a}, {"dest": "B.txt", "text": b}, {"dest": "ref.txt", "text": ref}]


BUILD = ["human", "build-hits", "--system", "A=A.txt", "--system", "B=B.txt", "--reference", "ref.txt",
         "--src", "en", "--trg", "de", "--seed", "4"]


# -------------------------------------------------------------------------------------- cases
def _case(name: str, argv: list[str], inputs: list[dict[str, Any]] | None = None, *, stdin: str | None = None,
          capture: list[str] | None = None, setup: list[list[str]] | None = None) -> dict[str, Any]:
    return {"name": name, "argv": argv, "inputs": inputs or [], "stdin": stdin, "capture": capture or [],
            "setup": setup or []}


def cases() -> list[dict[str, Any]]:
    """Every recorded case, in replay order (inline inputs are built from the demo files here)."""
    fb, oa, bl = "Facebook-AI.en", "Online-A.en", "Borderline.en"
    tables, stdin_sys1 = _tables(), "\n".join(_demo_lines("sys1.en")) + "\n"
    stdin_two = "".join(f"{a}\t{b}\n" for a, b in zip(_demo_lines("sys1.en"), _demo_lines("sys2.en")))
    return [
        # --- help and version of the main command and every subcommand
        _case("help_main", ["--help"]),
        _case("version", ["--version"]),
        _case("help_score_table", ["score-table", "--help"]),
        _case("help_meta", ["meta", "--help"]),
        _case("help_meta_seg", ["meta", "seg", "--help"]),
        _case("help_human", ["human", "--help"]),
        _case("help_human_da_batches", ["human", "da-batches", "--help"]),
        _case("help_mbr", ["mbr", "--help"]),
        _case("help_nbest", ["nbest", "--help"]),
        _case("help_bertscore_baseline", ["bertscore", "baseline", "--help"]),
        # --- mtscore REF -i HYP: every output format, metric and option group
        _case("demo", ["demo"]),
        _case("default_format", ["refA.en", "-i", fb], DE_EN),
        _case("text_bleu_chrf_ter", ["refA.en", "-i", fb, "-m", "bleu", "chrf", "ter", "-f", "text"], DE_EN),
        _case("json_all_lexical", ["refA.en", "-i", fb, "-m", "bleu", "chrf", "ter", "wer", "per", "cer", "eed",
                                   "meteor", "-f", "json"], DE_EN),
        _case("text_multiref_short", ["refA.en", "refB.en", "-i", fb, "-m", "bleu", "chrf", "ter", "-f", "text",
                                      "--short"], DE_EN),
        _case("num_refs_tab", ["refs.tsv", "-nr", "2", "-i", "sys1.en", "-m", "bleu", "ter", "-f", "text"],
              DEMO + _tab_refs()),
        _case("stdin_score_only", ["ref.en", "-m", "chrf", "-cw", "2", "-b"], DEMO, stdin=stdin_sys1),
        _case("stdin_tab_systems", ["ref.en", "-m", "bleu", "chrf", "-f", "text"], DEMO, stdin=stdin_two),
        _case("sentence_level_text", ["ref.en", "-i", "sys1.en", "-m", "bleu", "-sl", "-f", "text"], DEMO),
        _case("sentence_level_json", ["ref.en", "-i", "sys2.en", "-m", "chrf", "-sl", "-f", "json"], DEMO),
        _case("ci_text", ["refA.en", "-i", fb, "-m", "bleu", "chrf", "-ci", "-cin", "100", "--seed", "7",
                          "-f", "text"], DE_EN),
        _case("ci_json", ["refA.en", "-i", fb, "-m", "ter", "-ci", "-cin", "100", "--seed", "7", "-f", "json"],
              DE_EN),
        _case("pbs_text", ["refA.en", "-i", fb, oa, bl, "-m", "bleu", "chrf", "ter", "-pbs", "-pbsn", "100",
                           "--seed", "3", "-f", "text"], DE_EN),
        _case("par_json", ["refA.en", "-i", fb, oa, bl, "-m", "bleu", "chrf", "-par", "-parn", "100",
                           "--seed", "3", "-f", "json"], DE_EN),
        _case("pbs_latex", ["refA.en", "-i", fb, oa, "-m", "bleu", "chrf", "-pbs", "-pbsn", "100", "--seed", "3",
                            "-f", "latex"], DE_EN),
        _case("multi_text_width", ["refA.en", "refB.en", "-i", fb, oa, bl, "-m", "bleu", "chrf", "ter", "wer",
                                   "-f", "text", "-w", "2"], DE_EN),
        _case("multi_latex", ["refA.en", "-i", fb, oa, "-m", "bleu", "ter", "-f", "latex"], DE_EN),
        _case("tsv_stdout", ["ref.en", "-i", "sys1.en", "sys2.en", "-m", "bleu", "chrf", "ter", "-f", "tsv"], DEMO),
        _case("tsv_file", ["refA.en", "-i", fb, "-m", "chrf", "wer", "-f", "tsv", "-o", "seg.tsv"], DE_EN,
              capture=["seg.tsv"]),
        _case("parquet_pbs", ["refA.en", "-i", fb, oa, "-m", "bleu", "chrf", "ter", "-pbs", "-pbsn", "50",
                              "--seed", "5", "-f", "parquet", "-o", "seg.parquet"], DE_EN, capture=["seg.parquet"]),
        _case("bleu_options", ["refA.en", "-i", fb, "-m", "bleu", "-tok", "intl", "-lc", "-s", "floor", "-sv", "0.2",
                               "-w", "3", "-f", "text"], DE_EN),
        _case("chrf_options", ["refA.en", "-i", fb, "-m", "chrf", "-cc", "4", "-cw", "1", "--chrf-beta", "3",
                               "--chrf-whitespace", "--chrf-lowercase", "--chrf-eps-smoothing", "-f", "text"], DE_EN),
        _case("ter_options", ["refA.en", "-i", fb, "-m", "ter", "--ter-case-sensitive", "--ter-no-punct",
                              "--ter-normalized", "--ter-asian-support", "-f", "text"], DE_EN),
        _case("wer_options", ["refA.en", "refB.en", "-i", fb, "-m", "wer", "per", "cer", "--wer-lowercase",
                              "--wer-remove-punct", "--wer-multi-ref", "average", "-f", "text"], DE_EN),
        _case("langpair_en_de", ["ref.de", "-i", "uedin.de", "online-A.de", "-l", "en-de", "-m", "bleu", "eed",
                                 "-f", "text"], EN_DE),
        _case("encoding_replace", ["ref.en", "-i", "bad.en", "--encoding-errors", "replace", "-m", "chrf",
                                   "-f", "text"], DEMO + _bad_utf8()),
        # --- score-table
        _case("score_table_jsonl_text", ["score-table", "table.jsonl", "-m", "bleu", "chrf", "-f", "text"], tables),
        _case("score_table_csv_test_sets_json", ["score-table", "table.csv", "-m", "bleu", "ter", "-f", "json"],
              tables),
        _case("score_table_pbs", ["score-table", "table.jsonl", "-m", "chrf", "-pbs", "-pbsn", "50", "--seed", "5",
                                  "-f", "text"], tables),
        _case("score_table_parquet_in_tsv", ["score-table", "table.parquet", "-m", "bleu", "-f", "tsv"], tables),
        _case("score_table_parquet_out", ["score-table", "table.csv", "-m", "bleu", "chrf", "-f", "parquet",
                                          "-o", "seg.parquet"], tables, capture=["seg.parquet"]),
        # --- mbr / nbest
        _case("mbr_text", ["mbr", "samples.txt"], SAMPLES),
        _case("mbr_jsonl_bleu", ["mbr", "samples.jsonl", "-f", "jsonl", "-m", "bleu", "-O", "effective_order=true"],
              SAMPLES),
        _case("mbr_aggregate_logprobs", ["mbr", "logp.txt", "--log-probs", "--utility", "aggregate", "-m", "chrf++",
                                         "-f", "jsonl"], SAMPLES),
        _case("nbest_oracle", ["nbest", "nb.txt", "--refs", "nbref.txt"], NBEST),
        _case("nbest_rerank_jsonl", ["nbest", "nb.txt", "--refs", "nbref.txt", "--mode", "rerank", "-m", "chrf",
                                     "-f", "jsonl"], NBEST),
        # --- meta
        _case("meta_sys_text", ["meta", "sys", "--scores", "ende.csv", "--metrics", "chrF,sacreBLEU-BLEU",
                                "--bootstrap", "100", "--seed", "1"], ENDE19),
        _case("meta_sys_csv_file", ["meta", "sys", "--scores", "ende.csv", "--outliers", "mad", "--metrics",
                                    "chrF,BLEU,TER", "--bootstrap", "50", "--format", "csv", "-o", "r.csv"], ENDE19,
              capture=["r.csv"]),
        _case("meta_subsets_json", ["meta", "subsets", "--scores", "ende.csv", "--metrics", "chrF", "--k", "5",
                                    "--draws", "200", "--seed", "2", "--format", "json"], ENDE19),
        _case("meta_wmt20", ["meta", "wmt20", "--data", "{DATA}/wmt20-metrics", "--lp", "en-de", "--bootstrap", "50",
                             "--seg-metrics", "chrF", "--metrics", "BLEU,chrF"]),
        # --- human
        _case("human_ratings_json", ["human", "ratings", "--ratings", "csen.csv", "--format", "json"], CSEN),
        _case("human_rater_model", ["human", "rater-model", "--ratings", "csen.csv"], CSEN),
        _case("human_worker_test_csv", ["human", "worker-test", "--ratings", "csen.csv", "--format", "csv"], CSEN),
        _case("human_significance", ["human", "significance", "--ratings", "csen.csv", "--sizes", "50,200"], CSEN),
        _case("human_agreement", ["human", "agreement", "ratings.csv", "--bootstrap", "50", "--seed", "1"], REFBIAS),
        _case("human_da_batches", ["human", "da-batches", "Batch_2607652_batch_results.csv"], BATCH),
        _case("human_check_hits", ["human", "check-hits", "Batch_2607652_batch_results.csv"], BATCH),
        _case("human_build_hits", [*BUILD, "-o", "hits.csv", "--items", "items.tsv"], _campaign(),
              capture=["hits.csv", "items.tsv"]),
        _case("human_simulate_batches", ["human", "simulate-batches", "--hits", "hits.csv", "--quality", "A=80,B=50",
                                         "--good", "4", "--random", "1", "--assignments", "3", "-o", "res.csv",
                                         "--truth", "truth.tsv"], _campaign(), setup=[[*BUILD, "-o", "hits.csv"]],
              capture=["res.csv", "truth.tsv"]),
        # --- errors: one line, the right exit code
        _case("err_missing_ref", ["nope.en", "-i", "sys1.en"], DEMO),
        _case("err_missing_hyp", ["ref.en", "-i", "nope.en"], DEMO),
        _case("err_line_count_mismatch", ["ref.en", "-i", fb], DEMO + DE_EN),
        _case("err_unknown_metric", ["ref.en", "-i", "sys1.en", "-m", "foo"], DEMO),
        _case("err_bad_width", ["ref.en", "-i", "sys1.en", "-w", "abc"], DEMO),
        _case("err_output_onto_input", ["ref.en", "-i", "sys1.en", "-f", "tsv", "-o", "sys1.en"], DEMO),
        _case("err_tsv_with_ci", ["ref.en", "-i", "sys1.en", "-f", "tsv", "-ci"], DEMO),
        _case("err_parquet_without_output", ["ref.en", "-i", "sys1.en", "-f", "parquet"], DEMO),
        _case("err_sentence_level_two_metrics", ["ref.en", "-i", "sys1.en", "-sl", "-m", "bleu", "chrf"], DEMO),
        _case("err_pbs_one_system", ["ref.en", "-i", "sys1.en", "-pbs"], DEMO),
        _case("err_pbs_and_par", ["ref.en", "-i", "sys1.en", "sys2.en", "-pbs", "-par"], DEMO),
        _case("err_invalid_utf8", ["ref.en", "-i", "bad.en"], DEMO + _bad_utf8()),
        _case("err_max_line_chars", ["ref.en", "-i", "sys1.en", "--max-line-chars", "40"], DEMO),
        _case("err_score_table_no_hyp_column", ["score-table", "table.csv", "--hyp", "nohyp"], tables),
        _case("err_mbr_bad_metric_option", ["mbr", "samples.txt", "-O", "nosuch=1"], SAMPLES),
        _case("err_nbest_without_refs", ["nbest", "nb.txt"], NBEST),
        _case("err_meta_unknown_metric", ["meta", "sys", "--scores", "ende.csv", "--metrics", "NOPE"], ENDE19),
        _case("err_human_missing_file", ["human", "ratings", "--ratings", "nope.csv"]),
        _case("err_meta_without_subcommand", ["meta"]),
    ]


# ------------------------------------------------------------------------------------- replay
def data_dir() -> Path:
    """The shared WMT data, as tests/conftest.py finds it."""
    return Path(os.environ.get("MTSCORE_DATA", REPO.parent / "shared" / "data")).resolve()


def needs_data(case: dict[str, Any]) -> list[str]:
    """The data files (relative to the data folder) or folders a case needs."""
    need = [i["data"] for i in case["inputs"] if "data" in i]
    need += [a.split("{DATA}/", 1)[1] for a in case["argv"] if "{DATA}/" in a]
    return need


def prepare(case: dict[str, Any], tmp: Path, repo: Path, data: Path) -> None:
    """Write the case's input files into ``tmp``."""
    for spec in case["inputs"]:
        dest = tmp / spec["dest"]
        if "repo" in spec:
            shutil.copyfile(repo / spec["repo"], dest)
        elif "data" in spec:
            with open(data / spec["data"], "rb") as f:
                lines = f.readlines()
            dest.write_bytes(b"".join(lines[: spec["head"]] if "head" in spec else lines))
        elif "text" in spec:
            dest.write_bytes(spec["text"].encode("utf-8"))
        elif "b64" in spec:
            dest.write_bytes(base64.b64decode(spec["b64"]))
        elif "rows" in spec:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(spec["rows"]), dest)
        else:
            raise ValueError(f"case {case['name']}: input {spec} has no source")


def child_env(repo: Path) -> dict[str, str]:
    """The environment of a replayed command: no terminal settings, CI=true, fixed width, and
    ``repo`` first on the import path (so a worktree of another commit is the one imported)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROP_ENV)}
    env.update(CI="true", COLUMNS="80", LINES="24", TERM="dumb", PYTHONPATH=str(repo), PYTHONHASHSEED="0",
               PYTHONIOENCODING="utf-8", MPLBACKEND="Agg")
    return env


def normalise(raw: bytes, subst: dict[str, str]) -> bytes:
    """``raw`` with every path in ``subst`` (longest first) replaced by its placeholder."""
    for path in sorted(subst, key=len, reverse=True):
        raw = raw.replace(os.fsencode(path), subst[path].encode("ascii"))
    return raw


def _parquet_dump(path: Path) -> str:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    meta = {k.decode("utf-8"): v.decode("utf-8") for k, v in (table.schema.metadata or {}).items()}
    return json.dumps({"schema": [f"{f.name}: {f.type}" for f in table.schema], "metadata": meta,
                       "rows": table.to_pylist()}, ensure_ascii=False, indent=1, sort_keys=True)


def run_case(case: dict[str, Any], tmp: Path, repo: Path = REPO, python: str = sys.executable) -> dict[str, Any]:
    """Run ``case`` in the empty folder ``tmp``; return its rc, stdout, stderr and captured files,
    normalised, as text (bytes decoded with surrogateescape, so nothing is lost)."""
    data = data_dir()
    prepare(case, tmp, repo, data)
    subst = {str(tmp): "{TMP}", os.path.realpath(tmp): "{TMP}", str(data): "{DATA}", str(repo): "{REPO}",
             os.path.realpath(repo): "{REPO}"}
    env = child_env(repo)

    def argv(args: list[str]) -> list[str]:
        return [python, "-m", "mtscore", *(a.replace("{DATA}", str(data)) for a in args)]

    for pre in case["setup"]:
        done = subprocess.run(argv(pre), cwd=tmp, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"case {case['name']}: setup {pre} failed: {done.stderr.decode(errors='replace')}")
    stdin = case["stdin"].encode("utf-8") if case["stdin"] is not None else b""
    done = subprocess.run(argv(case["argv"]), cwd=tmp, env=env, input=stdin, capture_output=True,
                          timeout=TIMEOUT_S, check=False)
    files: dict[str, str | None] = {}
    for name in case["capture"]:
        path = tmp / name
        if not path.exists():
            files[name] = None
        elif name.endswith(".parquet"):
            files[name] = _parquet_dump(path)
        else:
            files[name] = normalise(path.read_bytes(), subst).decode("utf-8", "surrogateescape")
    return {"rc": done.returncode, "stdout": normalise(done.stdout, subst).decode("utf-8", "surrogateescape"),
            "stderr": normalise(done.stderr, subst).decode("utf-8", "surrogateescape"), "files": files}


def golden_path(name: str) -> Path:
    return HERE / f"{name}.json"


def load_recorded() -> list[dict[str, Any]]:
    """Every recorded case (``tests/golden/cli/*.json``), in replay order."""
    order = {c["name"]: i for i, c in enumerate(cases())}
    recs = [json.loads(p.read_text(encoding="utf-8")) for p in HERE.glob("*.json")]
    return sorted(recs, key=lambda r: (order.get(r["name"], len(order)), r["name"]))


def dump(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="cases to record (default: all)")
    ap.add_argument("--repo", type=Path, default=REPO, help="checkout whose mtscore is run (default: this one)")
    ap.add_argument("--check", action="store_true", help="replay and report differences; write nothing")
    args = ap.parse_args(argv)
    todo = cases()
    unknown = set(args.names) - {c["name"] for c in todo}
    if unknown:
        ap.error(f"unknown case(s): {', '.join(sorted(unknown))}")
    if args.names:
        todo = [c for c in todo if c["name"] in args.names]
    repo, bad = args.repo.resolve(), 0
    for case in todo:
        missing = [p for p in needs_data(case) if not (data_dir() / p).exists()]
        if missing:
            print(f"{case['name']}: SKIPPED, missing data {missing[0]} (set MTSCORE_DATA)")
            continue
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="mtscore-golden-") as tmp:
            got = run_case(case, Path(tmp), repo)
        record = {**case, **got}
        status = f"rc={got['rc']} {time.perf_counter() - t0:.2f}s"
        if args.check:
            path = golden_path(case["name"])
            same = path.exists() and json.loads(path.read_text(encoding="utf-8")) == json.loads(dump(record))
            bad += not same
            print(f"{case['name']}: {'same' if same else 'DIFFERS'} ({status})")
        else:
            golden_path(case["name"]).write_text(dump(record), encoding="utf-8")
            print(f"{case['name']}: recorded ({status})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
