"""Read the dynamic directory into one configuration, as Traefik's file provider does, or say which file and
key stop it: a file that does not parse, breaks Traefik's v3 schema, or leaves the lab's subset."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphsite.publisher.dynamic import Unread, read_directory, schema_problems
from graphsite_lab.traefik import subset

SECTIONS = ("routers", "middlewares", "services")


@dataclass(frozen=True)
class Problem:
    """Why the configuration was rejected: the file, the key path in it, and what is wrong."""

    file: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.key}: {self.message}" if self.key else f"{self.file}: {self.message}"

    def as_json(self) -> dict[str, str]:
        return {"file": self.file, "key": self.key, "message": self.message}


@dataclass(frozen=True)
class Dynamic:
    """The merged http configuration of every file, with where each name came from."""

    routers: dict[str, dict[str, Any]] = field(default_factory=dict)
    middlewares: dict[str, dict[str, Any]] = field(default_factory=dict)
    services: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def file_problems(name: str, data: dict[str, Any] | None, parse_error: str, schema: list[str]) -> list[Problem]:
    """Return the problems of one parsed file: its parse error, schema violations, then subset refusals."""
    if data is None:  # a read that failed (a link to nothing, a FIFO) says so itself
        return [Problem(name, "", parse_error if parse_error.startswith("cannot read") else
                        f"cannot be parsed: {parse_error}")]
    if schema:
        return [Problem(name, *_split(line)) for line in schema]
    return [Problem(name, key, message) for key, message in subset.refusals(data)]


def _split(schema_line: str) -> tuple[str, str]:
    key, _, message = schema_line.partition(": ")
    return key, f"breaks Traefik's v3 schema: {message}"


def merge(documents: list[tuple[str, dict[str, Any]]]) -> Dynamic:
    """Return the documents merged in order: a name defined twice keeps its first definition (Traefik warns
    'already configured, skipping')."""
    merged: dict[str, dict[str, dict[str, Any]]] = {section: {} for section in SECTIONS}
    origin: dict[tuple[str, str], str] = {}
    warnings = []
    for name, data in documents:
        http = data.get("http") or {}
        for section in SECTIONS:
            for item, value in (http.get(section) or {}).items():
                if item in merged[section]:
                    warnings.append(f"{name}: http.{section}.{item} is already defined in "
                                    f"{origin[section, item]}: skipped, as Traefik does")
                    continue
                merged[section][item], origin[section, item] = value, name
    return Dynamic(merged["routers"], merged["middlewares"], merged["services"],
                   tuple(name for name, _ in documents), tuple(warnings))


def load_directory(directory: Path) -> tuple[Dynamic | None, list[Problem]]:
    """Return the directory's merged configuration, or None and every problem that rejects it."""
    documents, problems = [], []
    try:
        read = read_directory(directory)
    except Unread as unread:  # Traefik rejects a directory it cannot read whole, as it does a file
        return None, [Problem(str(unread.path.relative_to(directory)), "", str(unread))]
    for parsed in read:
        name = str(parsed.path.relative_to(directory))
        found = file_problems(name, parsed.data, parsed.error, schema_problems(parsed) if parsed.data is not None
                              else [])
        problems.extend(found)
        if not found and parsed.data is not None:
            documents.append((name, parsed.data))
    return (None, problems) if problems else (merge(documents), [])
