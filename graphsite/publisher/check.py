"""One check's verdict, the one type `verify`, `deploy` and `doctor` report their checks with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphsite.codes import CheckStatus

__all__ = ["FAIL", "PASS", "SKIP", "WARN", "CheckResult", "CheckStatus"]
PASS, WARN, FAIL, SKIP = CheckStatus.PASS, CheckStatus.WARN, CheckStatus.FAIL, CheckStatus.SKIP


@dataclass(frozen=True)
class CheckResult:
    """A check's name, its status, the evidence it rests on, and, when it is not a pass, the fix (doctor) and the
    seconds it took (verify: None when not timed)."""

    name: str
    status: CheckStatus
    evidence: str
    fix: str = ""
    seconds: float | None = None

    def as_json(self) -> dict[str, Any]:
        timed = {"seconds": round(self.seconds, 3)} if self.seconds is not None else {}
        return {"name": self.name, "status": str(self.status), "evidence": self.evidence, "fix": self.fix, **timed}
