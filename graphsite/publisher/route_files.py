"""The Traefik route's files: written atomically after the schema check (one unparsable file in the directory
stops Traefik applying any change), read, and removed, with the temporaries a killed write left behind.

The route file and its temporaries are read, judged, written and removed without following a symbolic link
(publisher/files.py): a link named like a route is never graphsite's, and is refused, never replaced."""

from __future__ import annotations

from pathlib import Path

from graphsite.atomic import write_atomic
from graphsite.errors import DeployError
from graphsite.publisher import files
from graphsite.publisher.deployment import Leftover, Stamp
from graphsite.publisher.dynamic import parse_text
from graphsite.publisher.route import RouteDocument, check_route, dump, stamp_in, temporary_name, temporary_owner


def write_route(path: Path, document: RouteDocument, stamp: Stamp | None = None) -> bool:
    """Write the route atomically with mode 0644 after checking it; return False when it was already there.
    A symbolic link at `path` is refused."""
    check_route(document, path)
    text = dump(document, stamp)
    if route_text(path) == text:
        return False
    try:
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        write_atomic(path, text, mode=0o644)
    except OSError as exc:
        raise DeployError(f"{path}: cannot write the route: {exc.strerror or exc}",
                          hint="check deploy.dynamic_dir and its permissions") from None
    return True


def remove_file(path: Path) -> bool:
    """Remove a route file (or a temporary one); return False when it was absent; raise DeployError naming the
    file when the directory refuses, or when it is a symbolic link (graphsite makes none: not its own)."""
    refusal = files.link_refusal(path, "route file")
    if refusal is not None:
        raise refusal
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise DeployError(f"{path}: cannot remove the route: {exc.strerror or exc}",
                          hint="check deploy.dynamic_dir and its permissions, then run the command again") from None
    return True


def read_route(path: Path) -> RouteDocument | None:
    """Return the parsed route file, or None when it is missing, empty, not UTF-8, not a YAML mapping, or a
    symbolic link (never followed); raise DeployError when it could not be read (a private page's credentials
    are read here: a failed read must not make it public)."""
    text = route_text(path, refuse_link=False)
    return parse_text(path, text).data or None if text is not None else None


def route_text(path: Path, *, refuse_link: bool = True) -> str | None:
    """Return the text of the route file at `path`, None when there is none or it is not UTF-8 text; raise
    DeployError when it could not be read, or (with `refuse_link`) when it is a symbolic link (never followed,
    never replaced)."""
    refusal = files.link_refusal(path, "route file") if refuse_link else None
    if refusal is not None:
        raise refusal
    data = files.read_ours(path.parent, path.name, what="the route file")
    try:
        return data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        return None


def route_stamp(path: Path) -> Stamp | None:
    """Return the stamp of the route file at `path` when it has graphsite's shape (only its own routers and
    service, by name) and a leading comment that parses completely, else None (whose it is, is the stamp's
    `claim` to say)."""
    raw = files.read_ours(path.parent, path.name, what="the route file")
    return stamp_in(raw, path.stem) if raw is not None else None


def temporaries(dynamic_dir: Path, domain: str) -> dict[str, dict[Path, Leftover]]:
    """Return {subdomain: {path: leftover}} of the temporary route files a killed write left behind: named after
    the deployment, and stamped by graphsite for it under `domain` (OURS), or still naming no domain (one of
    NEEDS_PROOF: ours only beside a proven resource of the name, as `adopted` says), each read once for its claim
    and its stamp. Another configuration's, on a shared directory, is not one."""
    found: dict[str, dict[Path, Leftover]] = {}
    # iterdir, not glob: a directory that cannot be listed raises (glob says "nothing"), and the caller names it
    for path in sorted(p for p in dynamic_dir.iterdir() if p.name.startswith(".")) if dynamic_dir.is_dir() else ():
        if temporary_name(path.name) is None:
            continue
        data = files.read_ours(dynamic_dir, path.name, what="a temporary route file", limit=1024)
        owner = temporary_owner(path.name, data, domain) if data is not None else None
        if owner is not None:
            found.setdefault(owner[0], {})[path] = owner[1]
    return found
