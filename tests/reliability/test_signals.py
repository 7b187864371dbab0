"""SIGTERM and SIGHUP (a cancelled CI job, `timeout`, a dropped SSH session) stop a deploy like Ctrl-C: the run
undoes what it made, once, says it was stopped, and exits 128 + the signal. A second signal during the undo
leaves at once, naming what is left and the command that removes it."""

from __future__ import annotations

import contextlib
import signal
import threading

import pytest

from graphsite_lab.drive import cloudflare_pid, stopped

pytestmark = pytest.mark.lab


def later(seconds: float, action, *args) -> None:
    timer = threading.Timer(seconds, action, args)
    timer.start()


@pytest.mark.parametrize("mode", ["config", "bind"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_signal_right_after_the_service_step_undoes_everything(driver, names, sig, mode):
    name = names()
    run = driver.signal_after("service", sig, "deploy", "--subdomain", name, "--content", mode, "--no-verify")
    assert run.signalled == "service"
    assert run.code == 128 + sig, run
    assert f"deploy stopped by {signal.Signals(sig).name}" in run.stderr, run
    assert f"undone: removed service {name}" in run.stderr, run
    assert f"proof: nothing of {name} is left" in run.stderr, run
    assert not run.traceback, run
    assert driver.leftovers(name) == []


def test_a_second_signal_during_the_undo_leaves_at_once_and_says_what_is_left(driver, names, lab):
    """Cloudflare is stalled, so the DNS step and then the undo of its record hang: the first SIGTERM lands in
    the DNS step, the second in the undo. What is left is then named, found by `list`, and torn down."""
    name = names()
    env = {"GRAPHSITE_DNS_TIMEOUT": "4", "GRAPHSITE_DNS_RETRIES": "0"}
    cloudflare = cloudflare_pid(lab)
    with contextlib.ExitStack() as stack:
        run = driver.script([
            ("  converge … done", lambda _: stack.enter_context(stopped(cloudflare))),  # the plan has read DNS
            ("  route … done", lambda process: later(0.5, process.send_signal, signal.SIGTERM)),  # in the DNS step
            ("  dns … failed", lambda process: process.send_signal(signal.SIGTERM)),  # lands in the undo
        ], "deploy", "--subdomain", name, "--no-verify", env=env)
    assert run.code == 128 + signal.SIGTERM, run
    assert "stopped by a second SIGTERM during the undo" in run.stderr, run.stderr
    assert f"Remove it with: graphsite teardown {name}" in run.stderr, run
    named = run.stderr.split("not undone: ", 1)[1]
    assert f"route {driver.dynamic_dir}/{name}.yml" in named and f"service {name}" in named, run
    assert f"record A {driver.fqdn(name)}" in named, run  # in flight when the second signal came: not undone
    assert not run.traceback, run
    entry, listed, held, listing = driver.compare(name)
    assert listed == held and {"route", "service", "config"} <= {k for k, _ in held}, listing
    gone = driver.run("teardown", name)
    assert gone.code == 0, gone
    assert driver.leftovers(name) == []
