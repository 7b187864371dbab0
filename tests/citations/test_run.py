"""`graphsite links` as a process: every link accounted for with its line, distinct exit codes, bad
configuration named, Ctrl-C / SIGTERM keeping the verdicts reached, and two runs sharing one cache."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from graphsite.citations.cache import LinkCache
from graphsite.citations.results import LinkResult
from graphsite.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GRAPHSITE_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GRAPHSITE_LINKS_ALLOW_PRIVATE", "true")
    (tmp_path / "graphsite.toml").write_text("[links]\ntimeout = 2.0\nretries = 0\n")
    return tmp_path


def test_every_link_of_the_report_is_listed_with_its_line_and_state(workdir, pitfall_server, monkeypatch):
    monkeypatch.delenv("GRAPHSITE_LINKS_ALLOW_PRIVATE")  # loopback is private now; 10.x is never asked either
    (workdir / "other.md").write_text("beside the report\n")
    (workdir / "r.md").write_text(
        "# Links\n\n"                                                     # 1-2
        "## 1. Kinds\n\n"                                                 # 3-4
        "Mail [me](mailto:me@example.org) or [call](tel:+15550100).\n"    # 5
        "[A file](file:///home/me/notes.pdf) and [FTP](ftp://ftp.example.org/pub).\n"  # 6
        "[Beside](./other.md), [missing](./gone.md), [here](#kinds-section).\n"        # 7
        f"[Loopback]({pitfall_server.url('/ok')}) and [router](http://10.1.2.3/admin).\n"  # 8
        "\n<h3 id='kinds-section'>raw</h3>\n\n"                           # 9-11
        f"Again [loopback]({pitfall_server.url('/ok')}).\n",              # 12
        encoding="utf-8")
    result = CliRunner().invoke(main, ["links", "r.md", "--json"])
    assert result.exit_code == 0, result.output
    links = {link["url"]: (link["state"], link["lines"]) for link in json.loads(result.stdout)["links"]}
    assert links == {
        "mailto:me@example.org": ("skipped", [5]), "tel:+15550100": ("skipped", [5]),
        "file:///home/me/notes.pdf": ("private", [6]), "ftp://ftp.example.org/pub": ("skipped", [6]),
        "./other.md": ("local", [7]), "./gone.md": ("local", [7]), "#kinds-section": ("ok", [7]),
        pitfall_server.url("/ok"): ("private", [8, 12]), "http://10.1.2.3/admin": ("private", [8]),
    }
    assert pitfall_server.hits.log == []  # nothing private was requested
    assert "2 relative link(s) will not work on the published page" in result.stderr
    assert "./gone.md (line 7:33)" in result.stderr
    allowed = CliRunner().invoke(main, ["links", "r.md", "--json", "--allow-private"])
    states = {link["url"]: link["state"] for link in json.loads(allowed.stdout)["links"]}
    assert states[pitfall_server.url("/ok")] == "ok" and pitfall_server.hits.count("/ok") == 1


@pytest.mark.parametrize("where, text, key", [
    ("file", "timeout = 0", "links.timeout: expected a number above 0, got 0.0"),
    ("file", "per_host = -2", "links.per_host: expected a number above 0, got -2"),
    ("file", "link_timeout = nan", "links.link_timeout: expected a number above 0, got nan"),
    ("file", "retries = -1", "links.retries: expected a number of 0 or more, got -1"),
    ("file", 'ca_bundle = "/nonexistent/ca.pem"', "links.ca_bundle: no such file '/nonexistent/ca.pem'"),
    ("env", "GRAPHSITE_LINKS_TIMEOUT=-5", "links.timeout: expected a number above 0, got -5.0 (from "
                                          "GRAPHSITE_LINKS_TIMEOUT)"),
    ("env", "GRAPHSITE_LINKS_CONCURRENCY=0", "links.concurrency: expected a number above 0, got 0 (from "
                                             "GRAPHSITE_LINKS_CONCURRENCY)"),
    ("file", 'ca_bundle = "r.md"', "links.ca_bundle: cannot load 'r.md' as PEM CA certificates"),
    ("env", "GRAPHSITE_DEPLOY_DOCKER_TIMEOUT=inf", "deploy.docker_timeout: expected at most 100,000,000, got inf"),
    ("env", "GRAPHSITE_DEPLOY_GC_GRACE=-1", "deploy.gc_grace: expected a number of 0 or more, got -1.0"),
    ("env", "GRAPHSITE_DEPLOY_DOCKER_TIMEOUT=1e12", "deploy.docker_timeout: expected at most 100,000,000"),
    ("env", "GRAPHSITE_VERIFY_ORIGIN_ADDRESS=127.0.0.1:abc", "verify.origin_address: expected host:port"),
])
def test_a_value_that_is_not_a_positive_number_is_a_configuration_error_exit_2(workdir, monkeypatch, where,
                                                                                text, key):
    (workdir / "r.md").write_text("# R\n\n[x](https://example.org/)\n")
    if where == "file":
        (workdir / "graphsite.toml").write_text(f"[links]\n{text}\n")
    else:
        name, _, value = text.partition("=")
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(main, ["links", "r.md"])
    assert result.exit_code == 2, result.output
    assert key in result.output and "Traceback" not in result.output


def _start(workdir: Path, source: str, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "graphsite", "links", source, "--json", *extra], cwd=workdir,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("number, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_stops_the_run_and_keeps_the_verdicts_reached(workdir, pitfall_server, number, code):
    paths = ["/ok", "/slow", "/trickle-body#present", "/slow#present"]
    (workdir / "r.md").write_text("# R\n\n" + "".join(f"- [l]({pitfall_server.url(p)})\n" for p in paths))
    process = _start(workdir, "r.md", "--timeout", "30")
    assert process.stderr is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr or ()), daemon=True)
    reader.start()
    give_up = time.monotonic() + 20
    while not any("checked 1/" in line for line in lines) and time.monotonic() < give_up:
        time.sleep(0.05)
    assert any("checked 1/" in line for line in lines), lines  # a verdict was reached before the signal
    process.send_signal(number)
    assert process.stdout is not None
    stdout = process.stdout.read()  # until the process closes it: it has exited
    process.wait(timeout=20)
    reader.join(timeout=5)
    assert process.returncode == code, "".join(lines)
    data = json.loads(stdout)
    assert data["partial"] is True and data["stopped_by"] == signal.Signals(number).name
    states = {link["url"].removeprefix(pitfall_server.base): link["state"] for link in data["links"]}
    assert states == {"/ok": "ok", "/slow": "unchecked", "/trickle-body#present": "unchecked",
                      "/slow#present": "unchecked"}
    assert any("partial" in line for line in lines) and not any("Traceback" in line for line in lines)
    cache = json.loads((workdir / "cache" / "graphsite" / "links.json").read_text())
    assert list(cache["results"]) == [pitfall_server.url("/ok")]


# A check in a process of its own, the collector's state read after it.
_GC_PROBE = """
import gc, sys
from graphsite.citations.live import check_links
from graphsite.config import LinksConfig
report = check_links([sys.argv[1]], LinksConfig(allow_private=True, retries=0, timeout=2.0, cache_dir=sys.argv[2]))
print(report.results[0].state, gc.isenabled(), gc.get_freeze_count() > 0)
"""


def test_the_network_half_is_imported_frozen_and_the_collector_left_on(tmp_path, pitfall_server):
    """The ~16,000 objects asyncio and the checker make on import live as long as the process: they are frozen,
    never scanned by a collection, and the collector is on again for what the check makes."""
    result = subprocess.run([sys.executable, "-c", _GC_PROBE, pitfall_server.url("/ok"), str(tmp_path)],
                            capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", "True", "True"]


_HALVES_PROBE = """
import gc, sys
from graphsite.citations import live
live._import_network_half(checker=False)
print("graphsite.citations.network" in sys.modules, "graphsite.citations.checker" in sys.modules, gc.isenabled())
live._import_network_half()
print("graphsite.citations.checker" in sys.modules, gc.isenabled())
"""


def test_the_order_of_a_rerun_imports_the_network_module_without_the_checker():
    """Putting the early URLs in their order needs network.interleave, not the checker (8 ms of imports that a rerun
    answered wholly from the cache never uses); the checker comes when a request is to be sent."""
    result = subprocess.run([sys.executable, "-c", _HALVES_PROBE], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False", "True", "True", "True"]


def test_two_runs_at_once_both_land_in_the_cache(workdir, pitfall_server):
    for name, paths in (("a.md", ["/host/1", "/host/2", "/ok"]), ("b.md", ["/host/3", "/host/4", "/page"])):
        (workdir / name).write_text("# R\n\n" + "".join(f"- [l]({pitfall_server.url(p)})\n" for p in paths))
    runs = [_start(workdir, name) for name in ("a.md", "b.md")]
    for run in runs:
        run.communicate(timeout=60)
        assert run.returncode == 0
    cached = json.loads((workdir / "cache" / "graphsite" / "links.json").read_text())["results"]
    assert set(cached) == {pitfall_server.url(p) for p in ("/host/1", "/host/2", "/ok", "/host/3", "/host/4",
                                                           "/page")}


def test_a_save_merges_with_what_another_run_saved_since_this_one_loaded(tmp_path):
    first, second = LinkCache.load(tmp_path, 3600), LinkCache.load(tmp_path, 3600)
    now = time.time()
    second.save([LinkResult("https://b.example/", "ok", status=200, checked_at=now)])
    first.save([LinkResult("https://a.example/", "ok", status=200, checked_at=now),
                LinkResult("https://b.example/", "dead", status=404, checked_at=now - 10)])  # older: loses
    merged = LinkCache.load(tmp_path, 3600)
    assert {url: r["state"] for url, r in merged.entries.items()} == {"https://a.example/": "ok",
                                                                      "https://b.example/": "ok"}
    assert not list(tmp_path.glob(".links.json.*"))  # no temporary file left behind


def test_a_save_after_a_load_merges_with_what_another_run_saved_in_between(tmp_path):
    """A save merges into the entries it loaded only while the file is the one it read; another run's save
    replaced it meanwhile, and is read again."""
    now = time.time()
    LinkCache.load(tmp_path, 3600).save([LinkResult("https://a.example/", "ok", status=200, checked_at=now)])
    first, second = LinkCache.load(tmp_path, 3600), LinkCache.load(tmp_path, 3600)
    second.save([LinkResult("https://b.example/", "ok", status=200, checked_at=now)])
    first.save([LinkResult("https://c.example/", "ok", status=200, checked_at=now)])
    first.save([LinkResult("https://d.example/", "ok", status=200, checked_at=now)])  # its own file: in memory
    assert set(LinkCache.load(tmp_path, 3600).entries) == {f"https://{host}.example/" for host in "abcd"}


def test_a_cache_file_that_cannot_be_read_is_left_as_it_is_never_replaced_by_this_run_s_verdicts(tmp_path):
    """What a file that cannot be read holds is not known: a save does not replace it (with every verdict in it)
    by its own, it says so. A link that loops stands for any read that fails (root reads through a mode 000)."""
    cache_file = tmp_path / "links.json"
    cache_file.symlink_to(cache_file)  # ELOOP at every read
    cache = LinkCache.load(tmp_path, 3600, read=False)
    cache.save([LinkResult("https://a.example/", "ok", status=200, checked_at=time.time())])
    assert cache_file.is_symlink(), "the unreadable file was replaced"
    assert len(cache.warnings) == 1 and "cannot read the link cache" in cache.warnings[0] \
        and "not saved" in cache.warnings[0], cache.warnings


def test_a_unicode_host_inline_and_in_the_reference_list_is_one_link_on_two_lines(workdir, monkeypatch):
    monkeypatch.delenv("GRAPHSITE_LINKS_ALLOW_PRIVATE")  # .invalid is never requested
    (workdir / "r.md").write_text(
        "# R\n\n## 1. Body\n\nSee [the shop](https://Bücher.invalid/a) [[1](https://bücher.invalid/a)].\n\n"
        "## References\n\n1. The shop — https://bücher.invalid/a\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["links", "r.md", "--json"])
    assert result.exit_code == 0, result.output
    links = json.loads(result.stdout)["links"]
    assert [(link["state"], link["lines"]) for link in links] == [("private", [5, 9])], links
    assert "malformed" not in links[0]["detail"] and "bücher.invalid" not in links[0]["detail"]


def test_a_save_drops_entries_older_than_a_month_and_unreadable_ones(tmp_path):
    now = time.time()
    (tmp_path / "links.json").write_text(json.dumps({"version": 1, "results": {
        "https://old.example/": {"url": "https://old.example/", "state": "ok", "checked_at": now - 60 * 86400},
        "https://odd.example/": "not an entry",
        "https://kept.example/": {"url": "https://kept.example/", "state": "dead", "checked_at": now - 86400}}}))
    LinkCache.load(tmp_path, 3600).save([LinkResult("https://new.example/", "ok", status=200, checked_at=now)])
    assert set(LinkCache.load(tmp_path, 3600).entries) == {"https://kept.example/", "https://new.example/"}


def test_no_cache_checks_again_and_refreshes_the_cache(workdir, pitfall_server):
    (workdir / "r.md").write_text(f"# R\n\n[ok]({pitfall_server.url('/ok')})\n")
    cache = workdir / "cache" / "graphsite" / "links.json"
    assert CliRunner().invoke(main, ["links", "r.md"]).exit_code == 0
    first = json.loads(cache.read_text())["results"][pitfall_server.url("/ok")]["checked_at"]
    again = CliRunner().invoke(main, ["links", "r.md", "--no-cache", "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["cached"] == 0
    assert json.loads(cache.read_text())["results"][pitfall_server.url("/ok")]["checked_at"] > first
    assert pitfall_server.hits.count("/ok") == 2
    offline = CliRunner().invoke(main, ["links", "r.md", "--offline", "--json"])
    assert [link["state"] for link in json.loads(offline.stdout)["links"]] == ["ok"]
    assert pitfall_server.hits.count("/ok") == 2


def test_a_save_reads_the_file_again_when_another_run_replaced_it_with_the_same_inode_size_and_mtime(tmp_path):
    """On ext4 successive saves alternate between two inodes, often of one size, and a coarse clock gives them one
    modification time: another run's save then looks like the file this run read. It is told apart by what the
    file holds, and read again: its verdict is kept."""
    now = time.time()
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    LinkCache.load(mine, 3600).save([LinkResult("https://a.example/", "ok", status=200, checked_at=now)])
    first = LinkCache.load(mine, 3600)
    LinkCache.load(theirs, 3600).save([LinkResult("https://b.example/", "ok", status=200, checked_at=now)])
    path, saved = mine / "links.json", (theirs / "links.json").read_bytes()
    before = path.stat()
    assert len(saved) == before.st_size
    with path.open("r+b") as file:  # the other run's file, as the same inode, size and modification time
        file.write(saved)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    first.save([LinkResult("https://c.example/", "ok", status=200, checked_at=now)])
    assert set(LinkCache.load(mine, 3600).entries) == {"https://b.example/", "https://c.example/"}
