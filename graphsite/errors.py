"""Errors written for the person at the keyboard: what failed, the detail, the next step. Each ends the command
with a status of `codes.Exit` (1 unless it says otherwise)."""

from __future__ import annotations

import click

from graphsite.codes import Exit, stopped_by


class GraphsiteError(click.ClickException):
    """A failure the user can act on; printed as one `Error: …` line (and `hint: …`), or with --json as one
    object holding `error` and `hint` apart."""

    exit_code = Exit.FAILED

    def __init__(self, message: str, *, hint: str | None = None, status: int | None = None) -> None:
        self.detail, self.hint = message, hint
        super().__init__(f"{message}\n  hint: {hint}" if hint else message)
        if status is not None:
            self.ending_with(status)

    def ending_with(self, status: int) -> GraphsiteError:
        """Return this error, ending the command with `status` (one of `codes.Exit`, or `stopped_by`) instead of
        its class's (click reads `exit_code` from the instance; the class declares it as a ClassVar)."""
        vars(self)["exit_code"] = int(status)
        return self


class Incomplete(GraphsiteError):
    """The command ran, but what it reports is not all good (exit 1 after the report)."""


class Stopped(GraphsiteError):
    """A signal stopped the run: exit 128 + its number."""

    def __init__(self, message: str, *, signum: int, hint: str | None = None) -> None:
        import signal  # only a stopped run needs it: the module builds its Signals enum at import

        super().__init__(message, hint=hint, status=stopped_by(signum))
        self.signal_name = signal.Signals(signum).name


class ConfigError(GraphsiteError):
    """The configuration (graphsite.toml, environment, flags) is invalid."""


class BuildError(GraphsiteError):
    """The report cannot be read or rendered."""


class SourceError(BuildError):
    """The Markdown source is missing, unreadable, or its front matter is malformed."""

    def __init__(self, path: object, message: str, *, line: int | None = None, hint: str | None = None):
        where = f"{path}:{line}" if line else f"{path}"
        super().__init__(f"{where}: {message}", hint=hint)


class CitationError(BuildError):
    """A strict build found citation problems."""


class LinkCheckError(GraphsiteError):
    """The live link check could not run or found dead links."""


class DeployError(GraphsiteError):
    """A deploy step failed."""


class UnknownVersions(DeployError):
    """What a bind directory keeps was not read because what is there is not the deployment's (a link, a file
    where the directory or its v/ should be): its versions are unknown, not none. A read that failed is a
    DeployError, not this."""


class VerifyError(GraphsiteError):
    """A verification check failed."""
