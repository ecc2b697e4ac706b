"""AKS's Kubernetes minors as data: AKS GA, end of life, and end of long-term support (LTS).

Source, read 2026-11-24: Microsoft Learn, "Supported Kubernetes versions in Azure Kubernetes
Service (AKS)" (https://learn.microsoft.com/azure/aks/supported-kubernetes-versions), tables
"AKS Kubernetes release calendar" (AKS GA, End of life) and "LTS versions" (LTS End of life), read
from its source MicrosoftDocs/azure-aks-docs articles/aks/supported-kubernetes-versions.md at
commit fb060abe6a8fef960d4c487b543bf7b1e97808fe (2026-08-21), the snapshot reviews/aks.md checked.

- The calendar gives months. The page says: "Unless an explicit date is provided, the End of Life
  (EOL) date is the last day of the specified month", so "Nov 2026" is 2026-11-30 (reviews/aks.md
  F1: 1.34 "works until 2026-11-30 and fails after that"). For GA the page gives no day: the table
  counts the 1st of the GA month, an assumption (AKS also rolls a version out region by region,
  up to 10 business days).
- Past its end of life a minor can be created only as LTS: "Non-LTS versions past end of life
  cannot be used to create a cluster"; LTS "needs tier Premium and supportPlan
  AKSLongTermSupport" (reviews/aks.md F1, G14). AKS's "platform support" (N-3) allows no cluster
  creation (the page's FAQ), so it is not counted.
- reviews/aks.md F1 (2026-11-22): "1.32 end of life Mar 2026, 1.33 Jul 2026, 1.34 Nov 2026 (the
  last day of the month), 1.35 Mar 2027, 1.36 Jun 2027, 1.37 GA Oct 2026"; the issue: "AKS 1.37
  today".
"""

from __future__ import annotations

import calendar
from datetime import date

from components.model.lifecycle import MinorRelease, VersionLifecycle

PAGE = (
    "https://learn.microsoft.com/azure/aks/supported-kubernetes-versions "
    "(MicrosoftDocs/azure-aks-docs @fb060abe)"
)
LTS = "AKS LTS (Premium tier, AKSLongTermSupport plan)"


def _month(year: int, month: int) -> date:
    """A GA month: its 1st (the day is not published)."""
    return date(year, month, 1)


def _end_of(year: int, month: int) -> date:
    """An end-of-life month: its last day, as the page defines."""
    return date(year, month, calendar.monthrange(year, month)[1])


def _row(minor: str, ga: date, end_of_life: date, lts_end: date, says: str) -> MinorRelease:
    source = f"{PAGE}: {minor} {says} (GA counted from {ga}; last days {end_of_life}, {lts_end})"
    return MinorRelease(minor, ga, end_of_life, lts_end, LTS, source)


LIFECYCLE = VersionLifecycle(
    cloud="AKS",
    rows=(
        _row(
            "1.30",
            _month(2024, 7),
            date(2025, 8, 22),
            _end_of(2026, 7),
            "LTS table: AKS GA Jul 2024, End of life Aug 22, 2025, LTS End of life Jul 2026",
        ),
        _row(
            "1.31",
            _month(2024, 11),
            date(2025, 11, 1),
            _end_of(2026, 11),
            "LTS table: AKS GA Nov 2024, End of life Nov 1, 2025, LTS End of life Nov 2026",
        ),
        _row(
            "1.32",
            _month(2025, 4),
            _end_of(2026, 3),
            _end_of(2027, 3),
            "calendar: AKS GA Apr 2025, End of life Mar 2026; LTS End of life Mar 2027",
        ),
        _row(
            "1.33",
            _month(2025, 6),
            _end_of(2026, 7),
            _end_of(2027, 7),
            "calendar: AKS GA Jun 2025, End of life Jul 2026; LTS End of life Jul 2027",
        ),
        _row(
            "1.34",
            _month(2025, 11),
            _end_of(2026, 11),
            _end_of(2027, 11),
            "calendar: AKS GA Nov 2025, End of life Nov 2026; LTS End of life Nov 2027",
        ),
        _row(
            "1.35",
            _month(2026, 3),
            _end_of(2027, 3),
            _end_of(2028, 3),
            "calendar: AKS GA Mar 2026, End of life Mar 2027; LTS End of life Mar 2028",
        ),
        _row(
            "1.36",
            _month(2026, 6),
            _end_of(2027, 6),
            _end_of(2028, 6),
            "calendar: AKS GA Jun 2026, End of life Jun 2027; LTS End of life Jun 2028",
        ),
        _row(
            "1.37",
            _month(2026, 10),
            _end_of(2027, 10),
            _end_of(2028, 10),
            "calendar: AKS GA Oct 2026, End of life Oct 2027; LTS End of life Oct 2028",
        ),
    ),
)
