"""Kubernetes version lifecycle per cloud (issue 11), with "today" pinned so the tests never rot.

TODAY is the clouds' calendar date the issue and the reviews were written on; other pinned dates
walk a minor across its transitions.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from components.aws.model.versions import LIFECYCLE as EKS
from components.azure.model.versions import LIFECYCLE as AKS
from components.gcp.model.versions import LIFECYCLE as GKE
from components.model.lifecycle import (
    WARNING_DAYS,
    MinorRelease,
    VersionLifecycle,
    assess,
    common_default,
    creatable,
    in_standard_support,
    minor_key,
    newest_standard,
    table_problems,
)

TODAY = date(2026, 11, 22)
TABLES = [GKE, EKS, AKS]


def statuses(table: VersionLifecycle, today: date) -> dict[str, str]:
    return {row.minor: assess(table, row.minor, today).status for row in table.rows}


def row(minor: str, released: date | None, standard: date, end: date) -> MinorRelease:
    phase = "paid support" if end > standard else ""
    return MinorRelease(minor, released, standard, end, phase, "https://example.test: made up")


# The tables themselves.


@pytest.mark.parametrize("table", TABLES, ids=lambda table: table.cloud)
def test_each_table_is_ordered_and_consistent(table: VersionLifecycle) -> None:
    minors = [r.minor for r in table.rows]
    assert minors == sorted(minors, key=minor_key)
    assert len(set(minors)) == len(minors)
    for r in table.rows:
        assert r.released is not None, r.minor
        assert r.released <= r.end_of_standard <= r.end_of_life, r.minor
        # Every cloud has a paid or long-term phase after standard support, and names it.
        assert r.end_of_standard < r.end_of_life, r.minor
        assert r.extended_support, r.minor
    assert table_problems(table) == []


@pytest.mark.parametrize("table", TABLES, ids=lambda table: table.cloud)
def test_each_row_names_its_source(table: VersionLifecycle) -> None:
    for r in table.rows:
        assert r.source.strip(), r.minor
        assert f"{r.minor} " in r.source, r.minor
        assert "https://" in r.source or "github.com" in r.source, r.minor


def test_the_tables_run_from_1_30_to_each_clouds_newest_ga_minor() -> None:
    assert [r.minor for r in GKE.rows] == ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36"]
    assert [r.minor for r in EKS.rows] == [f"1.{n}" for n in range(30, 38)]
    assert [r.minor for r in AKS.rows] == [f"1.{n}" for n in range(30, 38)]


def test_a_broken_table_is_refused() -> None:
    good = row("1.35", date(2026, 1, 1), date(2027, 1, 1), date(2028, 1, 1))
    older = row("1.34", date(2025, 1, 1), date(2026, 1, 1), date(2027, 1, 1))
    with pytest.raises(ValueError, match="oldest first"):
        VersionLifecycle("Test", (good, older))
    with pytest.raises(ValueError, match="ends after its end of life"):
        VersionLifecycle("Test", (row("1.35", None, date(2027, 1, 1), date(2026, 1, 1)),))
    unsourced = MinorRelease("1.35", None, date(2027, 1, 1), date(2027, 1, 1), "", " ")
    with pytest.raises(ValueError, match="no source"):
        VersionLifecycle("Test", (unsourced,))
    unnamed = MinorRelease("1.35", None, date(2027, 1, 1), date(2028, 1, 1), "", "a source")
    with pytest.raises(ValueError, match="phase named"):
        VersionLifecycle("Test", (unnamed,))
    assert VersionLifecycle("Test", (older, good)).row("1.35") == good


def test_minors_order_by_number_not_by_text() -> None:
    assert minor_key("1.4") < minor_key("1.34") < minor_key("1.37")


# The published dates, as the tables hold them (last days, inclusive).


def test_eks_last_days_are_the_day_before_awss_dates() -> None:
    # AWS: extended billing starts at the beginning of the end-of-standard-support day, and no
    # cluster can be created on the end-of-extended-support day (1.34: Dec 2, 2026 / Dec 2, 2027).
    r = EKS.row("1.34")
    assert r is not None
    assert (r.released, r.end_of_standard, r.end_of_life) == (
        date(2025, 10, 2),
        date(2026, 12, 1),
        date(2027, 12, 1),
    )


def test_aks_month_dates_are_the_months_last_day() -> None:
    # "Nov 2026" is 2026-11-30 (reviews/aks.md F1: 1.34 works until 2026-11-30).
    r = AKS.row("1.34")
    assert r is not None
    assert (r.end_of_standard, r.end_of_life) == (date(2026, 11, 30), date(2027, 11, 30))
    assert assess(AKS, "1.34", date(2026, 11, 30)).status == "ending-soon"
    assert assess(AKS, "1.34", date(2026, 12, 1)).status == "extended"


def test_gke_extended_support_follows_the_24_month_rule() -> None:
    r = GKE.row("1.35")
    assert r is not None
    assert (r.released, r.end_of_standard, r.end_of_life) == (
        date(2026, 2, 11),
        date(2027, 4, 11),
        date(2028, 2, 11),
    )


# What choosing a minor means on TODAY.


def test_every_minor_on_every_cloud_today() -> None:
    assert statuses(GKE, TODAY) == {
        "1.30": "ended",
        "1.31": "ended",
        "1.32": "extended",
        "1.33": "extended",
        "1.34": "extended",
        "1.35": "standard",
        "1.36": "standard",
    }
    assert statuses(EKS, TODAY) == {
        "1.30": "ended",
        "1.31": "extended",
        "1.32": "extended",
        "1.33": "extended",
        "1.34": "ending-soon",
        "1.35": "standard",
        "1.36": "standard",
        "1.37": "standard",
    }
    assert statuses(AKS, TODAY) == {
        "1.30": "ended",
        "1.31": "extended",
        "1.32": "extended",
        "1.33": "extended",
        "1.34": "ending-soon",
        "1.35": "standard",
        "1.36": "standard",
        "1.37": "standard",
    }


def test_what_each_cloud_creates_today() -> None:
    assert creatable(GKE, TODAY) == ["1.32", "1.33", "1.34", "1.35", "1.36"]
    assert creatable(EKS, TODAY) == ["1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]
    assert creatable(AKS, TODAY) == ["1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]
    assert in_standard_support(GKE, TODAY) == ["1.35", "1.36"]
    assert newest_standard(GKE, TODAY) == "1.36"
    assert newest_standard(EKS, TODAY) == "1.37"


def test_aks_newest_ga_minor_is_1_37_today() -> None:
    # Issue 11: "the newest GA minor of each cloud can be chosen (AKS 1.37 today)".
    assert newest_standard(AKS, TODAY) == "1.37"
    assert max(creatable(AKS, TODAY), key=minor_key) == "1.37"
    chosen = assess(AKS, "1.37", TODAY)
    assert (chosen.status, chosen.is_error, chosen.is_warning) == ("standard", False, False)
    assert "2027-10-31" in chosen.message
    # Before October 2026 it was not GA on AKS yet: an error naming the GA date.
    before = assess(AKS, "1.37", date(2026, 9, 30))
    assert (before.status, before.is_error) == ("not-yet", True)
    assert "2026-10-01" in before.message
    assert newest_standard(AKS, date(2026, 9, 30)) == "1.36"
    assert assess(AKS, "1.37", date(2026, 10, 1)).status == "standard"


def test_the_common_default_today_is_1_36() -> None:
    # GKE has 1.35-1.36 in standard support; EKS and AKS 1.34-1.37: 1.36 is on all three.
    assert common_default(TABLES, TODAY) == "1.36"
    assert common_default([EKS, AKS], TODAY) == "1.37"
    assert common_default([GKE], TODAY) == "1.36"


def test_the_common_default_waits_for_the_slowest_cloud() -> None:
    # 1.36: AKS GA June 2026 (counted from the 1st), EKS 2026-06-02, GKE Regular 2026-06-09.
    assert common_default(TABLES, date(2026, 6, 8)) == "1.35"
    assert common_default(TABLES, date(2026, 6, 9)) == "1.36"
    # 1.35: EKS 2026-01-27, GKE 2026-02-11, AKS March 2026.
    assert common_default(TABLES, date(2026, 2, 28)) == "1.34"
    assert common_default(TABLES, date(2026, 3, 1)) == "1.35"


def test_the_common_default_needs_a_common_minor() -> None:
    with pytest.raises(ValueError, match="at least one"):
        common_default([], TODAY)
    old = VersionLifecycle(
        "Old", (row("1.20", date(2021, 1, 1), date(2022, 1, 1), date(2022, 1, 1)),)
    )
    with pytest.raises(ValueError, match="no Kubernetes minor is in standard support on all of"):
        common_default([old, AKS], TODAY)


def test_a_minor_ga_on_one_cloud_and_not_on_another() -> None:
    # Today: 1.37 is GA on EKS and AKS; GKE offers it only in its Rapid channel, so it is not in
    # the GKE table, and choosing it there is an error that lists what GKE creates.
    assert assess(EKS, "1.37", TODAY).status == "standard"
    assert assess(AKS, "1.37", TODAY).status == "standard"
    on_gke = assess(GKE, "1.37", TODAY)
    assert (on_gke.status, on_gke.is_error) == ("unknown", True)
    assert "1.35, 1.36 in standard support" in on_gke.message
    # On 2026-06-08 1.36 is GA on EKS and AKS but not yet in GKE's Regular channel.
    day = date(2026, 6, 8)
    assert assess(EKS, "1.36", day).status == "standard"
    assert assess(AKS, "1.36", day).status == "standard"
    not_yet = assess(GKE, "1.36", day)
    assert (not_yet.status, not_yet.is_error) == ("not-yet", True)
    assert "GA from 2026-06-09" in not_yet.message


# Transitions: the 60-day warning, extended, ended.


def test_the_60_day_warning_boundary() -> None:
    end = date(2027, 3, 31)  # AKS 1.35's last day of standard support
    assert WARNING_DAYS == 60
    assert (end - date(2027, 1, 30)).days == 60
    assert assess(AKS, "1.35", date(2027, 1, 29)).status == "standard"
    warned = assess(AKS, "1.35", date(2027, 1, 30))
    assert (warned.status, warned.is_warning, warned.is_error) == ("ending-soon", True, False)
    assert "2027-03-31 (60 days from today)" in warned.message
    assert "then only with AKS LTS" in warned.message
    assert assess(AKS, "1.35", end).status == "ending-soon"
    assert assess(AKS, "1.35", end + timedelta(days=1)).status == "extended"


def test_extended_is_a_warning_and_ended_is_an_error() -> None:
    # EKS 1.31: end of extended support "November 26, 2026", so 2026-11-25 is its last day.
    extended = assess(EKS, "1.31", date(2026, 11, 25))
    assert (extended.status, extended.is_warning, extended.is_error) == ("extended", True, False)
    assert "last day 2025-11-25" in extended.message
    assert "until 2026-11-25 (0 days from today) only with EKS extended support" in (
        extended.message
    )
    ended = assess(EKS, "1.31", date(2026, 11, 26))
    assert (ended.status, ended.is_warning, ended.is_error) == ("ended", False, True)
    assert ended.message.startswith(
        "EKS no longer creates Kubernetes 1.31: its standard support ran to 2025-11-25 and EKS"
        " extended support to 2026-11-25."
    )
    assert "1.34, 1.35, 1.36, 1.37 in standard support" in ended.message
    assert "1.32, 1.33 only with EKS extended support" in ended.message


def test_today_extended_and_ended_name_the_dates_and_the_allowed_minors() -> None:
    # reviews/eks.md S2-6: 1.33 left EKS standard support on 29 Jul 2026.
    eks_133 = assess(EKS, "1.33", TODAY)
    assert eks_133.status == "extended"
    assert "last day 2026-07-28" in eks_133.message
    assert "until 2027-07-28" in eks_133.message
    aks_130 = assess(AKS, "1.30", TODAY)
    assert aks_130.status == "ended"
    assert "2025-08-22" in aks_130.message and "2026-07-31" in aks_130.message
    assert "1.34, 1.35, 1.36, 1.37 in standard support" in aks_130.message
    assert "1.31, 1.32, 1.33 only with AKS LTS" in aks_130.message


def test_a_minor_without_a_ga_date_is_not_yet_ga() -> None:
    table = VersionLifecycle("Test", (row("1.40", None, date(2028, 1, 1), date(2028, 1, 1)),))
    result = assess(table, "1.40", TODAY)
    assert result.status == "not-yet"
    assert "on a date not yet known" in result.message
    assert creatable(table, TODAY) == []
    assert newest_standard(table, TODAY) is None


def test_a_minor_outside_the_table_is_unknown() -> None:
    for minor in ("1.29", "1.38", "1.3x", ""):
        result = assess(EKS, minor, TODAY)
        assert (result.status, result.row) == ("unknown", None)
        assert "(1.30 to 1.37)" in result.message


def test_the_default_minor_is_the_common_default_on_the_pinned_day() -> None:
    from components.model.schema import ClusterConfig

    default = ClusterConfig.model_fields["kubernetes_version"].default
    assert default == common_default(TABLES, TODAY) == "1.36"


def test_gke_refuses_a_minor_past_standard_support_outside_the_extended_channel() -> None:
    import copy

    import pytest as _pytest

    from components.model.config import ConfigError, parse_config
    from components.tooling.stacks import load_stack

    raw = copy.deepcopy(dict(load_stack("gcp-dev").gpufleet))
    raw["cluster"]["kubernetesVersion"] = "1.33"  # GKE standard support ended before TODAY
    assert assess(GKE, "1.33", TODAY).status == "extended"
    with _pytest.raises(ConfigError) as caught:
        parse_config(raw, today=TODAY)
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.startswith("cluster.kubernetesVersion: is past GKE standard support")
    assert "the cluster is in REGULAR" in problem
