"""Private reports: who may read a deployment, decided as data before anything is made.

A private deployment's route file carries a Traefik `basicAuth` middleware with bcrypt htpasswd lines (and its
service's Caddyfile `basic_auth` with the same lines, for whoever reaches it on the overlay network); the
plain password exists only in this process, is printed once, and is in no file, label, log or service spec.
The service's label `graphsite.access=private` (the Deployment's access) tells `verify` and `list` that a
deployment is meant to be private even when its route file says otherwise.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from graphsite.errors import ConfigError
from graphsite.publisher import caddy, route, route_files

if TYPE_CHECKING:
    from graphsite.publisher.plan import DeployPlan

USER = "reader"
BCRYPT_ROUNDS = 10  # Traefik checks the hash on every request: ~60 ms here at 10, four times that at 12


@dataclass(frozen=True)
class Access:
    """Who may read the deployment: the route's htpasswd lines (none: public), and the credentials this run
    made (only then; a redeploy that keeps them, or --auth-file, knows no password)."""

    users: tuple[str, ...] = ()
    user: str = ""
    password: str = field(default="", repr=False)
    kept: bool = False  # the route's existing credentials were kept

    @property
    def private(self) -> bool:
        return bool(self.users)

    @property
    def credentials(self) -> tuple[str, str] | None:
        return (self.user, self.password) if self.password else None

    def as_json(self) -> dict[str, str] | None:
        """The `access` object of deploy --json: only when this run made the password."""
        return {"user": self.user, "password": self.password} if self.password else None


def hash_line(user: str, password: str, rounds: int = BCRYPT_ROUNDS) -> str:
    """Return the htpasswd line `user:<bcrypt hash>` of `password`."""
    import bcrypt

    return f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=rounds)).decode()}"


def new_credentials(user: str = USER, rounds: int = BCRYPT_ROUNDS) -> Access:
    """Return fresh credentials: a random 128-bit password and its bcrypt line."""
    password = secrets.token_urlsafe(16)
    return Access(users=(hash_line(user, password, rounds),), user=user, password=password)


def read_htpasswd(path: Path) -> tuple[str, ...]:
    """Return the bcrypt lines of an htpasswd file; raise ConfigError naming the file and line otherwise."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--auth-file: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            caddy.account(line)  # the line goes into the service's Caddyfile too: nothing else may reach it
        except ValueError as exc:
            raise ConfigError(f"--auth-file: {path} line {number}: {exc}",
                              hint="make it with `htpasswd -nB USER` (bcrypt; Traefik also reads others, "
                                   f"graphsite accepts only bcrypt), for a user of {caddy.USER_CHARACTERS}") \
                from None
        lines.append(line)
    if not lines:
        raise ConfigError(f"--auth-file: {path} holds no user", hint="make it with `htpasswd -nB USER`")
    return tuple(lines)


def decide_access(route_path: Path, subdomain: str, *, private: bool = False, public: bool = False,
                  auth_file: Path | None = None, new_password: bool = False, was_private: bool = False,
                  read: Callable[[Path], route.RouteDocument | None] = route_files.read_route) -> Access:
    """Return who may read the deployment: --auth-file's users; the existing route's credentials on a redeploy
    (a private report never turns public by omission: --public says so; `was_private`, the service's record,
    keeps it private even when its route file, and so its credentials, are gone); or new credentials. `read`
    reads the route file (the route store's `document`)."""
    if public and (private or auth_file or new_password):
        raise ConfigError("--public cannot be combined with --private, --auth-file or --new-password")
    if public:
        return Access()
    if auth_file is not None:
        return Access(users=read_htpasswd(auth_file))
    existing = route.route_users(read(route_path), subdomain, route_path)  # a failed read stops the deploy
    if existing and not new_password:
        return Access(users=existing, kept=True)
    if private or new_password or was_private:
        return new_credentials()
    return Access()


def mark(plan: DeployPlan, access: Access, route_document: route.RouteDocument | None = None) -> DeployPlan:
    """Return `plan` readable by `access`: the deployment's access (and so the service's label), the service's
    Caddyfile that asks for the users and, when given, the route that asks for them too."""
    return plan.with_access(access.users, plan.route if route_document is None else route_document)
