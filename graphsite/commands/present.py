"""How every command's outcome is shown: progress and human lines on stderr, results on stdout, or one JSON
object with --json, a failure included (`error`, `hint`, `status`; `usage` for a usage error). Every line is made
from a typed outcome; nothing printed here is ever read back. The exit status of a failure is decided here, from
the table of `codes.Exit`."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsite import output
from graphsite.codes import CheckStatus, stopped_by
from graphsite.errors import GraphsiteError, Incomplete, LinkCheckError, Stopped

if TYPE_CHECKING:
    from datetime import datetime

    from graphsite.builder.compare import Changes
    from graphsite.citations.results import LinkReport
    from graphsite.publisher.check import CheckResult
    from graphsite.publisher.deployment import Deployment
    from graphsite.usecases.build import BuildOutcome
    from graphsite.usecases.deploy import DeployResult
    from graphsite.usecases.diff import LiveChanges
    from graphsite.usecases.gc import GcReport
    from graphsite.usecases.history import History
    from graphsite.usecases.inventory import Holding, Inventory
    from graphsite.usecases.teardown import TeardownReport
    from graphsite.usecases.verify import VerifyReport

__all__ = ["Incomplete", "failure"]
SHOWN_WARNINGS = 20  # more would bury the build's summary line; -v shows them all, --json lists them all


# --- failures ----------------------------------------------------------------------------------------------------


def run(command: Callable[[], object], *, as_json: bool) -> int:
    """Run `command` (a command's work, its words read); return its exit status: 0, or that of the failure it
    ended with, shown by `failure`; a reader that left (`graphsite links | head`), while the command wrote or
    while its failure was shown, ends it with 1, silently, as click ends it. The one place a command's failure
    becomes its status, whether click read the line or not."""

    def attempt() -> int:
        try:
            command()
        except (GraphsiteError, KeyboardInterrupt, EOFError) as error:
            if not isinstance(error, GraphsiteError):
                print(file=sys.stderr)  # as click does: the blank line closes the terminal's ^C echo
            return failure(error, as_json=as_json)
        return 0

    return unless_reader_left(attempt)


def unless_reader_left(show: Callable[[], int]) -> int:
    """Return the status `show` returns, or 1, silently, when the reader of stdout or stderr has left on the way
    (a closed pipe: `graphsite links --json | head -c 10`): nothing more can reach it, and no traceback."""
    try:
        return show()
    except OSError as error:
        if error.errno != errno.EPIPE:
            raise
        _quiet_closed_pipes()
        return 1


def _quiet_closed_pipes() -> None:
    """Send what is still to be written to a stream whose reader has gone to /dev/null instead, so the flushes of
    the exit do not fail again."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


def failure(error: GraphsiteError | KeyboardInterrupt | EOFError, *, as_json: bool) -> int:
    """Show `error` (a graphsite error, or an interrupt) on stderr and, with `as_json`, as one JSON object on stdout
    unless the command already printed its own (which then holds the failure); return the exit status. click's own
    errors are shown by graphsite/cli.py, through `failure_shown`."""
    if isinstance(error, GraphsiteError):
        status, fields = error.exit_code, _error_fields(error)
        error.show()
    else:
        status, fields = interrupted(error)
        print(f"Error: {fields['error']}", file=sys.stderr, flush=True)
    return failure_shown(status, fields, as_json=as_json)


def failure_shown(status: int, fields: dict[str, Any], *, as_json: bool) -> int:
    """A failure already shown on stderr: with `as_json`, its `fields` as one JSON object on stdout unless the
    command printed its own; return its exit status."""
    if as_json and not output.emitted():
        output.emit_json(fields)
    return status


def interrupted(cause: BaseException | None) -> tuple[int, dict[str, Any]]:
    """Return the exit status and the fields of a run stopped by a signal (`cause` says which; Ctrl-C if it does
    not)."""
    import signal  # only a stopped run needs it: the module builds its Signals enum from every SIG* constant

    signum = getattr(cause, "signum", signal.SIGINT)
    status = stopped_by(signum)
    return status, {"error": f"stopped by {signal.Signals(signum).name}", "hint": None, "status": status}


def _error_fields(error: GraphsiteError) -> dict[str, Any]:
    return {"error": error.detail, "hint": error.hint, "status": error.exit_code}


def _answer(data: dict[str, Any], as_json: bool, problem: GraphsiteError | None = None) -> None:
    """Print `data` as the command's one JSON object (with `problem`'s fields), then raise `problem` if any."""
    if as_json:
        output.emit_json({**data, **_error_fields(problem)} if problem else data)
    if problem:
        raise problem


# --- build, links ------------------------------------------------------------------------------------------------


def build_summary(outcome: BuildOutcome) -> None:
    """The build's warnings and its one-line summary, on stderr."""
    if output.verbosity() < 0:  # -q shows none of it: nothing is counted
        return
    shown = hidden = 0
    for warning in outcome.warnings:
        where = f"line {warning['line']}: " if warning["line"] else ""
        text = f"{where}{warning['code']}: {warning['message']}"
        if warning.get("accepted"):
            output.detail(f"{text} (accepted: {warning['accepted']})")
        elif shown < SHOWN_WARNINGS:
            output.warn(text)
            shown += 1
        else:
            output.detail(text)
            hidden += 1
    if hidden:
        output.warn(f"… and {hidden} more (-v shows them, --json lists them)")
    summary = outcome.counts
    counts = summary["citations"]
    output.info(f"Built {outcome.path} ({summary['bytes'] / 1024:.0f} KB) in {outcome.seconds:.2f} s: "
                f"{summary['sections']} sections, {counts['inline']} citations, {counts['references']} "
                f"references, {counts['unique_urls']} unique outbound URLs")
    if outcome.changes is not None:
        output.info(f"Changes since the previous version: {changes_summary(outcome.changes)}"
                    + _noted(outcome.changes, outcome.page.report.changes is not None))


def changes_summary(changes: Changes) -> str:
    """Return what a version changes in one line: sections added, removed, rewritten, citations, references,
    front matter (the detail is `graphsite diff`'s)."""
    if not changes.changed:
        return "none (the same sections, words, citations, references and front matter)"
    kinds = [change.change for change in changes.sections]
    parts = [f"{_many(kinds.count(kind), 'section')} {kind}" for kind in ("added", "removed", "rewritten")
             if kind in kinds]
    if changes.citations:
        parts.append(f"citations changed in {_many(len(changes.citations), 'section')}")
    references = {"added": changes.references_added, "removed": changes.references_removed,
                  "changed": changes.references_changed}
    parts += [f"{_many(len(found), 'reference')} {kind}" for kind, found in references.items() if found]
    if changes.front:
        parts.append(f"front matter: {', '.join(change.field for change in changes.front)}")
    return "; ".join(parts)


def _many(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def changes_json(changes: Changes, noted: bool) -> dict[str, Any]:
    """Return the summary of what a version changes (its counts; `graphsite diff --json` gives the detail)."""
    kinds = [change.change for change in changes.sections]
    return {"known": True, "changed": changes.changed, "noted": noted,
            "since": dict(changes.old.front).get("date") or None,
            "sections": {kind: kinds.count(kind) for kind in ("added", "removed", "rewritten")},
            "citations": len(changes.citations),
            "references": {"added": len(changes.references_added), "removed": len(changes.references_removed),
                           "changed": len(changes.references_changed)},
            "front_matter": [change.field for change in changes.front]}


def build(outcome: BuildOutcome, as_json: bool, *, links: LinkReport | None = None,
          fail_on: Sequence[str] = ()) -> None:
    """The build's JSON object (with the link check's, when it ran), and the link table; raise when a link
    failed."""
    problem = None if links is None else _links_table(links, fail_on, as_json)
    if not as_json:  # the object is made for --json only: build_summary showed the build's lines
        if problem:
            raise problem
        return
    summary = outcome.summary()
    if outcome.changes is not None:
        summary["changes"] = changes_json(outcome.changes, outcome.page.report.changes is not None)
    if links is not None:
        summary["links"] = links.as_dict()
    _answer(summary, as_json, problem)


def printed(pdf: Path) -> None:
    output.info(f"Printed {pdf} ({pdf.stat().st_size / 1024:.0f} KB)")


def links(report: LinkReport, fail_on: Sequence[str], as_json: bool) -> None:
    """The link table on stdout (on stderr with --json, which prints the report's object); raise LinkCheckError
    (exit 1) when a link ends in a state of `fail_on`, Stopped (128 + n) when signal n stopped the run."""
    _answer(report.as_dict(), as_json, _links_table(report, fail_on, as_json))


def _links_table(report: LinkReport, fail_on: Sequence[str], as_json: bool) -> GraphsiteError | None:
    """Print the link check's warnings and its table; return what fails the command, if anything does."""
    from graphsite.citations.console import render_summary, where

    for warning in report.warnings:
        output.warn(warning)
    local = [r for r in report.results if r.state == "local"]
    if local:
        first = local[0]
        output.warn(f"{len(local)} relative link(s) will not work on the published page (one index.html): first "
                    f"{first.url}{where(first)}: {first.detail}")
    every_link = output.verbosity() >= 1
    if as_json:
        output.info(render_summary(report, every_link=every_link,
                                   colour=output.colour_on(sys.stderr)))
    else:
        output.result(render_summary(report, every_link=every_link))
    if report.partial:
        import signal

        done = sum(1 for r in report.results if r.state != "unchecked")
        return Stopped(f"stopped by {report.stopped_by}: {done} of {len(report.results)} links have a verdict "
                       "(partial results; the verdicts reached are in the link cache)",
                       signum=signal.Signals[report.stopped_by].value)
    failing = report.failing(fail_on)
    if not failing:
        return None
    first = failing[0]
    return LinkCheckError(f"{len(failing)} link(s) {'/'.join(fail_on)}: first {first.url}{where(first)} "
                          f"({first.detail})",
                          hint="fix or replace the link in the report, or add its prefix to links.skip")


# --- new, serve, config, doctor ----------------------------------------------------------------------------------


def new(path: Path, as_json: bool) -> None:
    output.info(f"Wrote {path}. Preview it with `graphsite serve {path}`; "
                f"build it with `graphsite build {path} --strict`.")
    output.emit_json({"path": str(path)}) if as_json else output.result(str(path))


def serving(source: Path, url: str, as_json: bool) -> None:
    """Say where the preview is served (the one JSON object, with --json: printed before serving starts)."""
    output.info(f"Serving {source} on {url} (rebuilt on change; Ctrl-C stops)")
    output.emit_json({"source": str(source), "url": url}) if as_json else output.result(url)


def serve_stopped() -> None:
    output.info("Stopped.")


def config_show(data: dict[str, Any], lines: Iterable[str], as_json: bool) -> None:
    """The effective configuration: `data` with --json, else `lines` (TOML with comments)."""
    if as_json:
        output.emit_json(data)
        return
    for line in lines:
        output.result(line)


def schema(text: str) -> None:
    """The JSON Schema of graphsite.toml, byte for byte as checked in."""
    sys.stdout.write(text)
    sys.stdout.flush()


def doctor(results: Sequence[CheckResult], config_file: Path | None, as_json: bool) -> None:
    """Every check with its evidence and fix, the counts; raise Incomplete (exit 1) on any FAIL."""
    for check in results:
        output.info(f"  {check.status} {check.name:20} {check.evidence}")
        if check.fix:
            output.info(f"       {'':20} fix: {check.fix}")
    failed = [c.name for c in results if c.status == CheckStatus.FAIL]
    counts = _counts(results)
    output.info(", ".join(f"{n} {s}" for s, n in counts.items() if n) + f" ({config_file or 'built-in defaults'})")
    problem = Incomplete(f"{len(failed)} check(s) failed: {', '.join(failed)}",
                         hint="each FAIL above says the fix; nothing was changed") if failed else None
    _answer({"ok": not failed, "config": str(config_file or ""),
             "checks": [c.as_json() for c in results]}, as_json, problem)


def _counts(results: Iterable[CheckResult]) -> dict[CheckStatus, int]:
    results = tuple(results)
    return {status: sum(c.status == status for c in results) for status in CheckStatus}


# --- the publisher -----------------------------------------------------------------------------------------------


def checks(results: Sequence[CheckResult]) -> None:
    for check in results:
        took = f" ({check.seconds:.2f} s)" if check.seconds is not None else ""
        output.info(f"  {check.status} {check.name:8} {check.evidence}{took}")


def deploy(result: DeployResult, seconds: float, as_json: bool, *, verb: str = "Deployed") -> None:
    from graphsite.usecases.verify import PASSWORD_SOURCES

    plan = result.plan
    if result.dry_run:
        output.info(f"Plan for {plan.url} (dry run: nothing was changed):")
    if result.changes is not None:
        output.info(_live_changes_line(result.changes))
    for outcome in result.outcomes:
        output.info(f"  {outcome.line()}")
    if not result.dry_run:
        checks(result.checks)
        unread = "" if result.content_checked else (
            f"; its content was not checked (the kept password is not known here: `graphsite verify "
            f"{plan.subdomain}` with {PASSWORD_SOURCES})")
        output.info(f"{verb} {plan.fqdn} ({plan.sha256[:12]}) in {seconds:.2f} s{unread}")
    _access(result, as_json)
    if as_json:
        output.emit_json({**result.as_json(), "changes": _live_changes_json(result.changes)})
    else:
        output.result(plan.url)


def _live_changes_line(live: LiveChanges) -> str:
    """Say what the new version changes against the live one, or, in one line, why that is unknown."""
    if live.changes is None:
        return f"Changes against the live page: unknown ({live.unknown}); the page carries no note"
    return f"Changes against the live page: {changes_summary(live.changes)}{_noted(live.changes, live.noted)}"


def _noted(changes: Changes, noted: bool) -> str:
    if not noted:
        return ""
    return "; the page notes them" if changes.changed else "; the page keeps the note the previous one had"


def _live_changes_json(live: LiveChanges | None) -> dict[str, Any] | None:
    if live is None:  # a first deploy: there is nothing to compare with
        return None
    if live.changes is None:
        return {"known": False, "unknown": live.unknown, "noted": False}
    return changes_json(live.changes, live.noted)


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
    unread = "" if report.content_checked else f"; {UNREAD}"
    problem = Incomplete(f"{name}: {len(failed)} check(s) failed: {', '.join(failed)}{unread}",
                         hint=_maker(report.deployment) if older else None) if failed else None
    if not failed:
        counts = _counts(report.checks)
        skipped = f", {counts[CheckStatus.SKIP]} skipped" if counts[CheckStatus.SKIP] else ""
        output.info(f"Verified {name}: {counts[CheckStatus.PASS]} passed{skipped}{unread}")
    _answer(report.as_json(), as_json, problem)


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
    from graphsite.publisher.outcomes import KEPT

    if not as_json:
        for outcome in report.outcomes:
            output.result(outcome.line())
        output.result(f"page     {report.page}")
    if report.nothing_was_there and report.clean:
        output.info(f"nothing left of {report.name}: every resource was already absent")
    problem = None
    if not report.clean:
        left = ", ".join(report.left) or ("" if report.page_offline else
                                          "the page is still served" if report.page_state == "served"
                                          else f"the page's absence is not proven ({report.page})")
        failed = [o for o in report.outcomes if o.failed]
        what = "; ".join(f"{o.resource} {o.name}: {o.detail}" for o in failed)
        problem = Incomplete(f"teardown of {report.name} is not finished" + (f": {what}" if what else "")
                             + (f"; left: {left}" if left else ""),
                             hint=f"run `graphsite teardown {report.name}` again: it removes what is left")
    else:
        output.info(f"Tore down {report.name}: nothing is left and the page is no longer served")
    for kept in (o for o in report.outcomes if o.outcome == KEPT):  # not proven its own: left, and said so
        output.info(f"kept {kept.resource} {kept.name}: graphsite cannot prove it is {report.name}'s; it is left "
                    "as it is")
    _answer(report.as_json(), as_json, problem)


def history(found: History, as_json: bool) -> None:
    """Show the versions newest first, the live one marked; the page configs not proven this deployment's apart.
    A name with nothing at all is an answer (exit 0): Swarm was read."""
    if found.empty:
        output.info(f"nothing deployed for {found.name}: Swarm holds no service or page config of it")
    if not as_json:
        from graphsite.publisher.versions import version_url

        for version in found.found.versions:
            mark = "live" if version.live else "    "
            when = output.shown(version.deployed[:19] + "Z") if version.deployed else "-"
            made = output.shown(version.made_by) if version.made_by else "-"
            said = " ".join(part for part in (repr(version.title) if version.title else "", output.shown(version.date))
                            if part)
            output.result(f"{mark} {version.short}  {when}  graphsite {made}  {said or '-'}  "
                          f"{version_url(found.fqdn, version.sha256)}")
        for unproven in found.found.unproven:
            output.info(f"not counted, left alone: config {output.shown(unproven.config)}: "
                        f"{output.shown(unproven.why)}")
        if found.deployment is not None and found.found.live is None:
            output.info(f"the live page ({found.deployment.sha256[:12]}) is no kept version: a deploy of this "
                        "release keeps it")
    if as_json:
        output.emit_json(found.as_json())


def _row(held: Holding, now: datetime) -> tuple[str, ...]:
    from graphsite.usecases.inventory import age

    deployment = held.deployment
    state = held.state(now)
    if state == "partial":
        unproven, absent = _unproven_and_absent(held)
        parts = ([f"no {', '.join(absent)}"] if absent else []) + ([f"{', '.join(unproven)} not proven"] if unproven
                                                                   else [])
        state = "partial: " + "; ".join(parts) if parts else "partial: temporary files"
    return (held.fqdn, age(held.created, now) or "unknown", held.expires or "-",
            (deployment.sha256[:12] if deployment else "") or "-", held.running or "-",
            ",".join(held.nodes) or "-", (deployment.access if deployment else "") or "-",
            "?" if held.versions is None else str(held.versions), state)


def _unproven_and_absent(held: Holding) -> tuple[list[str], list[str]]:
    """Return the parts of `held` that are occupied (there, but not proven its own: never called missing) and the
    parts it misses."""
    unproven = sorted({f.kind for f in held.occupied})
    return unproven, [m for m in held.missing() if m not in unproven]


def listing(inventory: Inventory, now: datetime, as_json: bool, *, name: str | None = None) -> None:
    """Show every holding, or with `name` that deployment's. Nothing found for `name` is an answer (exit 0) only
    when every system was read; a system that could not be read ends the command with exit 1 either way."""
    holdings = [h for h in inventory.holdings.values() if not h.empty]  # survey(name=…) holds the name, found or not
    nothing = name is not None and not holdings
    if nothing and not inventory.unreadable:
        output.info(f"nothing deployed for {name}: no system holds a service, config, route, directory or record "
                    "of it")
    if not as_json and not nothing:
        rows: list[tuple[str, ...]] = [("FQDN", "AGE", "EXPIRES", "SHA256", "REPLICAS", "NODES", "ACCESS", "VERSIONS",
                                         "STATE")]
        rows += [_row(h, now) for h in holdings]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            output.result("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        for held in holdings:
            if held.state(now) == "partial":
                output.info(f"{held.name}: " + ", ".join(f"{kind} {what}" for kind, what in held.resources()))
            if held.versions_unknown:
                output.info(f"{held.name}: versions ?: {held.versions_unknown}")
    if not as_json:
        for foreign in inventory.foreign:  # stamped like graphsite's, but not this configuration's: never touched
            output.info(f"not this configuration's, left alone: {foreign.line()}")
    _answer({**({"name": name} if name is not None else {}), "deployments": [_held_json(h, now) for h in holdings],
             "foreign": [f.as_json() for f in inventory.foreign], "unreadable": inventory.unreadable}, as_json,
            _unread(inventory, name, nothing))


def _unread(inventory: Inventory, name: str | None, nothing: bool) -> Incomplete | None:
    """Return the failure of a listing some system of which could not be read, None when every one was."""
    if not inventory.unreadable:
        return None
    unread = "; ".join(f"{system}: {why}" for system, why in inventory.unreadable.items())
    again = f"run `graphsite list{f' {name}' if name is not None else ''}` again later"
    if nothing:
        return Incomplete(f"could not read {unread}; nothing of {name} was found in the other systems, which "
                          "does not prove it has nothing there", hint=again)
    return Incomplete(f"could not read {unread}", hint=f"what is listed comes from the other systems; {again}")


def _held_json(held: Holding, now: datetime) -> dict[str, Any]:
    from graphsite.usecases.inventory import age

    deployment = held.deployment
    unproven, missing = _unproven_and_absent(held)

    def found(kind: str, there: bool) -> bool | None:  # an occupied part is neither held nor absent: unknown
        return None if kind in unproven else there

    return {"subdomain": held.name, "fqdn": held.fqdn, "state": held.state(now), "missing": missing,
            "service": deployment is not None, "route": found("route", held.route is not None),
            "record": found("record", bool(held.records)),
            "created": held.created or None, "expires": held.expires or None, "age": age(held.created, now) or None,
            "sha256": (deployment.sha256 if deployment else "") or None, "replicas": held.running or None,
            "nodes": list(held.nodes), "access": deployment.access if deployment else None,
            "private": bool(deployment and deployment.access == "private"),
            "orphan": f"orphan: no {', '.join(missing)}" if missing else None,
            "expired": held.state(now) == "expired", "versions": held.versions,
            "occupied": [f.as_json() for f in held.occupied],
            "versions_unknown": held.versions_unknown or None,
            "resources": [{"kind": kind, "name": name} for kind, name in held.resources()]}


def gc(report: GcReport, as_json: bool) -> None:
    if not as_json:
        for item in report.collected:
            output.result(item.line())
        if not report.collected:
            output.info("nothing has expired and nothing was left halfway")
    for path, why in report.locks_left:
        output.warn(f"left in the lock directory: {output.shown(str(path))}: {output.shown(why)}")
    problem = None
    if not report.ok:
        failed = [c.name for c in report.collected if c.failed]
        parts = [f"{len(failed)} name(s) failed: {', '.join(failed)}"] if failed else []
        parts += [f"could not read {system}: {why}" for system, why in report.unreadable.items()]
        parts += ["nothing was decided or removed: gc acts only on a state every system answered for"] \
            if report.unreadable else []
        problem = Incomplete("gc is not finished: " + "; ".join(parts),
                             hint="run `graphsite gc` again; `graphsite teardown NAME` removes one name")
    _answer({"dry_run": report.dry_run, "collected": [c.as_json() for c in report.collected],
             "unreadable": report.unreadable,
             "locks_left": [{"path": str(path), "why": why} for path, why in report.locks_left]}, as_json, problem)


def diff(found: Changes, old: str, new: str, as_json: bool) -> None:
    """One line per change on stdout (a heading on stderr), or one JSON object with --json."""
    if as_json:
        output.emit_json({"old_source": old, "new_source": new, **found.as_json()})
    elif not found.changed:
        output.result(f"No changes from {old} to {new}: the same sections, words, citations, references and "
                      "front matter")
    else:
        output.info(f"Changes from {old} ({found.old.words} words) to {new} ({found.new.words} words):")
        for line in found.lines():
            output.result(line)
