"""The judgement of one poll of a rollout (publisher/swarm.convergence), as a pure function: the states Swarm
reports during a start-first update, a rollback and a crash loop."""

from __future__ import annotations

from graphsite.publisher.swarm import Service, Task, convergence

NEW, OLD = "caddy:2-alpine", "caddy:2.7-alpine"
SERVICE = Service(id="s1", name="r-abc", labels={}, replicas=2, configs=("index-v2",), version=7, image=NEW)


def task(n: int, state: str, desired: str = "running", *, image: str = NEW, configs: tuple[str, ...] = ("index-v2",),
         error: str = "") -> Task:
    return Task(id=f"t{n}", state=state, desired=desired, error=error, message="", node="n1",
                spec_configs=configs, image=image + "@sha256:" + "0" * 64)


def judge(tasks: list[Task], service: Service = SERVICE):
    return convergence(service, tasks, image=NEW, configs=frozenset({"index-v2"}), replicas=2, failures=3)


def test_done_when_every_replica_of_the_new_spec_runs_and_no_old_task_is_left():
    seen = judge([task(1, "running"), task(2, "running"), task(3, "shutdown", "shutdown", image=OLD)])
    assert seen.done and [t.id for t in seen.tasks] == ["t1", "t2"]


def test_start_first_an_old_task_still_running_is_not_done_yet():
    seen = judge([task(1, "running"), task(2, "running"), task(3, "running", "shutdown", image=OLD)])
    assert not seen.done and not seen.failure


def test_too_few_replicas_is_under_way():
    seen = judge([task(1, "running"), task(2, "starting")])
    assert not seen.done and not seen.failure and {t.id for t in seen.tasks} == {"t1", "t2"}


def test_a_rollback_is_a_failure_with_the_failed_tasks():
    rolled_back = Service(**{**SERVICE.__dict__, "image": OLD})
    seen = judge([task(1, "failed", "shutdown", error="exit 1"), task(2, "running", image=OLD)], rolled_back)
    assert seen.failure.startswith("Swarm rolled the update back") and [t.id for t in seen.tasks] == ["t1"]


def test_a_crash_loop_fails_after_three_failed_tasks_when_none_runs():
    crashing = [task(n, "failed", "shutdown", error="exit 1") for n in range(3)]
    seen = judge(crashing)
    assert seen.failure == "3 tasks failed" and len(seen.tasks) == 3
    assert not judge([*crashing, task(9, "running")]).failure  # one runs: Swarm is still rolling out
    assert not judge(crashing[:2]).failure
