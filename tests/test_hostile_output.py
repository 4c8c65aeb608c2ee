"""Hostile output paths (issue 28): idemsim writes the file asked for, whole, and nothing else.

`idemsim.base.output.write_output` is the one way `-o`, `--plot` and `--save` write: a regular file atomically
(a symbolic link followed, the link kept), a FIFO, a device or the command's own standard output written
through, never replaced; every failure one line naming the file and the system's reason. Then the commands:
each refusal one line, exit 2, in the user's language, within 2 s; names from the input printed escaped; the
text wrapper linear on a long unbroken word.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_hostile import deadline, idemsim_command, toml_file

from idemsim.base.errors import InputError
from idemsim.base.output import check_output, write_output
from idemsim.views.prose import wrap

LONG_NAME = "a" * 300 + ".png"
"""A file name longer than any file system allows (255 bytes)."""
OVER_PATH_MAX = "a/" * 2100 + "x.png"
"""A path longer than PATH_MAX (4096 bytes)."""


def refusal(path: str, data: bytes = b"data", name: str | None = None) -> str:
    """The English line `write_output` refuses ``path`` with."""
    with pytest.raises(InputError) as refused:
        write_output(path, data, name)
    return str(refused.value)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


class TestWriteOutput:
    def test_a_new_file_is_written_with_the_umasks_permissions(self, tmp_path):
        """A new file holds the data, has the mode a new file gets, and no temporary file is left."""
        target = tmp_path / "out.json"
        assert write_output(str(target), "{}\n") == "file"
        mask = os.umask(0)
        os.umask(mask)
        assert target.read_text() == "{}\n" and stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
        assert leftovers(tmp_path) == []

    def test_an_existing_file_is_replaced_and_keeps_its_permissions(self, tmp_path):
        target = tmp_path / "out.csv"
        target.write_text("old")
        target.chmod(0o640)
        write_output(str(target), b"new")
        assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640

    def test_a_symbolic_link_is_followed_and_stays_a_link(self, tmp_path):
        """The link's target is written (atomically); the link is still a link to it."""
        (tmp_path / "real").mkdir()
        link = tmp_path / "link.png"
        link.symlink_to("real/figure.png")
        write_output(str(link), b"png")
        assert link.is_symlink() and os.readlink(link) == "real/figure.png"
        assert (tmp_path / "real" / "figure.png").read_bytes() == b"png"
        assert leftovers(tmp_path) == leftovers(tmp_path / "real") == []

    def test_a_fifo_is_written_through(self, tmp_path):
        """`-o fifo`: the reader at the other end gets the data; the FIFO stays a FIFO."""
        fifo = tmp_path / "pipe.png"
        os.mkfifo(fifo)
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
        reader.start()
        with deadline(10):
            assert write_output(str(fifo), b"through the pipe") == "device"
        reader.join(10)
        assert got == [b"through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)

    def test_a_character_device_is_written_through(self):
        """A terminal (a pseudo-terminal's device here) gets the data; the device stays a device."""
        controller, device = os.openpty()
        try:
            path = os.ttyname(device)
            assert write_output(path, b"to the terminal") == "device"
            assert os.read(controller, 100).replace(b"\r", b"") == b"to the terminal"
            assert stat.S_ISCHR(os.stat(path).st_mode)
        finally:
            os.close(controller)
            os.close(device)

    @pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
    def test_a_full_device_is_one_line_and_stays_a_device(self):
        assert refusal("/dev/full") == "/dev/full: cannot write: No space left on device"
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)

    @pytest.mark.parametrize("path, says", [
        ("/proc/x.png", "/proc/x.png: cannot write: No such file or directory"),
        (LONG_NAME, f"{LONG_NAME[:119]}…: cannot write: File name too long"),
        (OVER_PATH_MAX, f"{OVER_PATH_MAX[:119]}…: cannot write: File name too long"),
        ("", "'': give a file name"),
    ])
    def test_what_cannot_be_written_is_one_line(self, path, says):
        assert refusal(path) == says

    @pytest.mark.skipif(not Path("/sys").is_dir(), reason="no /sys on this system")
    def test_sys_is_one_line(self):
        assert refusal("/sys/x.png").startswith("/sys/x.png: cannot write: ")

    def test_the_file_is_named_as_the_caller_says(self, tmp_path):
        """``--save PATH`` names the option too, cut to fit a line."""
        assert refusal(LONG_NAME, name=f"--save {LONG_NAME}") == (f"--save {LONG_NAME[:112]}…: cannot write: "
                                                                   "File name too long")

    @pytest.mark.slow
    def test_a_file_size_limit_is_one_line_and_leaves_the_old_file(self, tmp_path):
        """Under `ulimit -f` (SIGXFSZ ignored, as Python does): one line, the old file whole, no temporary."""
        target = tmp_path / "out.json"
        target.write_text("old")
        code = ("import resource, signal, sys\n"
                "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))\n"
                "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
                "from idemsim.base.errors import InputError\n"
                "from idemsim.base.output import write_output\n"
                "try:\n"
                f"    write_output({str(target)!r}, b'x' * 5000)\n"
                "except InputError as e:\n"
                "    print(e)\n")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert done.stdout == f"{target}: cannot write: File too large\n", done.stderr
        assert target.read_text() == "old" and leftovers(tmp_path) == []

    @pytest.mark.parametrize("path, says", [
        ("", "'': give a file name"),
        ("  ", "'  ': give a file name"),
        ("nowhere/x.png", "nowhere/x.png: no such directory 'nowhere'"),
        ("/proc/x.png", "/proc/x.png: cannot write: No such file or directory"),
        (LONG_NAME, f"{LONG_NAME[:119]}…: cannot write: File name too long"),
    ])
    def test_check_output_refuses_before_anything_runs(self, tmp_path, monkeypatch, path, says):
        """What can be told without writing is refused up front; nothing is left behind."""
        monkeypatch.chdir(tmp_path)
        with pytest.raises(InputError) as refused:
            check_output(path)
        assert str(refused.value) == says and list(tmp_path.iterdir()) == []

    def test_check_output_refuses_a_directory(self, tmp_path):
        with pytest.raises(InputError) as refused:
            check_output(str(tmp_path))
        assert str(refused.value) == f"{tmp_path}: is a directory; give a file name"


class TestCommands:
    """Each refusal: one line, exit 2, before anything runs (within 2 s), in the user's language."""

    @pytest.mark.parametrize("args, says", [
        (["plot", "lost-response", "-o", ""], "error: '': give a file name"),
        (["plot", "lost-response", "-o", "/proc/x.png"], "error: /proc/x.png: cannot write: No such file or "
                                                         "directory"),
        (["plot", "lost-response", "-o", LONG_NAME], f"error: {LONG_NAME[:119]}…: cannot write: File name too "
                                                     "long"),
        (["plot", "lost-response", "-o", OVER_PATH_MAX], f"error: {OVER_PATH_MAX[:119]}…: cannot write: File "
                                                         "name too long"),
        (["compare", "lost-response", "--plot", "/proc/x.png"], "error: /proc/x.png: cannot write: No such file "
                                                                "or directory"),
        (["sweep", "loss", "--seeds", "1", "--format", "text", "-o", "out.json"],
         "error: -o out.json: -o writes the JSON or CSV, and --format text writes a table to the terminal; add "
         "--format json or --format csv"),
        (["sweep", "loss", "--seeds", "1", "--format", "json", "-o", "out.csv"],
         "error: -o out.csv: a .csv name for --format json; give --format to match, or another name"),
        (["sweep", "loss", "--seeds", "1", "--format", "csv", "-o", "rates.png", "--plot", "./rates.png"],
         "error: -o rates.png and --plot ./rates.png name the same file; give each its own"),
        (["explore", "naive", "--save", "d" * 100_000 + ".toml"],
         f"error: --save {'d' * 112}…: cannot write: File name too long"),
        (["run", "lost-response", "--design", "d" * 100_000 + ".py:f"],
         f"error: --design {'d' * 199}…: no such file '{'d' * 199}…' (File name too long)"),
    ])
    def test_a_refusal_is_one_line_within_two_seconds(self, cli, one_line, tmp_path, monkeypatch, args, says):
        monkeypatch.chdir(tmp_path)
        start = time.monotonic()
        assert one_line(cli(*args)) == says
        assert time.monotonic() - start < 2
        assert list(tmp_path.iterdir()) == []

    def test_a_refusal_is_said_in_japanese(self, cli, one_line, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        line = one_line(cli("sweep", "loss", "--seeds", "1", "--format", "json", "-o", "r.png", "--plot", "r.png",
                            "--lang", "ja"))
        assert line == "エラー: -o r.png と --plot r.png が同じファイルです。別々の名前にしてください"
        assert one_line(cli("plot", "lost-response", "-o", "/proc/x.png", "--lang", "ja")) == (
            "エラー: /proc/x.png: 書き込めません: そのようなファイルやディレクトリはありません")

    @pytest.mark.slow
    def test_a_file_name_with_an_escape_is_printed_escaped(self, cli, tmp_path):
        """`plot -o $'a\\x1b[2Jb.png'`: the file is written under its name; the "wrote" line shows the escape."""
        target = tmp_path / "a\x1b[2Jb.png"
        result = cli("plot", "lost-response", "-o", target)
        assert result.exit_code == 0, result.output
        assert result.stdout == f"{tmp_path}/a\\x1b[2Jb.png\n" and target.read_bytes().startswith(b"\x89PNG")

    @pytest.mark.slow
    def test_a_symbolic_link_stays_a_link(self, cli, tmp_path):
        link = tmp_path / "figure.png"
        link.symlink_to(tmp_path / "target.png")
        assert cli("plot", "lost-response", "-o", link).exit_code == 0
        assert link.is_symlink() and (tmp_path / "target.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.slow
class TestProcesses:
    """Real processes: standard output and a file-size limit."""

    def test_dev_stdout_is_written_through_without_the_file_name(self, tmp_path):
        """`plot -o /dev/stdout > f.png`: the figure, and nothing after it; the redirected file stays a file."""
        out = tmp_path / "f.png"
        with open(out, "wb") as f:
            done = subprocess.run([*idemsim_command(), "plot", "lost-response", "-o", "/dev/stdout"], stdout=f,
                                  stderr=subprocess.PIPE, timeout=60)
        assert done.returncode == 0 and done.stderr == b""
        data = out.read_bytes()
        assert data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82")

    def test_a_sweep_to_dev_stdout_is_its_json(self):
        done = subprocess.run([*idemsim_command(), "sweep", "loss", "--seeds", "1", "--vary",
                               "network.response.loss=0", "--design", "naive", "--format", "json", "-o",
                               "/dev/stdout", "--workers", "1"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout.startswith("{") and done.stdout.endswith("}\n")

    def test_a_file_size_limit_is_one_line(self, tmp_path):
        def limit():
            import resource
            import signal

            resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

        done = subprocess.run([*idemsim_command(), "plot", "lost-response", "-o", "big.png"], cwd=tmp_path,
                              preexec_fn=limit, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stderr == "error: big.png: cannot write: File too large\n"
        assert list(tmp_path.iterdir()) == []


class TestLongWords:
    def test_the_wrapper_folds_a_long_word_in_linear_time(self):
        """A 10,000-character unbroken word: folded into lines of the width, in well under a second."""
        with deadline(2):
            lines = wrap("k" * 10_000, 80)
        assert lines == ["k" * 80] * 125

    def test_a_wide_word_folds_by_cells(self):
        assert wrap("あ" * 100, 80) == ["あ" * 40] * 2 + ["あ" * 20]

    @pytest.mark.slow
    @pytest.mark.parametrize("command", ["run", "show"])
    def test_a_long_key_and_title_do_not_hang(self, cli, tmp_path, command):
        path = toml_file(tmp_path, {"title": "T" * 10_000, "operations": [{"key": "k" * 10_000,
                                                                            "body": {"amount": 1000}}]})
        with deadline(20):
            result = cli(command, path)
        assert result.exit_code in (0, 1), result.output
