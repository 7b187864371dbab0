"""The page a deployment serves, read as its readers get it: its public https URL, connected and verified the way
`verify`'s public check does (verify.resolve_https, verify.ca_bundle). Needs no Docker and no Cloudflare token, so
a reviewer or a CI job can ask what a deployment serves with only graphsite.toml."""

from __future__ import annotations

from graphsite.config import PASSWORD_ENV, Config
from graphsite.errors import VerifyError
from graphsite.publisher import probe


def served_page(config: Config, fqdn: str, credentials: tuple[str, str] | None = None) -> str:
    """Return the HTML `https://FQDN/` answers with (HTTP 200, UTF-8); raise VerifyError for anything else: no
    answer, another status, a private page without `credentials`, or a body that is not UTF-8."""
    answer = probe.fetch("https", fqdn, config.verify.resolve_https, ca_bundle=config.verify.ca_bundle,
                   auth=credentials, timeout=15.0)
    if answer.error:
        raise VerifyError(f"{answer.url}: cannot read the live page: {answer.error}",
                          hint="see `graphsite verify` for what is wrong with the deployment")
    if answer.status == 401 and credentials is None:
        raise VerifyError(f"{answer.url}: HTTP 401: the page is private and no password was given",
                          hint=f"set {PASSWORD_ENV} to its password")
    if answer.status != 200:
        raise VerifyError(f"{answer.url}: HTTP {answer.status}, not the page",
                          hint="see `graphsite list` for what is deployed, `graphsite verify NAME` for its state")
    try:
        return answer.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise VerifyError(f"{answer.url}: the answer is not UTF-8 ({exc.reason} at byte {exc.start}), so not a "
                          "page graphsite built") from None
