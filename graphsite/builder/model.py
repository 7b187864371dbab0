"""The report model: what the Markdown says, as typed values the renderer and the checks share."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from graphsite.values import frozen

if TYPE_CHECKING:
    from graphsite.builder.compare import Changes
    from graphsite.config import Acceptance


@frozen
class Card:
    """One floor of the ladder, as the page's card grid shows it."""

    label: str
    year: str
    title: str
    definition: str
    critique: tuple[str, ...] = ()


@frozen
class CounterFrame:
    quote: str
    who: str
    where: str = ""
    date: str = ""


@frozen
class FrontMatter:
    """What the page top shows. Every field is optional: plain Markdown has none of it."""

    title: str = ""
    badge: str = ""
    kicker: str = ""
    headline: str = ""
    lede: str = ""
    prefix: str = ""
    floors: tuple[Card, ...] = ()
    counter_frame: CounterFrame | None = None
    rules: tuple[str, ...] = ()
    description: str = ""  # the meta description the author gave (description / abstract / summary)
    authors: tuple[str, ...] = ()  # the byline (author / authors)
    date: str = ""
    # the findings the report's author accepts, as `[[citations.accept]]` does: the report carries them wherever it
    # is built (the configuration's are added to them)
    accept: tuple[Acceptance, ...] = ()


@frozen
class InlineCitation:
    """One `[[N](URL)]` in the body: the number, the URL as written, its Markdown line (1-based, in the file)."""

    number: int
    url: str
    line: int
    section_id: str = ""


@frozen
class Reference:
    """One entry of the reference list: `N. Title … URL`."""

    number: int
    url: str
    title: str
    line: int
    group: str = ""  # the `###` heading the entry sits under in the reference list, if any


@frozen
class SourceCheck:
    """A live link check's verdict on one URL, as the page words it (graphsite/build.py maps the checker's
    result to it: the builder never imports the checks)."""

    state: str  # a state of graphsite.codes.LINK_STATES
    status: int | None = None  # the last HTTP status, when an answer came
    checked_at: float = 0.0  # seconds since the epoch (UTC) of the verdict; 0 when never asked
    bot_check: bool = False  # blocked by a bot wall's challenge, not only refused


@frozen
class SourceChecks:
    """Every checked URL of a page (keyed by the URL as the page links it) and when the run ended."""

    verdicts: tuple[tuple[str, SourceCheck], ...]
    checked_at: float


@frozen
class Finding:
    """A warning with a stable code (e.g. `citation-mismatch`), shown by build and listed in --json."""

    code: str
    message: str
    line: int | None = None
    number: int | None = None
    accepted: str = ""  # the reason from [citations].accept, when the author accepted it


@frozen
class Section:
    """One section (`##`, or `#` in a report sectioned with `#`): its §N, title, id, summary and detail (HTML)."""

    index: str
    title: str
    id: str
    summary_html: str
    detail_html: str
    sources: tuple[int, ...] = ()
    line: int = 0
    title_html: str = ""  # the title as inline HTML (code spans, emphasis), sanitised
    outline: tuple[tuple[str, str], ...] = ()  # (id, text) of its `###` subsections, in order


@frozen
class Report:
    path: Path
    front: FrontMatter
    title: str
    sections: tuple[Section, ...]
    subtitle: str = ""  # the document's own `# H1` when the front matter's title is a different one
    title_id: str = ""  # the id of the `#` heading that titles the report (on the subtitle, else the <h1>)
    citations: tuple[InlineCitation, ...] = ()
    references: tuple[Reference, ...] = ()
    links: tuple[str, ...] = ()  # every outbound http(s) URL of the page (links and images), in order of first use
    images: tuple[str, ...] = ()  # the http(s) images among them (the page loads these from other sites)
    findings: tuple[Finding, ...] = field(default=())
    intro_html: str = ""  # what comes before the first `##` section (the first `#` heading excluded)
    notes_html: str = ""  # the footnotes (`[^1]`), rendered as one list
    references_id: str = ""  # id of the reference list section ("" when the report has none)
    references_title: str = ""
    references_intro_html: str = ""  # the reference section's own text before its first list
    references_after_html: str = ""  # ... and after it (a closing remark)
    anchors: tuple[tuple[str, str], ...] = ()  # (heading number, heading id), e.g. ("3.2", "32-the-seven…")
    warnings: tuple[Finding, ...] = ()  # build warnings that are not citation findings
    written_links: tuple[tuple[str, int], ...] = ()  # (href as the author wrote it, file line), in body order
    heading_ids: tuple[str, ...] = ()  # the id of every heading of the body, in order
    raw_ids: tuple[str, ...] = ()  # the ids and <a name>s of the body's raw HTML that the page keeps
    checks: SourceChecks | None = None  # the live link check's verdicts (build --check-links), else None
    note_ids: tuple[str, ...] = ()  # the footnotes' ids and their references' (`fn1`, `fnref1`, `fnref1:1`)
    changes: Changes | None = None  # the changes its "Changed since" note shows (None: the page shows no note)

    def anchor(self, number: str) -> str:
        """Return the id of the heading numbered `number` ("3.2"), or ""."""
        return next((target for key, target in self.anchors if key == number), "")
