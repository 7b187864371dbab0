"""How the publisher's outcomes are shown: progress and human lines on stderr, results on stdout, or one JSON
object with --json. Every line is made from a typed outcome; nothing printed here is ever read back."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from graphsite import output
from graphsite.errors import GraphsiteError

if TYPE_CHECKING:
    from graphsite.publisher.deployment import Deployment
    from graphsite.usecases.deploy import DeployResult
    from graphsite.usecases.gc import GcReport
    from graphsite.usecases.inventory import Holding, Inventory
    from graphsite.usecases.teardown import TeardownReport
    from graphsite.usecases.verify import CheckResult, VerifyReport


class Incomplete(GraphsiteError):
    """The command ran, but what it reports is not all good (exit 1 after the report)."""


def checks(results: list[CheckResult] | tuple[CheckResult, ...]) -> None:
    for check in results:
        output.info(f"  {check.status} {check.name:8} {check.evidence} ({check.seconds:.2f} s)")


def deploy(result: DeployResult, seconds: float, as_json: bool) -> None:
    from graphsite.usecases.verify import PASSWORD_SOURCES

    plan = result.plan
    if result.dry_run:
        output.info(f"Plan for {plan.url} (dry run: nothing was changed):")
    for outcome in result.outcomes:
        output.info(f"  {outcome.line()}")
    if not result.dry_run:
        checks(result.checks)
        unread = "" if result.content_checked else (
            f"; its content was not checked (the kept password is not known here: `graphsite verify "
            f"{plan.subdomain}` with {PASSWORD_SOURCES})")
        output.info(f"Deployed {plan.fqdn} ({plan.sha256[:12]}) in {seconds:.2f} s{unread}")
    _access(result, as_json)
    output.emit_json(result.as_json()) if as_json else output.result(plan.url)


def _access(result: DeployResult, as_json: bool) -> None:
    """Say who may read the page; a password this run made is shown once (stderr, or --json), never logged."""
    access = result.access
    if access.credentials and not result.dry_run and not as_json:
        output.secret(f"Private: user {access.user}, password {access.password} (shown only now: keep it; "
                      "`graphsite deploy --new-password` makes new ones)")
    elif result.dry_run and access.private:
        output.info("Private: " + ("the previous credentials would be kept" if access.kept
                                   else "new credentials would be made and printed once"))
    elif access.kept:
        output.info("Private: the credentials of the previous deploy are kept (--new-password makes new ones)")


def verify(report: VerifyReport, as_json: bool) -> None:
    from graphsite.usecases.verify import UNREAD

    name, failed, older = report.deployment.name, report.failed, not report.deployment.made_by
    output.info(f"{name}: {_maker(report.deployment)}")
    checks(report.checks)
    if as_json:
        output.emit_json(report.as_json())
    unread = "" if report.content_checked else f"; {UNREAD}"
    if failed:
        raise Incomplete(f"{name}: {len(failed)} check(s) failed: {', '.join(failed)}{unread}",
                         hint=_maker(report.deployment) if older else None)
    counts = {status: sum(c.status == status for c in report.checks) for status in ("PASS", "SKIP")}
    skipped = f", {counts['SKIP']} skipped" if counts["SKIP"] else ""
    output.info(f"Verified {name}: {counts['PASS']} passed{skipped}{unread}")


def _maker(deployment: Deployment) -> str:
    """Say which graphsite made `deployment`, and when: what it serves and sends follows that release."""
    from graphsite import __version__

    when = deployment.created or "an unknown time"
    if not deployment.made_by:  # a release before the graphsite.version label
        return (f"made by an older graphsite at {when}; `graphsite deploy [SOURCE] --subdomain {deployment.name}` "
                "brings it up to date")
    this = "" if deployment.made_by == __version__ else f" (this is graphsite {__version__})"
    return f"made by graphsite {deployment.made_by} at {when}{this}"


def teardown(report: TeardownReport, as_json: bool) -> None:
    if as_json:
        output.emit_json(report.as_json())
    else:
        for outcome in report.outcomes:
            output.result(outcome.line())
        output.result(f"page     {report.page}")
    if report.nothing_was_there and report.clean:
        output.info(f"nothing left of {report.name}: every resource was already absent")
    if not report.clean:
        left = ", ".join(report.left) or ("" if report.page_offline else
                                          "the page is still served" if report.page_state == "served"
                                          else f"the page's absence is not proven ({report.page})")
        failed = [o for o in report.outcomes if o.failed]
        what = "; ".join(f"{o.resource} {o.name}: {o.detail}" for o in failed)
        raise Incomplete(f"teardown of {report.name} is not finished" + (f": {what}" if what else "")
                         + (f"; left: {left}" if left else ""),
                         hint=f"run `graphsite teardown {report.name}` again: it removes what is left")
    output.info(f"Tore down {report.name}: nothing is left and the page is no longer served")


def _row(held: Holding, now: datetime) -> tuple[str, ...]:
    from graphsite.usecases.inventory import age

    deployment = held.deployment
    state = held.state(now)
    if state == "partial":
        state = "partial: no " + ", ".join(held.missing()) if held.missing() else "partial: temporary files"
    return (held.fqdn, age(held.created, now) or "-", held.expires or "-",
            (deployment.sha256[:12] if deployment else "") or "-", held.running or "-",
            ",".join(held.nodes) or "-", (deployment.access if deployment else "") or "-", state)


def listing(inventory: Inventory, now: datetime, as_json: bool, *, name: str | None = None) -> None:
    """Show every holding, or with `name` that deployment's. Nothing found for `name` is an answer (exit 0) only
    when every system was read; a system that could not be read ends the command with exit 1 either way."""
    holdings = [h for h in inventory.holdings.values() if not h.empty]  # survey(name=…) holds the name, found or not
    nothing = name is not None and not holdings
    if nothing and not inventory.unreadable:
        output.info(f"nothing deployed for {name}: no system holds a service, config, route, directory or record "
                    "of it")
    if as_json:
        output.emit_json({**({"name": name} if name is not None else {}),
                          "deployments": [_held_json(h, now) for h in holdings],
                          "foreign": [f.as_json() for f in inventory.foreign], "unreadable": inventory.unreadable})
    elif not nothing:
        rows: list[tuple[str, ...]] = [("FQDN", "AGE", "EXPIRES", "SHA256", "REPLICAS", "NODES", "ACCESS", "STATE")]
        rows += [_row(h, now) for h in holdings]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            output.result("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        for held in holdings:
            if held.state(now) == "partial":
                output.info(f"{held.name}: " + ", ".join(f"{kind} {what}" for kind, what in held.resources()))
    if not as_json:
        for foreign in inventory.foreign:  # stamped like graphsite's, but not this configuration's: never touched
            output.info(f"not this configuration's, left alone: {foreign.line()}")
    if inventory.unreadable:
        unread = "; ".join(f"{system}: {why}" for system, why in inventory.unreadable.items())
        again = f"run `graphsite list{f' {name}' if name is not None else ''}` again later"
        if nothing:
            raise Incomplete(f"could not read {unread}; nothing of {name} was found in the other systems, which "
                             "does not prove it has nothing there", hint=again)
        raise Incomplete(f"could not read {unread}", hint=f"what is listed comes from the other systems; {again}")


def _held_json(held: Holding, now: datetime) -> dict:
    from graphsite.usecases.inventory import age

    deployment = held.deployment
    missing = held.missing()
    return {"subdomain": held.name, "fqdn": held.fqdn, "state": held.state(now), "missing": missing,
            "service": deployment is not None, "route": held.route is not None, "record": bool(held.records),
            "created": held.created or None, "expires": held.expires or None, "age": age(held.created, now),
            "sha256": (deployment.sha256 if deployment else "") or None, "replicas": held.running or None,
            "nodes": list(held.nodes), "access": deployment.access if deployment else None,
            "private": bool(deployment and deployment.access == "private"),
            "orphan": f"orphan: no {', '.join(missing)}" if missing else None,
            "expired": held.state(now) == "expired",
            "resources": [{"kind": kind, "name": name} for kind, name in held.resources()]}


def gc(report: GcReport, as_json: bool) -> None:
    if as_json:
        output.emit_json({"dry_run": report.dry_run, "collected": [c.as_json() for c in report.collected],
                          "unreadable": report.unreadable})
    else:
        for item in report.collected:
            output.result(item.line())
        if not report.collected:
            output.info("nothing has expired and nothing was left halfway")
    if not report.ok:
        failed = [c.name for c in report.collected if c.failed]
        parts = [f"{len(failed)} name(s) failed: {', '.join(failed)}"] if failed else []
        parts += [f"could not read {system}: {why}" for system, why in report.unreadable.items()]
        parts += ["nothing was decided or removed: gc acts only on a state every system answered for"] \
            if report.unreadable else []
        raise Incomplete("gc is not finished: " + "; ".join(parts),
                         hint="run `graphsite gc` again; `graphsite teardown NAME` removes one name")
