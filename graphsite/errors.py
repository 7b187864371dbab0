"""Errors written for the person at the keyboard: what failed, the detail, the next step. Exit status 1."""

from __future__ import annotations

import click


class GraphsiteError(click.ClickException):
    """A failure the user can act on; click prints it as one `Error: …` line and exits 1."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        if hint:
            message = f"{message}\n  hint: {hint}"
        super().__init__(message)

    def ending_with(self, code: int) -> GraphsiteError:
        """Return this error, ending the command with exit status `code` instead of its class's (click reads
        `exit_code` from the instance; the class declares it as a ClassVar)."""
        vars(self)["exit_code"] = code
        return self


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


class VerifyError(GraphsiteError):
    """A verification check failed."""


class TeardownError(GraphsiteError):
    """Teardown could not remove a resource."""
