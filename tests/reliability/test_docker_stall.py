"""The Docker daemon stalled (SIGSTOP) for longer than graphsite's client timeout in the middle of a deploy:
one-line error, no traceback, the undo runs (a step that timed out is tried once more, when the daemon may
answer again), and nothing is left once the daemon is back.

dockerd is shared by everyone on the machine: a stall lasts at most 5 s, and SIGCONT is sent when the block
ends whatever happens, and by a timer at the latest (graphsite_lab.drive.stopped)."""

from __future__ import annotations

import contextlib

import pytest

from graphsite_lab.drive import dockerd_pid, stopped

pytestmark = pytest.mark.lab

STALL = 5.0  # seconds; more than the client timeout below, well under drive.MAX_STALL


@pytest.mark.parametrize("step", ["content", "service"])
def test_dockerd_stalled_past_the_client_timeout_mid_deploy_fails_in_one_line_and_leaves_nothing(
        driver, names, step):
    name = names()
    daemon = dockerd_pid()
    with contextlib.ExitStack() as stack:
        run = driver.script([(f"  {step} … done", lambda _: stack.enter_context(stopped(daemon, at_most=STALL)))],
                            "deploy", "--subdomain", name, "--no-verify",
                            env={"GRAPHSITE_DEPLOY_DOCKER_TIMEOUT": "2"})
    assert run.code == 1, run
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "the Docker daemon did not answer in time" in errors[0], run
    assert not run.traceback, run
    assert "undone: removed config" in run.stderr, run
    assert f"proof: nothing of {name} is left" in run.stderr, run
    assert driver.leftovers(name) == []


def test_dockerd_stalled_mid_teardown_no_traceback_and_a_later_teardown_is_clean(driver, names):
    """The stall starts when teardown prints its first step (it used to start before the process did: a
    start-up slower than the stall minus the client timeout, on a busy machine, let dockerd answer). Which Docker
    step it meets depends on how fast the stop lands: the service's removal takes about 10 ms, and the test's
    SIGSTOP, sent once it has read the route's line, may come after it (then the configs' removal meets it)."""
    name = names()
    made = driver.run("deploy", "--subdomain", name, "--no-verify")
    assert made.code == 0, made
    daemon = dockerd_pid()
    with contextlib.ExitStack() as stack:
        run = driver.script([("  route … done", lambda _: stack.enter_context(stopped(daemon, at_most=STALL)))],
                            "teardown", name, env={"GRAPHSITE_DEPLOY_DOCKER_TIMEOUT": "2"})
    assert run.signalled, run
    assert run.code == 1, run
    assert not run.traceback, run
    stalled = [line for line in run.stdout.splitlines() if line.startswith(("failed    service", "failed    config"))]
    assert any("the Docker daemon did not answer in time" in line for line in stalled), str(run)
    assert f"run `graphsite teardown {name}` again" in run.stderr, run
    again = driver.run("teardown", name)
    assert again.code == 0, again
    assert driver.leftovers(name) == []
