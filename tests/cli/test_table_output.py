"""The table the commands print: what a scholar copies into notes must not round a result away."""

import io

import pandas as pd

from workbench.cli.common import print_frame


def test_a_tiny_p_value_is_printed_in_scientific_notation_not_as_zero():
    frame = pd.DataFrame({"group": ["all", "top", "bottom"], "p_value": [2.95e-12, 9e-07, 0.0312],
                          "rho": [0.75, None, 0.25], "books": [571, 58, 58]})
    out = io.StringIO()
    print_frame(frame, "table", out)
    lines = out.getvalue().splitlines()
    assert lines[1].split() == ["all", "2.95e-12", "0.75", "571"]
    assert lines[2].split() == ["top", "9e-07", "58"]  # the missing rho is blank
    assert lines[3].split() == ["bottom", "0.0312", "0.25", "58"]


def test_output_piped_into_a_program_that_stops_reading_ends_quietly(tmp_path):
    """`palimpsest ... | head -1` printed a BrokenPipeError traceback."""
    import subprocess
    import sys

    from workbench.project import Project

    path = tmp_path / "study.palimpsest"
    Project.create(path).close()
    command = [sys.executable, "-c", f"import sys; from workbench.cli import main; sys.exit(main(['charts', {str(path)!r}]))"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        process.stdout.close()  # as `head` does once it has its lines (here before the first one: the child is starting)
        error = process.stderr.read().decode()
    assert process.returncode == 1
    assert "Traceback" not in error and "BrokenPipe" not in error


def test_a_long_text_is_cut_in_the_table_but_whole_in_csv():
    scene = "The rain had come in from the sea before dawn. " * 40
    frame = pd.DataFrame({"scene": [1], "text": [scene]})
    table, csv = io.StringIO(), io.StringIO()
    print_frame(frame, "table", table)
    print_frame(frame, "csv", csv)
    assert max(len(line) for line in table.getvalue().splitlines()) < 80
    assert scene.strip() in csv.getvalue()


def test_whole_numbers_made_float_by_a_gap_print_as_whole_numbers_in_the_table():
    """A year column with one missing value printed 1852.0; a column of true fractions keeps them."""
    frame = pd.DataFrame({"book": ["a", "b", "c"], "year": [1852.0, None, 1997.0], "share": [0.5, 1.0, 0.25]})
    out = io.StringIO()
    print_frame(frame, "table", out)
    rows = [line.split() for line in out.getvalue().splitlines()[1:]]
    assert rows == [["a", "1852", "0.50"], ["b", "1.00"], ["c", "1997", "0.25"]]
    assert frame["year"].dtype == float  # the caller's frame is left as it was
