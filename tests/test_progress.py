"""Progress: a bar on a terminal, one line per step of N % when the output is a file."""

import io

from tqdm import tqdm

from medeval.progress import LineProgress, progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_file_gets_one_line_per_ten_percent():
    out = io.StringIO()
    for _ in progress(range(1000), desc="work", file=out):
        pass
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert len(lines) == 11  # 0 %, 10 %, ..., 100 %
    assert [line.split("%")[0].split()[-1] for line in lines] == [str(p) for p in range(0, 101, 10)]


def test_uneven_updates_print_each_step_once():
    out = io.StringIO()
    with progress(total=100, every=25, file=out) as bar:
        for step in (10, 30, 5, 55):  # 10, 40, 45, 100 %
            bar.update(step)
    pcts = [line.split("%")[0].split()[-1] for line in out.getvalue().splitlines()]
    assert pcts == ["0", "40", "100"]


def test_a_terminal_gets_a_live_bar():
    bar = progress(total=3, file=_Tty())
    assert isinstance(bar, tqdm) and not isinstance(bar, LineProgress)
    bar.close()


def test_disabled_progress_writes_nothing():
    out = io.StringIO()
    for _ in progress(range(50), disable=True, file=out):
        pass
    assert out.getvalue() == ""
