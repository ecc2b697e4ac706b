"""GKE's Kubernetes minors as data: GA in the Regular channel, end of standard and extended support.

`released` is the minor's availability in the Regular channel: gpufleet enrolls clusters in
REGULAR by default (`gcp.releaseChannel`, components/gcp/model/config.py), and GKE counts a minor's
support from that date ("GKE provides up to a total of 24 months of support for a minor version
after the version has been made available for new cluster creation in the Regular channel",
https://cloud.google.com/kubernetes-engine/versioning).

Sources, read 2026-11-24:
- Regular availability and end of standard support: GKE's release schedule
  (https://cloud.google.com/kubernetes-engine/docs/release-schedule). The stored copies of that
  page reachable from here end before its table, so the dates are taken from endoflife.date's
  transcription of it: github.com/endoflife-date/endoflife.date, products/google-kubernetes-engine.md
  at commit a70eca337600e7d721dc48112c271f98661d208b (2026-08-22), whose header says
  "releaseDate = availability date of the Regular release channel, eol = End of standard support".
  GKE publishes these as dates; the table takes each as the last day of standard support.
- End of extended support (`end_of_life`): the published per-minor dates could not be read here.
  The table uses GKE's documented rule instead: Regular availability + 24 months ("around 14
  months of standard support and approximately an additional 10 months of extended support
  available with the Extended channel", same versioning page). The rule agrees with the Extended
  channel's minors in GKE's release notes: 1.28-1.33 (late 2025), 1.29-1.34 (January 2026),
  1.30-1.36 (mid 2026), 1.31-1.36 (September 2026).
- reviews/gke.md (2026-11-22): "1.32 is past standard support late-2026"; a version the chosen
  channel does not offer fails at create ("version not available in channel").

Not in the table: 1.37. GKE's 2026-R43 release notes (2026-10-08) add 1.37.1-gke.1552000 to the
Rapid channel only (Regular got 1.34-1.36 patches); no Regular availability date for 1.37 was
found. Add its row when GKE's schedule gives one.
"""

from __future__ import annotations

from datetime import date

from components.model.lifecycle import MinorRelease, VersionLifecycle

SCHEDULE = (
    "https://cloud.google.com/kubernetes-engine/docs/release-schedule as transcribed in "
    "github.com/endoflife-date/endoflife.date products/google-kubernetes-engine.md @a70eca33"
)
EXTENDED = "GKE extended support (Extended channel)"


def _rule_end_of_extended(regular: date) -> date:
    """GKE's rule: up to 24 months of support from Regular availability."""
    return regular.replace(year=regular.year + 2)


def _row(minor: str, regular: date, end_of_standard: date, note: str = "") -> MinorRelease:
    end_of_life = _rule_end_of_extended(regular)
    source = (
        f"{SCHEDULE}: {minor} available in the Regular channel {regular}, end of standard support "
        f"{end_of_standard}. End of extended support {end_of_life} is GKE's rule (Regular "
        "availability + 24 months, cloud.google.com/kubernetes-engine/versioning), not a "
        f"published date.{note}"
    )
    return MinorRelease(minor, regular, end_of_standard, end_of_life, EXTENDED, source)


LIFECYCLE = VersionLifecycle(
    cloud="GKE",
    rows=(
        _row("1.30", date(2024, 7, 31), date(2025, 9, 30)),
        _row("1.31", date(2024, 10, 25), date(2026, 1, 16)),
        _row("1.32", date(2025, 2, 11), date(2026, 4, 11)),
        _row("1.33", date(2025, 6, 3), date(2026, 8, 3)),
        _row(
            "1.34",
            date(2025, 9, 30),
            date(2026, 10, 1),
            " Check: this end of standard support is 12 months after Regular availability (the"
            " other minors have 14) and before upstream 1.34's end of life (2026-10-27).",
        ),
        _row("1.35", date(2026, 2, 11), date(2027, 4, 11)),
        _row("1.36", date(2026, 6, 9), date(2027, 8, 9)),
    ),
)
