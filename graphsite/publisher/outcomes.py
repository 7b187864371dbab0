"""Typed outcomes: what a step did to one resource. The printed line and the JSON are made from these, never
parsed back. One vocabulary for every verb, and for `--dry-run` ("would create" where a run says "created")."""

from __future__ import annotations

from dataclasses import dataclass

# What a run did to a resource.
CREATED, UPDATED, REPLACED, UNCHANGED = "created", "updated", "replaced", "unchanged"
REMOVED, ABSENT, KEPT, FAILED = "removed", "absent", "kept", "failed"
# What a dry run says instead (an unchanged resource is unchanged either way).
WOULD = {CREATED: "would create", UPDATED: "would update", REPLACED: "would replace", REMOVED: "would remove"}


@dataclass(frozen=True)
class Outcome:
    """One resource (config, directory, service, route, record, …), its name, and what happened to it."""

    resource: str
    name: str
    outcome: str
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

    def as_json(self) -> dict:
        return {"resource": self.resource, "name": self.name, "outcome": self.outcome,
                "detail": self.detail or None}
