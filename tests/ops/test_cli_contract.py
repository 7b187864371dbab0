"""The contract every command keeps: with --json, one JSON object on stdout for a failure too (`error` and `hint`
apart, `status`, `usage` for a usage error), and the exit status of the one table, codes.Exit (README)."""

from __future__ import annotations

import codecs
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from graphsite.cli import COMMANDS, main
from graphsite.codes import Exit, stopped_by

REPORT = "---\ntitle: Hé report\n---\n# Hé report\n\n## One\n\nText é, cited [[1](https://example.org/a)].\n\n" \
         "## References\n\n1. Example — https://example.org/a\n"


def run(*args: str, stdin: bytes | None = None) -> click.testing.Result:
    return CliRunner().invoke(main, list(args), input=stdin, env={"NO_COLOR": "1", "GRAPHSITE_CONFIG": None})


@pytest.fixture(scope="module")
def bad_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("config") / "graphsite.toml"
    path.write_text('[deploy]\nport = "eighty"\n')
    return path


# (argv, expected status, a usage error?) for a failure of every command that costs no network and no lab.
FAILURES = {
    "build: no such report": (["build", "{tmp}/missing.md", "--out", "{tmp}/site"], Exit.FAILED, False),
    "build: a bad --fonts": (["build", "--fonts", "comic"], Exit.USAGE, True),
    "build: --out is a file": (["build", "--out", "{config}"], Exit.USAGE, True),
    "links: no such report": (["links", "{tmp}/missing.md"], Exit.USAGE, False),
    "links: a bad configuration": (["links", "--config", "{config}"], Exit.USAGE, False),
    "deploy: no subdomain flag": (["deploy"], Exit.USAGE, True),
    "deploy: a bad configuration": (["deploy", "--random-subdomain", "--config", "{config}"], Exit.FAILED, False),
    "verify: a bad configuration": (["verify", "graph-eng-0a1b2c", "--config", "{config}"], Exit.FAILED, False),
    "teardown: no NAME": (["teardown"], Exit.USAGE, True),
    "list: a bad configuration": (["list", "--config", "{config}"], Exit.FAILED, False),
    "gc: a bad --now": (["gc", "--now", "yesterday"], Exit.USAGE, True),
    "doctor: a bad configuration": (["doctor", "--config", "{config}"], Exit.FAILED, False),
    "serve: no such report": (["serve", "{tmp}/missing.md"], Exit.FAILED, False),
    "new: the file exists": (["new", "{config}"], Exit.FAILED, False),
    "config show: a bad configuration": (["config", "show", "--config", "{config}"], Exit.FAILED, False),
    "history: a bad configuration": (["history", "graph-eng-0a1b2c", "--config", "{config}"], Exit.FAILED, False),
    "rollback: a --to that is no sha": (["rollback", "graph-eng-0a1b2c", "--to", "HEAD~1"], Exit.USAGE, True),
    "diff: no such report": (["diff", "{tmp}/missing.md", "{tmp}/new.md"], Exit.USAGE, True),
    "config schema: no such option": (["config", "schema", "--nope"], Exit.USAGE, True),
    "no such command": (["publish"], Exit.USAGE, True),
}


def test_every_command_has_a_failure_case() -> None:
    assert {case.split(":")[0] for case in FAILURES} >= set(COMMANDS) - {"config"} | {"config show", "config schema"}


@pytest.mark.parametrize("case", FAILURES)
def test_a_failure_with_json_is_one_object_and_the_documented_status(case: str, tmp_path: Path,
                                                                      bad_config: Path) -> None:
    argv, status, usage = FAILURES[case]
    argv = [a.format(tmp=tmp_path, config=bad_config) for a in argv]
    result = run(*argv, "--json")
    assert result.exit_code == status, result.output
    answer = json.loads(result.stdout)  # one object, nothing else on stdout
    assert answer["status"] == status and answer["error"], answer
    assert "hint:" not in answer["error"] and "hint" in answer
    assert ("usage" in answer) == usage and (not usage or answer["usage"].startswith("Usage: "))
    assert "Error:" in result.stderr and "Traceback" not in result.output
    human = run(*argv)  # without --json: the same status, nothing on stdout
    assert human.exit_code == status and human.stdout == "" and "Error:" in human.stderr


def test_json_after_double_dash_is_an_argument_not_the_flag(tmp_path: Path) -> None:
    result = run("build", "--out", str(tmp_path / "site"), "--", "--json")
    assert result.exit_code == Exit.FAILED and result.stdout == "" and "--json: file not found" in result.stderr


def test_a_failure_after_the_report_is_in_the_same_object(capsys: pytest.CaptureFixture[str]) -> None:
    from graphsite import output
    from graphsite.codes import CheckStatus
    from graphsite.commands import present
    from graphsite.errors import Incomplete
    from graphsite.publisher.check import CheckResult
    from graphsite.publisher.deployment import Deployment
    from graphsite.usecases.verify import VerifyReport

    deployment = Deployment(name="graph-eng-0a1b2c", fqdn="graph-eng-0a1b2c.example.org", sha256="a" * 64,
                            created="2026-07-01T12:00:00Z", made_by="0.2.0")
    report = VerifyReport(deployment, (CheckResult("dns", CheckStatus.FAIL, "no record", seconds=0.1),), True)
    output.configure()
    with pytest.raises(Incomplete) as failed:
        present.verify(report, as_json=True)
    status = present.failure(failed.value, as_json=True)
    answer = json.loads(capsys.readouterr().out)  # the report's object alone: the failure did not add another
    assert status == Exit.FAILED and answer["ok"] is False and answer["status"] == 1
    assert answer["error"].startswith("graph-eng-0a1b2c: 1 check(s) failed: dns")
    assert answer["checks"] == [{"name": "dns", "status": "FAIL", "evidence": "no record", "fix": "",
                                 "seconds": 0.1}]


def test_an_interrupt_ends_with_128_plus_the_signal(capsys: pytest.CaptureFixture[str]) -> None:
    from graphsite import output
    from graphsite.commands.present import failure
    from graphsite.signals import Interrupted

    output.configure()  # a command's start: nothing printed yet
    assert failure(KeyboardInterrupt(), as_json=True) == stopped_by(signal.SIGINT) == 130
    assert json.loads(capsys.readouterr().out) == {"error": "stopped by SIGINT", "hint": None, "status": 130}
    assert failure(Interrupted(signal.SIGTERM), as_json=False) == 143 == Interrupted(signal.SIGTERM).exit_code
    assert capsys.readouterr().out == ""


def test_the_exit_table_is_the_documented_one() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for status in (Exit.OK, Exit.FAILED, Exit.USAGE):
        assert f"| {int(status)} |" in readme, status
    assert "| 128 + n |" in readme and [int(s) for s in Exit] == [0, 1, 2, 128]


def test_every_command_takes_json() -> None:
    from graphsite.cli import main as group

    ctx = click.Context(group)
    for name in COMMANDS:
        command = group.get_command(ctx, name)
        assert command is not None
        leaves = command.commands.values() if isinstance(command, click.Group) else [command]
        for leaf in leaves:
            assert any("--json" in p.opts for p in leaf.params), f"{name} {leaf.name}"
    schema = run("config", "schema", "--json")
    assert schema.exit_code == 0 and json.loads(schema.stdout)["$schema"]


def test_new_and_serve_take_json(tmp_path: Path) -> None:
    made = run("new", str(tmp_path / "r.md"), "--json")
    assert made.exit_code == 0 and json.loads(made.stdout) == {"path": str(tmp_path / "r.md")}
    served = subprocess.Popen([sys.executable, "-m", "graphsite", "serve", str(tmp_path / "r.md"), "--port", "0",
                               "--json", "--fonts", "system"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        assert served.stdout is not None
        lines = []
        for line in served.stdout:  # the object is printed whole before serving starts
            lines.append(line)
            if line == "}\n":
                break
        answer = json.loads("".join(lines))
        assert answer["source"] == str(tmp_path / "r.md") and answer["url"].startswith("http://127.0.0.1:")
    finally:
        served.send_signal(signal.SIGINT)
        out, _ = served.communicate(timeout=30)
    assert served.returncode == 0 and out == ""


def test_a_dash_reads_the_report_from_standard_input(tmp_path: Path) -> None:
    result = run("build", "-", "--out", str(tmp_path / "site"), "--json", "--fonts", "system",
                 stdin=REPORT.encode())
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["citations"]["inline"] == 1
    assert "<title>Hé report</title>" in (tmp_path / "site" / "index.html").read_text()
    empty = run("build", "-", "--out", str(tmp_path / "empty"), "--json", stdin=b"")
    assert empty.exit_code == 1 and json.loads(empty.stdout)["error"] == "<stdin>: the file is empty"


def test_a_report_from_standard_input_embeds_no_image_of_the_working_directory(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch
                                                                              ) -> None:
    """Standard input has no directory of its own: a local image is not read from wherever the command runs
    (a piped report must not embed the reader's files), and --strict fails on it."""
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "s.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>')
    monkeypatch.chdir(tmp_path)
    report = b"# R\n\n![x](private/s.svg)\n"
    built = run("build", "-", "--out", str(tmp_path / "site"), "--json", "--fonts", "system", stdin=report)
    assert built.exit_code == 0, built.output
    assert "data:image" not in (tmp_path / "site" / "index.html").read_text()
    assert "no directory of its own" in built.stderr
    strict = run("build", "-", "--out", str(tmp_path / "strict"), "--strict", "--fonts", "system", stdin=report)
    assert strict.exit_code == Exit.FAILED and "image-missing" in strict.stderr


def test_a_non_blocking_standard_input_with_nothing_yet_is_an_error_never_a_cut_page(tmp_path: Path) -> None:
    """A non-blocking pipe with part of a report and no more yet: read() answered None, taken for the end, and a
    page was built of what had come (or a TypeError traceback when nothing had). It is a read that failed."""
    import fcntl

    reading, writing = os.pipe()
    os.write(writing, b"# Half a report\n\nThe first part")
    fcntl.fcntl(reading, fcntl.F_SETFL, fcntl.fcntl(reading, fcntl.F_GETFL) | os.O_NONBLOCK)
    try:
        built = subprocess.run([sys.executable, "-m", "graphsite", "build", "-", "--json", "--out",
                                str(tmp_path / "site")], stdin=reading, capture_output=True, text=True, timeout=60)
    finally:
        os.close(reading)
        os.close(writing)
    assert built.returncode == Exit.FAILED and "Traceback" not in built.stderr, built.stderr
    assert json.loads(built.stdout)["error"] == ("<stdin>: cannot read standard input: it is non-blocking and had "
                                                 "nothing more to read yet")
    assert not (tmp_path / "site" / "index.html").exists()


def test_a_closed_standard_input_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    closed = subprocess.run([sys.executable, "-m", "graphsite", "build", "-", "--json", "--out", str(tmp_path)],
                            capture_output=True, text=True, timeout=60,
                            close_fds=True, preexec_fn=lambda: os.close(0))
    assert closed.returncode == Exit.FAILED and "Traceback" not in closed.stderr, closed.stderr
    assert json.loads(closed.stdout) == {"error": "<stdin>: standard input is closed",
                                         "hint": "pipe the report in, or give its path", "status": 1}


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "utf-8"])
def test_a_report_with_a_byte_order_mark_is_decoded(encoding: str, tmp_path: Path) -> None:
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE, "utf-32-le": codecs.BOM_UTF32_LE,
           "utf-32-be": codecs.BOM_UTF32_BE, "utf-8": codecs.BOM_UTF8}[encoding]
    source = tmp_path / "r.md"
    source.write_bytes(bom + REPORT.encode(encoding))
    result = run("build", str(source), "--out", str(tmp_path / "site"), "--strict", "--fonts", "system")
    assert result.exit_code == 0, result.output
    assert "<title>Hé report</title>" in (tmp_path / "site" / "index.html").read_text()


def test_a_bad_byte_after_a_utf16_mark_names_utf16(tmp_path: Path) -> None:
    source = tmp_path / "r.md"
    source.write_bytes(codecs.BOM_UTF16_LE + "# T\n".encode("utf-16-le") + b"\x00\xd8")  # a lone surrogate
    result = run("build", str(source), "--out", str(tmp_path / "site"), "--json")
    assert result.exit_code == 1
    answer = json.loads(result.stdout)
    assert "not valid UTF-16" in answer["error"] and answer["hint"] == "save the file as UTF-8"
    assert not (tmp_path / "site").exists()
