"""EKS's Kubernetes minors as data: EKS release, end of standard and of extended support.

Sources, read 2026-11-24:
- AWS, "Understand the Kubernetes version lifecycle on EKS", section "Amazon EKS Kubernetes
  release calendar" (https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html).
  Rows 1.30-1.34 from its source, awsdocs/amazon-eks-user-guide
  latest/ug/versioning/kubernetes-versions.adoc (stored version at commit
  013856044148d6eeed4723027a45aa2180536bcb); row 1.35 from the page's markdown rendition
  (https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.md).
- 1.36: endoflife.date, products/amazon-eks.md at commit a70eca337600e7d721dc48112c271f98661d208b
  (2026-08-22), which reads the same AWS calendar ("release_table" method) and links AWS's
  What's New post of 2026-06. awslabs/amazon-eks-ami release v20260610 ships 1.36 AMIs.
- 1.37: no copy of AWS's calendar with a 1.37 row was reachable. awslabs/amazon-eks-ami release
  v20261023 ships amazon-eks-node-al2023-x86_64-nvidia-1.37 AMIs (Kubernetes 1.37.1), so EKS
  offers 1.37; its release day, 2026-10-01, is AWS's What's New post
  (aws.amazon.com/about-aws/whats-new/2026/10/amazon-eks-distro-kubernetes-version-1-37/) as
  recorded by a third-party newsletter, not read first-hand. Its end dates follow AWS's
  documented rule: "standard support ... for the first 14 months after it's released ... extended
  support for the next 12 months" (same AWS page). Replace them with AWS's dates when seen.
- reviews/eks.md S2-6 (2026-11-22): "EKS standard support for 1.33 ended 29 Jul 2026 and for 1.32
  on 23 Mar 2026"; a cluster without `upgrade_policy` defaults to EXTENDED, billed at the
  extended-support rate (6x the standard control-plane price).

AWS's dates are days on which something stops, so each last day is the day before: "Billing for
extended support starts at the beginning of the day that the version reaches end of standard
support, in the UTC+0 timezone" and "On the end of extended support date, you can no longer
create new Amazon EKS clusters with the unsupported version" (same AWS page).
"""

from __future__ import annotations

from datetime import date, timedelta

from components.model.lifecycle import MinorRelease, VersionLifecycle

CALENDAR = (
    "https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html"
    "#kubernetes-release-calendar"
)
EXTENDED = "EKS extended support"


def _row(
    minor: str, released: date, standard_ends: date, extended_ends: date, source: str
) -> MinorRelease:
    """A row from AWS's published dates: the last days are the days before they."""
    last_standard = standard_ends - timedelta(days=1)
    last_day = extended_ends - timedelta(days=1)
    published = (
        f"{minor} Amazon EKS release {released}, end of standard support {standard_ends}, "
        f"end of extended support {extended_ends} (last days: the day before each)"
    )
    return MinorRelease(
        minor, released, last_standard, last_day, EXTENDED, f"{source}: {published}"
    )


LIFECYCLE = VersionLifecycle(
    cloud="EKS",
    rows=(
        _row("1.30", date(2024, 5, 23), date(2025, 7, 23), date(2026, 7, 23), CALENDAR),
        _row("1.31", date(2024, 9, 26), date(2025, 11, 26), date(2026, 11, 26), CALENDAR),
        _row(
            "1.32",
            date(2025, 1, 23),
            date(2026, 3, 23),
            date(2027, 3, 23),
            f"{CALENDAR} (reviews/eks.md S2-6 agrees)",
        ),
        _row(
            "1.33",
            date(2025, 5, 29),
            date(2026, 7, 29),
            date(2027, 7, 29),
            f"{CALENDAR} (reviews/eks.md S2-6 agrees)",
        ),
        _row("1.34", date(2025, 10, 2), date(2026, 12, 2), date(2027, 12, 2), CALENDAR),
        _row(
            "1.35",
            date(2026, 1, 27),
            date(2027, 3, 27),
            date(2028, 3, 27),
            "https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.md",
        ),
        _row(
            "1.36",
            date(2026, 6, 2),
            date(2027, 8, 2),
            date(2028, 8, 2),
            "AWS's calendar as read by endoflife.date (github.com/endoflife-date/endoflife.date "
            "products/amazon-eks.md @a70eca33, linking aws.amazon.com/about-aws/whats-new/2026/06/"
            "amazon-eks-distro-kubernetes-version-1-36/)",
        ),
        _row(
            "1.37",
            date(2026, 10, 1),
            date(2027, 12, 1),
            date(2028, 12, 1),
            "NOT from AWS's calendar: release day from AWS's What's New post (https://aws.amazon"
            ".com/about-aws/whats-new/2026/10/amazon-eks-distro-kubernetes-version-1-37/) as "
            "relayed by a third party, not read first-hand; 1.37 AMIs exist in "
            "https://github.com/awslabs/amazon-eks-ami/releases/tag/v20261023; end dates by AWS's "
            "rule (release + 14 months standard, + 12 months extended)",
        ),
    ),
)
