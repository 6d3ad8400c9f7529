"""The migration report: one line per old node or edge saying what it became, what was not mapped and why.

Kinds: `mapped` (what became what), `unmapped` (information with no equivalent, and why), `warning`
(mapped, but the meaning may differ) and `error` (the old graph breaks a rule: nothing is written).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Kind = Literal["mapped", "unmapped", "warning", "error"]
SECTIONS: tuple[tuple[Kind, str], ...] = (
    ("error", "Errors (nothing was converted)"),
    ("mapped", "Converted"),
    ("unmapped", "Not mapped"),
    ("warning", "Warnings"),
)


@dataclass(frozen=True)
class ReportLine:
    kind: Kind
    where: str  # "node a1 (agent)", "edge e3", or "graph"
    text: str

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


@dataclass
class MigrationReport:
    lines: list[ReportLine] = field(default_factory=list)

    def add(self, kind: Kind, where: str, text: str) -> None:
        self.lines.append(ReportLine(kind, where, text))

    def of(self, kind: Kind) -> list[ReportLine]:
        return [line for line in self.lines if line.kind == kind]

    @property
    def ok(self) -> bool:
        return not self.of("error")

    def text(self) -> str:
        """The report as readable text, one section per kind (empty sections left out)."""
        parts = []
        for kind, title in SECTIONS:
            lines = self.of(kind)
            if lines:
                parts.append(f"{title} ({len(lines)}):\n" + "\n".join(f"  {line}" for line in lines))
        return "\n".join(parts)

    def to_dict(self) -> dict[str, list[dict[str, str]]]:
        return {kind: [asdict(line) for line in self.of(kind)] for kind, _ in SECTIONS}
