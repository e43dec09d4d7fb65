"""The ``mtscore`` command's inputs as a stream of aligned chunks, so that any number of lines is
scored in bounded memory (only the per-segment statistics grow with the corpus).

Reference files come first on the command line, then the systems (``-i``; stdin when absent,
tab-separated columns being several systems). ``--num-refs K`` reads K tab-separated references
per line of one reference file. Lines are read like sacrebleu reads them (``rstrip()``'d; stdin
with universal newlines; the first stdin line's fields are not stripped, later ones are).
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import chain

from ...errors import UserError

#: segments per chunk of the streamed command line (the batch API's default)
CHUNK = 16384

#: (K reference streams of n, {system: n hypotheses}) for one chunk of n segments
Chunk = tuple[list[list[str]], dict[str, list[str]]]


class CLIError(UserError):
    """A user-facing error of the command line: printed as one line, exit status 1."""


class UsageError(CLIError):
    """Options that cannot work together (or an output onto an input): one line, exit status 2
    like argparse's usage errors, raised before any work."""


class Inputs:
    """What the command reads: display names of the systems (sacrebleu's, ``Baseline: `` for
    paired tests), a stream of chunks keyed by the plain system names (``systems``: the file
    names, or ``System i`` on stdin; what a per-segment table's system column holds), and the
    reference files' display names."""

    __slots__ = ("chunks", "names", "ref_names", "systems")

    def __init__(self, names: list[str], chunks: Iterator[Chunk], ref_names: list[str], systems: list[str]) -> None:
        self.names = names
        self.chunks = chunks
        self.ref_names = ref_names
        self.systems = systems


def open_inputs(args, chunk_size: int = CHUNK) -> Inputs:
    """Check the file arguments and start streaming (the first chunk is read here, so that
    empty inputs, line-count mismatches in it and stdin's number of systems are known)."""
    _check_args(args)
    paired = args.paired_bs or args.paired_ar
    stdin = args.input is None or args.input == ["-"]
    sys_paths = ["-"] if stdin else _system_paths(args.input, paired)
    chunks = _chunks(args, sys_paths, chunk_size, stdin)
    try:
        first = next(chunks)
    except StopIteration:  # pragma: no cover - iter_aligned_lines raises on empty input
        raise CLIError("no input lines") from None
    n_sys = len(first[1])
    if stdin:
        systems = [f"System {i + 1}" for i in range(n_sys)]
        names = list(systems) if not paired else ["Baseline", *systems[:-1]]
    else:
        systems = list(sys_paths)
        names = list(systems)
        if paired:
            names[0] = f"Baseline: {names[0]}"
    renamed = (_rename(c, systems) for c in chain([first], chunks))
    return Inputs(names, renamed, list(args.refs), systems)


def _rename(chunk: Chunk, names: list[str]) -> Chunk:
    refs, systems = chunk
    return refs, dict(zip(names, systems.values()))


def _check_args(args) -> None:
    if args.test_set:
        raise CLIError("--test-set is not supported (mtscore does not download data); "
                       "pass reference files as positional arguments")
    if not args.refs:
        raise CLIError("no reference files given: put them before -i/--input, "
                       "e.g. mtscore ref.txt -i hyp.txt")
    if args.num_refs != 1 and len(args.refs) > 1:
        raise CLIError("--num-refs reads tab-separated references from ONE file; "
                       "do not give several reference files with it")
    for path in args.refs:
        _check_file(path, "reference file")


def _check_file(path: str, what: str) -> None:
    if not os.path.exists(path):
        raise CLIError(f"{what} not found: {path}")
    if os.path.isdir(path):
        raise CLIError(f"{what} is a directory, not a file: {path}")


def _system_paths(inputs: list[str], paired: bool) -> list[str]:
    paths: list[str] = []
    for path in inputs:
        if path in paths:
            if paired and path == paths[0]:
                import logging  # only on this path: ``mtscore --help`` starts without it

                logging.getLogger("mtscore").info(f"Ignoring {path!r} as it was also given as the baseline.")
                continue
            raise CLIError(f"{path!r} given twice; each system needs a distinct file name")
        _check_file(path, "system file")
        paths.append(path)
    return paths


def _chunks(args, sys_paths: list[str], chunk_size: int, stdin: bool) -> Iterator[Chunk]:
    """Aligned chunks: systems first (line-count errors name the system file), then references."""
    from ...engine.textio import iter_aligned_lines

    n_sys = len(sys_paths)
    width: int | None = None  # stdin: systems per line, fixed by the first line
    paths = [*sys_paths, *args.refs]
    limit = getattr(args, "max_line_chars", 0)
    for start, blocks in iter_aligned_lines(paths, chunk_size, args.encoding,
                                            args.encoding_errors, precount=not stdin):
        if limit:
            _check_line_lengths(paths, blocks, start, limit)
        systems = blocks[:n_sys]
        if stdin:
            if width is None:
                width = len(blocks[0][0].split("\t"))
            systems = _stdin_columns(blocks[0], start, width)
        refs = blocks[n_sys:]
        if args.num_refs > 1:
            refs = _tab_references(refs[0], start, args.num_refs, args.refs[0])
        yield refs, {str(i): s for i, s in enumerate(systems)}


def _check_line_lengths(paths: list[str], blocks: list[list[str]], start: int, limit: int) -> None:
    """A line longer than ``--max-line-chars`` names its file and line (the metrics check their
    inputs too, but only know a chunk's lines)."""
    for path, lines in zip(paths, blocks):
        if max(map(len, lines), default=0) > limit:
            i = next(i for i, x in enumerate(lines) if len(x) > limit)
            name = "<stdin>" if path == "-" else path
            raise CLIError(f"{name}:{start + i + 1}: the line has {len(lines[i]):,} characters, more than "
                           f"--max-line-chars {limit:,} (its n-gram tables could need gigabytes; "
                           "--max-line-chars 0: no limit)")


def _stdin_columns(lines: list[str], start: int, width: int) -> list[list[str]]:
    """Tab-separated system outputs on stdin (sacrebleu: the first line's fields are kept as
    they are, the fields of later lines are ``rstrip()``'d)."""
    cols: list[list[str]] = [[] for _ in range(width)]
    for no, line in enumerate(lines, start + 1):
        fields = line.split("\t")
        if len(fields) != width:
            raise CLIError(f"<stdin>:{no}: {len(fields)} tab-separated fields, but the first "
                           f"line has {width} (one column per system)")
        for col, x in zip(cols, fields):
            col.append(x if no == 1 else x.rstrip())
    return cols


def _tab_references(lines: list[str], start: int, k: int, path: str) -> list[list[str]]:
    cols: list[list[str]] = [[] for _ in range(k)]
    for no, line in enumerate(lines, start + 1):
        fields = line.split("\t", k - 1)
        if len(fields) != k:
            raise CLIError(f"{path}:{no}: expected {k} tab-separated references, found "
                           f"{len(fields)} (--num-refs)")
        for col, x in zip(cols, fields):
            col.append(x)
    return cols
