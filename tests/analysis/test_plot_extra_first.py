"""A figure output without matplotlib is refused before any work (P14: `human significance`,
`human rater-heatmap` and `meta subsets` used to compute for seconds, then stop with "plotting
needs matplotlib"). The input named here does not even exist: the extra is checked first."""
import subprocess
import sys

import pytest

SCRIPT = ("import sys; sys.modules['matplotlib'] = None\n"
          "from mtscore.bindings.cli.analysis import main\n"
          "sys.exit(main(sys.argv[1:]))\n")


@pytest.mark.parametrize(("argv", "option"), [
    (["human", "significance", "--ratings", "missing.csv", "--sizes", "100", "--plot", "a.png"], "--plot"),
    (["human", "rater-heatmap", "--ratings", "missing.csv", "--png", "b.png"], "--png"),
    (["meta", "subsets", "--scores", "missing.csv", "--k", "3", "--plot", "e.png"], "--plot"),
])
def test_figure_output_without_matplotlib_fails_first(tmp_path, argv, option):
    r = subprocess.run([sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"mtscore: error: {option}: plotting needs matplotlib: pip install ")
    assert r.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_png_output_onto_the_ratings_file_is_refused(tmp_path):
    ratings = tmp_path / "r.csv"
    ratings.write_text("x\n")
    r = subprocess.run([sys.executable, "-m", "mtscore", "human", "rater-heatmap", "--ratings",
                        str(ratings), "--png", str(ratings)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "--png" in r.stderr
    assert "is also an input" in r.stderr
    assert ratings.read_text() == "x\n"
