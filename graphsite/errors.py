"""Errors written for the person at the keyboard: what failed, the detail, the next step. Each ends the command
with a status of `codes.Exit` (1 unless it says otherwise). They are not click's: `build` and `links` run without
importing click (commands/words.py), and graphsite/cli.py shows these as it shows click's own."""

from __future__ import annotations

import sys

from graphsite.codes import Exit, stopped_by


class GraphsiteError(Exception):
    """A failure the user can act on; printed as one `Error: …` line (and `hint: …`), or with --json as one
    object holding `error` and `hint` apart."""

    exit_code: int = Exit.FAILED

    def __init__(self, message: str, *, hint: str | None = None, status: int | None = None) -> None:
        self.detail, self.hint = message, hint
        self.message = f"{message}\n  hint: {hint}" if hint else message
        super().__init__(self.message)
        if status is not None:
            self.ending_with(status)

    def ending_with(self, status: int) -> GraphsiteError:
        """Return this error, ending the command with `status` (one of `codes.Exit`, or `stopped_by`) instead of
        its class's."""
        self.exit_code = int(status)
        return self

    def format_message(self) -> str:
        return self.message

    def show(self) -> None:
        """Print the error on stderr, as click prints its own: `Error: <message>`."""
        print(f"Error: {self.message}", file=sys.stderr, flush=True)


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


class ChangedSince(DeployError):
    """A write was refused, nothing written, because what is there is not as the deploy's plan found it (another
    hand made, swapped or removed it since): this run's undo has nothing of its own there."""


class VerifyError(GraphsiteError):
    """A verification check failed."""
