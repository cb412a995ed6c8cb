"""The command line: new / info / save-as / gui --screenshot, and user errors without tracebacks."""

import subprocess
import sys

from workbench.cli import main


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "workbench", *map(str, args)], capture_output=True, text=True)


def test_new_then_info(tmp_path, capsys):
    path = tmp_path / "study.palimpsest"
    assert main(["new", str(path)]) == 0
    assert path.exists()
    assert main(["info", str(path)]) == 0
    assert "0 books" in capsys.readouterr().out


def test_user_errors_are_one_sentence_and_nonzero(tmp_path):
    result = run_cli("info", tmp_path / "missing.palimpsest")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("palimpsest: There is no project file")
    assert len(result.stderr.strip().splitlines()) == 1


def test_save_as_makes_a_copy(tmp_path):
    source = tmp_path / "a.palimpsest"
    main(["new", str(source)])
    assert main(["save-as", str(source), str(tmp_path / "b.palimpsest")]) == 0
    assert main(["info", str(tmp_path / "b.palimpsest")]) == 0


def test_gui_screenshot_writes_a_png(tmp_path):
    path = tmp_path / "study.palimpsest"
    main(["new", str(path)])
    shot = tmp_path / "shot.png"
    result = run_cli("gui", path, "--page", "library", "--screenshot", shot, "--size", "900x600")
    assert result.returncode == 0, result.stderr
    from PySide6.QtGui import QImage

    image = QImage(str(shot))
    assert (image.width(), image.height()) == (900, 600)


def test_gui_unknown_page_is_a_user_error(tmp_path):
    path = tmp_path / "study.palimpsest"
    main(["new", str(path)])
    result = run_cli("gui", path, "--page", "nowhere", "--screenshot", tmp_path / "x.png")
    assert result.returncode == 1
    assert "no page called 'nowhere'" in result.stderr
    assert "Traceback" not in result.stderr


def test_tables_are_listed_and_saved_as_csv(tmp_path, capsys):
    path = tmp_path / "study.palimpsest"
    main(["new", str(path)])
    assert main(["tables", str(path), "--format", "csv"]) == 0
    names = capsys.readouterr().out
    assert "cloze-book-accuracy" in names and "annotations" in names
    out = tmp_path / "passages.csv"
    assert main(["table", str(path), "cloze-passages", "--out", str(out)]) == 0
    assert out.read_text().splitlines()[0].startswith("book,book_id,book_source,book_external_id,")
    result = run_cli("table", path, "no-such-table", "--out", tmp_path / "x.csv")
    assert result.returncode == 1 and "There is no table called 'no-such-table'" in result.stderr


def test_missing_values_print_as_blanks_in_tables(tmp_path, capsys):
    path = tmp_path / "study.palimpsest"
    main(["new", str(path)])
    book = tmp_path / "book.txt"
    book.write_text("A short invented story about Maud and the ferry.\n" * 20)
    assert main(["import", str(path), str(book)]) == 0
    capsys.readouterr()
    assert main(["books", str(path)]) == 0
    assert "<NA>" not in capsys.readouterr().out
