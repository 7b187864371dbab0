"""Typed outcomes: what a step did to one resource. The printed line and the JSON are made from these, never
parsed back. One vocabulary for every verb, and for `--dry-run` ("would create" where a run says "created")."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Did(StrEnum):
    """What a run did to a resource, or what a dry run says it would do."""

    CREATED = "created"
    UPDATED = "updated"
    REPLACED = "replaced"
    UNCHANGED = "unchanged"
    REMOVED = "removed"
    ABSENT = "absent"
    KEPT = "kept"
    FAILED = "failed"
    WOULD_CREATE = "would create"
    WOULD_UPDATE = "would update"
    WOULD_REPLACE = "would replace"
    WOULD_REMOVE = "would remove"


CREATED, UPDATED, REPLACED, UNCHANGED = Did.CREATED, Did.UPDATED, Did.REPLACED, Did.UNCHANGED
REMOVED, ABSENT, KEPT, FAILED = Did.REMOVED, Did.ABSENT, Did.KEPT, Did.FAILED
# What a dry run says instead (an unchanged resource is unchanged either way).
WOULD = {CREATED: Did.WOULD_CREATE, UPDATED: Did.WOULD_UPDATE, REPLACED: Did.WOULD_REPLACE, REMOVED: Did.WOULD_REMOVE}


@dataclass(frozen=True)
class Outcome:
    """One resource (config, directory, service, route, record, …), its name, and what happened to it."""

    resource: str
    name: str
    outcome: Did
    detail: str = ""

    def planned(self) -> Outcome:
        """Return this outcome in the words of a dry run."""
        return Outcome(self.resource, self.name, WOULD.get(self.outcome, self.outcome), self.detail)

    @property
    def failed(self) -> bool:
        return self.outcome == FAILED

    def line(self) -> str:
        tail = f": {self.detail}" if self.detail else ""
        return f"{self.outcome:9} {self.resource} {self.name}{tail}"

    def as_json(self) -> dict[str, Any]:
        return {"resource": self.resource, "name": self.name, "outcome": str(self.outcome),
                "detail": self.detail or None}
