"""Every command that takes a deployment name reads it the same way (graphsite.labels.subdomain_of): the subdomain
alone or its fqdn under site.domain, and a name under another domain is refused before anything is connected."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from graphsite.cli import main


@pytest.fixture
def run(tmp_path):
    """Run `graphsite ARGS` with site.domain example.org, no token and a Docker that cannot be reached: a command
    that got as far as connecting would fail on those, not on the name."""
    config = tmp_path / "graphsite.toml"
    config.write_text('[site]\ndomain = "example.org"\n', encoding="utf-8")
    env = {"GRAPHSITE_CONFIG": str(config), "CLOUDFLARE_API_TOKEN": None, "GRAPHSITE_SITE_DOMAIN": None,
           "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock", "NO_COLOR": "1"}

    def invoke(*args: str):
        return CliRunner().invoke(main, list(args), env=env)

    return invoke


@pytest.mark.parametrize("argv", [["deploy", "--subdomain", "gs-x.example.com"], ["verify", "gs-x.example.com"],
                                  ["teardown", "gs-x.example.com"], ["list", "gs-x.example.com"],
                                  ["build", "--subdomain", "gs-x.example.com"]],
                         ids=lambda argv: argv[0])
def test_a_name_under_another_domain_is_refused_naming_the_configured_one(run, argv):
    result = run(*argv)
    assert result.exit_code == 1, result.output
    assert "'gs-x.example.com' is not under the configured domain example.org (site.domain)" in result.output
    assert "hint: give the subdomain alone or SUBDOMAIN.example.org" in result.output


class _Canonical(HTMLParser):
    href = ""

    def handle_starttag(self, tag, attrs):
        if tag == "link" and ("rel", "canonical") in attrs:
            self.href = dict(attrs)["href"]


def test_build_takes_the_fqdn_as_its_subdomain(run, tmp_path):
    source = tmp_path / "report.md"
    source.write_text("# A report\n\nOne paragraph.\n", encoding="utf-8")
    result = run("build", str(source), "--out", str(tmp_path / "site"), "--subdomain", "GS-X.Example.org.")
    assert result.exit_code == 0, result.output
    page = _Canonical()
    page.feed((tmp_path / "site" / "index.html").read_text(encoding="utf-8"))
    assert page.href == "https://gs-x.example.org/"


def test_deploy_refuses_a_name_too_long_for_swarm_before_connecting(run):
    name = "s" * 50
    result = run("deploy", "--subdomain", f"{name}.example.org")
    assert result.exit_code == 1, result.output
    assert f"--subdomain: {name!r} has 50 characters, more than the 41 a deployment name may have: Swarm refuses " \
           "config names over 64 characters" in result.output


def test_list_name_reads_the_systems_it_can_and_does_not_call_nothing_an_answer(private_cf, tmp_path):
    """A real (fake) Cloudflare answers, Docker cannot be reached: the name's fqdn is read as its subdomain, the
    JSON says which name was asked and which system was not read, and the exit status is 1."""
    config, _ = private_cf
    path = tmp_path / "graphsite.toml"
    path.write_text(f'''[site]
domain = "{config.site.domain}"
[deploy]
dynamic_dir = "{tmp_path}"
bind_root = "{tmp_path}"
lock_dir = "{tmp_path}"
[dns]
api_base_url = "{config.dns.api_base_url}"
zone_id = "{config.dns.zone_id}"
record_content = "127.0.0.1"
retries = 1
''', encoding="utf-8")
    result = CliRunner().invoke(main, ["list", f"GS-X.{config.site.domain}", "--json", "--config", str(path)],
                                env={"GRAPHSITE_CONFIG": None, "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock"})
    assert result.exit_code == 1, result.output
    shown = json.loads(result.stdout)
    assert shown["name"] == "gs-x" and shown["deployments"] == [] and list(shown["unreadable"]) == ["Docker Swarm"]
    assert "nothing of gs-x was found in the other systems, which does not prove it has nothing there" in \
        result.stderr
