"""The TLS context https links are verified with: made once a run, in a thread of its own, from the moment the run
knows it will ask an https URL, so that the first https request does not wait for it.

Making the context reads a CA bundle of about 150 certificates: 20 ms of CPU, and finding certifi's bundle through
`import certifi` imports importlib.resources for another 10 ms. Both came at the first https connection, on the
event loop's thread, while every other request waited. Now the bundle's path is found without importing certifi,
and OpenSSL reads it while the main thread imports asyncio and starts the first requests (reading it lets go of
the interpreter's lock).
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from graphsite.paths import expand_user
from graphsite.trust import bundle_context

if TYPE_CHECKING:
    import ssl


class TrustError(Exception):
    """The CA bundle cannot be read: no https link can be verified, so the run cannot go on (not a link's verdict:
    every https link would be `dead` for a reason that is not theirs)."""


def start(ca_bundle: str = "") -> concurrent.futures.Future[ssl.SSLContext]:
    """Return the TLS context to come: verified against `ca_bundle` (links.ca_bundle, `~` expanded), else certifi's
    bundle, else the system's.
    A bundle that cannot be read is the future's exception (TrustError, naming links.ca_bundle and the file),
    raised where it is awaited, on the connection that needed it."""
    future: concurrent.futures.Future[ssl.SSLContext] = concurrent.futures.Future()
    future.set_running_or_notify_cancel()  # running from now on: it cannot be cancelled, only set
    threading.Thread(target=_make, args=(future, ca_bundle), name="graphsite-tls", daemon=True).start()
    return future


def _make(future: concurrent.futures.Future[ssl.SSLContext], ca_bundle: str) -> None:
    try:
        import ssl

        given = expand_user(ca_bundle) if ca_bundle else None
        if ca_bundle and given is None:
            raise TrustError(f"links.ca_bundle: {ca_bundle!r} is under a home directory, and this user has none; "
                             "no https link can be verified")
        bundle = str(given) if given else _certifi_bundle()
        try:  # a bundle the configuration's check read is not read again (graphsite/trust.py)
            context = bundle_context(bundle) if bundle else ssl.create_default_context()
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError: a file that holds no certificate
            why = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
            whose = "the CA bundle" if ca_bundle else "it is empty, and certifi's CA bundle"
            raise TrustError(f"links.ca_bundle: {whose} {bundle or 'of the system'} cannot be read ({why}); no "
                             "https link can be verified") from None
        future.set_result(context)
    except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits the context
        future.set_exception(exc)


def _certifi_bundle() -> str | None:
    """Return the path of certifi's CA bundle (what certifi.where() names), None without certifi: then the system's
    trust store is used. Found from the package's location, without running the package."""
    try:
        spec = importlib.util.find_spec("certifi")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for location in spec.submodule_search_locations or ():
        bundle = Path(location) / "cacert.pem"
        if bundle.is_file():
            return str(bundle)
    try:  # an installation that keeps its files elsewhere (a zip): certifi knows where
        import certifi
    except ImportError:
        return None
    return str(certifi.where())
