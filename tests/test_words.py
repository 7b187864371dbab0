"""The direct reader of `build` and `links` (graphsite/commands/words.py) beside click, which reads the same
declarations: on every command line it reads, it gives the command's function what click would give it, and the
executable runs it without importing click, failing as the click group fails."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsite.cli import main as group
from graphsite.commands import build, links, words

COMMANDS = {"build": build.COMMAND, "links": links.COMMAND}
GLOBALS = ["-v", "--verbose", "-q", "--quiet", "-vv", "-qv", "--version", "-h", "--help", "--nope"]


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Paths of every kind click's Path checks tell apart: a file, a directory, one that does not exist."""
    root = tmp_path_factory.mktemp("words")
    (root / "report.md").write_text("# R\n", encoding="utf-8")
    (root / "site").mkdir()
    return {"file": str(root / "report.md"), "dir": str(root / "site"), "missing": str(root / "missing.md")}


def _vocabulary(command: words.Command, paths: dict[str, str]) -> list[str]:
    names = [param.name for param in command.params]
    values = [*paths.values(), *_VALUES]
    joined = [f"{name}={value}" for name in names for value in ("", paths["dir"], "2", "google", paths["missing"])]
    prefixes = [name[:-2] for name in names if len(name) > 4]  # click reads no abbreviation
    return names + values + joined + prefixes + ["-h", "--help", "--nope", "-"]


def _click_reads(argv: list[str]) -> tuple[int, str, dict[str, object]] | None:
    """Return what the click group reads of `argv`: the verbosity, the command and its function's arguments; None
    when it would not run a command (an error, help, the version)."""
    try:
        with group.make_context("graphsite", list(argv)) as ctx:
            name, command, rest = group.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
            assert command is not None and name is not None
            with command.make_context(name, rest, parent=ctx) as sub:
                verbosity = -1 if ctx.params["quiet"] else ctx.params["verbose"]
                return verbosity, name, dict(sub.params)
    except (click.ClickException, click.exceptions.Exit):
        return None


def _direct_reads(argv: list[str]) -> tuple[int, str, dict[str, object]] | None:
    line = words.read_line(argv, COMMANDS)
    return None if line is None else (line.verbosity, line.command.name, dict(line.arguments))


_VALUES = ["-", "", "-x", "--", "embedded", "google", "Embedded", "emb", "1", "0", "-1", "2.5", "inf", "nan", "+3",
           "3_0", "\uff13", " 2", "1e1", "name", "site"]


def _suited(kind: words.Kind, paths: dict[str, str]) -> list[str]:
    """Values of the kind an option takes (a few of them refused all the same)."""
    if isinstance(kind, words.PathKind):
        return list(paths.values())
    if isinstance(kind, words.ChoiceKind):
        return [*kind.choices, kind.choices[0].title()]
    suited = {words.PositiveKind: ["2.5", "1", "30", "0"], words.CountKind: ["1", "8", "16", "0", "1" * 5000]}
    return suited.get(type(kind), ["name-1"])


@st.composite
def _command_lines(draw: st.DrawFn, paths: dict[str, str]) -> list[str]:
    """A command line made of chunks: mostly an option with a value that may or may not suit it, or the argument;
    now and then any word at all."""
    name = draw(st.sampled_from(sorted(COMMANDS)))
    command = COMMANDS[name]
    values = st.sampled_from([*paths.values(), *_VALUES])
    words_drawn: list[str] = draw(st.lists(st.sampled_from(GLOBALS), max_size=2))
    words_drawn.append(name)
    for _ in range(draw(st.integers(0, 5))):
        param = draw(st.sampled_from(command.params))
        chunk = draw(st.sampled_from(["suited", "suited", "option", "joined", "argument", "any"]))
        if chunk == "argument":
            words_drawn.append(draw(values))
        elif chunk == "suited" and isinstance(param, words.Option):
            words_drawn += [param.name, draw(st.sampled_from(_suited(param.kind, paths)))]
        elif chunk == "any":
            words_drawn.append(draw(st.sampled_from(_vocabulary(command, paths))))
        elif isinstance(param, words.Flag):
            words_drawn.append(param.name)
        elif chunk == "joined":
            words_drawn.append(f"{param.name}={draw(values)}")
        else:
            words_drawn += [param.name, draw(values)]
    return words_drawn


def test_the_direct_reader_reads_as_click_does(paths: dict[str, str]) -> None:
    read = 0

    @settings(max_examples=400, deadline=None, database=None)
    @given(_command_lines(paths))
    def reads_alike(argv: list[str]) -> None:
        nonlocal read
        direct = _direct_reads(argv)
        if direct is not None:
            read += 1
            assert _click_reads(argv) == direct, argv

    reads_alike()
    assert read > 25, "the reader declined nearly everything: the comparison proves little"


@pytest.mark.parametrize("argv", [
    ["build"],
    ["-q", "build", "REPORT", "--out", "SITE", "--strict", "--json"],
    ["-v", "--verbose", "build", "-", "--fonts", "system", "--subdomain", "a-b", "--since", "REPORT", "--pdf"],
    ["build", "--out=SITE", "--check-links", "--config", "MISSING", "REPORT"],
    ["links", "REPORT", "--json", "--offline", "--no-cache", "--allow-private"],
    ["links", "--timeout", "2.5", "--deadline=30", "--concurrency", "8", "REPORT"],
])
def test_plain_command_lines_are_read_directly(argv: list[str], paths: dict[str, str]) -> None:
    argv = [{"REPORT": paths["file"], "SITE": paths["dir"], "MISSING": paths["missing"]}.get(w, w) for w in argv]
    direct = _direct_reads(argv)
    assert direct is not None
    assert direct == _click_reads(argv)


@pytest.mark.parametrize("argv", [
    ["build", "--help"], ["build", "-h"], ["--help", "build"], ["--version", "build"], ["build", "-q", "r.md"],
    ["build", "--out", "FILE"], ["links", "DIR"], ["build", "--since", "DIR"], ["build", "--fonts", "Embedded"],
    ["build", "r.md", "s.md"], ["build", "--strict", "--strict"], ["build", "--", "r.md"], ["build", "--out"],
    ["build", "--pdf=1"], ["links", "--timeout", "0"], ["links", "--timeout", "inf"], ["links", "--concurrency", "+3"],
    ["links", "--concurrency", "0"], ["links", "--concurrency", "1" * 5000],
    ["build", "--chec"], ["deploy", "build"], ["build", "--out", ""],
])
def test_anything_unusual_is_left_to_click(argv: list[str], paths: dict[str, str]) -> None:
    argv = [{"FILE": paths["file"], "DIR": paths["dir"]}.get(w, w) for w in argv]
    assert _direct_reads(argv) is None


# The executable, saying on stderr as it ends whether it imported click.
_PROBE = ("import atexit, sys\n"
          "atexit.register(lambda: 'click' in sys.modules and print('click imported', file=sys.stderr))\n"
          "sys.argv = ['graphsite', *sys.argv[1:]]\n"
          "from graphsite.entry import main\n"
          "main()\n")


def _graphsite(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), **env}
    return subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, env=environment,
                          cwd=tmp_path, timeout=120)


def test_build_and_links_run_without_click(tmp_path: Path) -> None:
    report = tmp_path / "r.md"
    report.write_text("# R\n\nA [link](./here.md).\n", encoding="utf-8")
    built = _graphsite(tmp_path, "-q", "build", str(report), "--out", str(tmp_path / "site"))
    assert built.returncode == 0, built.stderr
    assert "click imported" not in built.stderr and (tmp_path / "site" / "index.html").is_file()
    checked = _graphsite(tmp_path, "links", str(report), "--offline", "--json")
    assert checked.returncode == 0, checked.stderr
    assert "click imported" not in checked.stderr and json.loads(checked.stdout)["links"]
    helped = _graphsite(tmp_path, "build", "--help")  # the probe sees click when it is imported
    assert helped.returncode == 0 and "click imported" in helped.stderr


@pytest.mark.parametrize(("words_given", "flag"), [
    (["build", "MISSING"], "--json"),  # a graphsite error, with --json
    (["build", "MISSING"], "--strict"),
    (["links", "REPORT", "--config", "BAD"], "--offline"),  # a configuration error ends links with 2
    (["build", "REPORT", "--json", "--out", "SITE"], "--strict"),  # citation findings under --strict
])
def test_a_failure_reads_the_same_either_way(words_given: list[str], flag: str, tmp_path: Path) -> None:
    """The same failure, once read directly and once by click (a flag given twice is click's to read): the same
    stdout, stderr and exit status."""
    report = tmp_path / "r.md"
    report.write_text("# R\n\nA [claim](#nowhere).\n", encoding="utf-8")
    (tmp_path / "bad.toml").write_text("[links]\nno_such_key = 1\n", encoding="utf-8")
    names = {"MISSING": str(tmp_path / "missing.md"), "REPORT": str(report), "BAD": str(tmp_path / "bad.toml"),
             "SITE": str(tmp_path / "site")}
    argv = [names.get(w, w) for w in words_given]
    direct = _graphsite(tmp_path, *argv, flag)
    by_click = _graphsite(tmp_path, *argv, flag, flag)
    assert "click imported" not in direct.stderr and "click imported" in by_click.stderr
    assert direct.returncode == by_click.returncode != 0
    assert direct.stdout == by_click.stdout
    assert direct.stderr == by_click.stderr.replace("click imported\n", "")


def test_a_reader_that_leaves_ends_the_run_quietly_either_way(tmp_path: Path) -> None:
    """`graphsite links … | head -c 10`: the pipe closes under the run; it ends with 1 and no traceback, as click
    ends it."""
    report = tmp_path / "many.md"
    report.write_text("# R\n\n" + "".join(f"- [{i}](./missing-{i}.md)\n" for i in range(3000)), encoding="utf-8")
    config = tmp_path / "graphsite.toml"
    config.write_text(f"[links]\ncache_dir = {json.dumps(str(tmp_path / 'cache'))}\n", encoding="utf-8")
    ends = []
    for twice in ([], ["--offline"]):  # the flag given twice: click reads the line
        argv = [sys.executable, "-m", "graphsite", "links", str(report), "--offline", *twice, "--config", str(config)]
        run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        assert run.stdout is not None and run.stderr is not None
        run.stdout.read(10)
        run.stdout.close()
        ends.append((run.wait(timeout=120), run.stderr.read().decode()))
        run.stderr.close()
    assert [status for status, _ in ends] == [1, 1], ends
    assert not [stderr for _, stderr in ends if "Traceback" in stderr], ends


@pytest.mark.parametrize("words_given", [["build", "MISSING", "--json"], ["build", "MISSING", "--json", "--strict",
                                          "--strict"], ["nosuch", "--json"]])
def test_a_failure_shown_to_a_reader_that_left_ends_quietly(words_given: list[str], tmp_path: Path) -> None:
    """A failing command with --json whose reader has already left (`graphsite build … --json | true`): the JSON
    of the failure meets a closed pipe; the run ends with 1 and no traceback, read directly, by click, or refused
    by click as a usage error."""
    argv = [str(tmp_path / "missing.md") if w == "MISSING" else w for w in words_given]
    read, write = os.pipe()
    os.close(read)
    try:
        run = subprocess.run([sys.executable, "-m", "graphsite", *argv], stdout=write, stderr=subprocess.PIPE,
                             text=True, cwd=tmp_path, timeout=60)
    finally:
        os.close(write)
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr, run.stderr


@pytest.mark.parametrize("as_json", [[], ["--json"]])
def test_an_interrupt_reads_the_same_either_way(as_json: list[str], tmp_path: Path) -> None:
    """Ctrl-C while `graphsite build -` waits for its report on standard input, once read directly and once by
    click: the same blank line closing the terminal's ^C echo, the same `stopped by SIGINT` (with --json, on
    stdout too), the same status, 130. Both paths end a command in one function (commands/present.py's run)."""
    ends = []
    for twice in ([], ["--strict", "--strict"]):  # a flag given twice: click reads the line
        argv = [sys.executable, "-c", _ANNOUNCING + _PROBE, "build", "-", "--out", str(tmp_path / "site"), *as_json,
                *twice]
        run = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=tmp_path, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "c")},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        _wait_reading(run)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
        ends.append((run.returncode, out, err.replace("click imported\n", "")))
        assert ("click imported" in err) == bool(twice), err
    assert ends[0] == ends[1]
    status, out, err = ends[0]
    assert (status, err) == (130, "\nError: stopped by SIGINT\n")
    assert (json.loads(out) if as_json else out) == ({"error": "stopped by SIGINT", "hint": None, "status": 130}
                                                     if as_json else "")


# Standard input that says on stderr when it is read, just before it waits in the read
_READING = "reading standard input"
_ANNOUNCING = ("import io, sys\n"
               "class Announcing(io.BufferedReader):\n"
               "    def read(self, size=-1):\n"
               f"        print({_READING!r}, file=sys.stderr, flush=True)\n"
               "        return super().read(size)\n"
               "sys.stdin = io.TextIOWrapper(Announcing(sys.stdin.buffer.detach()))\n")


def _wait_reading(run: subprocess.Popen[str], seconds: float = 60) -> None:
    """Return once `run` (started with `_ANNOUNCING`) waits in the read of its standard input: it has said it
    reads, and it sleeps (/proc/PID/stat; /proc/PID/wchan, which named the pipe, reads 0 on some kernels)."""
    deadline, said, line = time.monotonic() + seconds, b"", f"{_READING}\n".encode()
    assert run.stderr is not None
    while not said.endswith(b"\n"):  # its print may come in more than one write
        left = deadline - time.monotonic()
        assert left > 0 and select.select([run.stderr], [], [], left)[0], f"{run.pid} never read its standard input"
        chunk = os.read(run.stderr.fileno(), 4096)  # past the text wrapper: communicate reads the rest from the fd
        assert chunk, f"{run.pid} ended before it read its standard input: {said!r}"
        said += chunk
    assert said == line, said
    stat = Path(f"/proc/{run.pid}/stat")
    while stat.read_text().rpartition(")")[2].split()[0] != "S":  # after its comm, which may hold anything
        assert time.monotonic() < deadline, f"{run.pid} said it reads its standard input, then never waited"
        time.sleep(0.01)
