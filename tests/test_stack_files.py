"""Stack files that cannot be read, or that hide keys from gpufleet, are bad input (exit 2).

Every command reads the file the same way, so each case runs through `fit`, which does not run
the program: a problem found here is found before anything is planned.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from components.tooling.cli import main
from components.tooling.stacks import STACKS_DIR, load_stack

FIT_FIXTURES = Path(__file__).parent / "fixtures" / "fit"
GCP_DEV = (STACKS_DIR / "Pulumi.gcp-dev.yaml").read_text()


def fit_exit(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str]:
    code = main(["fit", str(path), str(FIT_FIXTURES / "gke-gpu-pod.yaml")])
    captured = capsys.readouterr()
    return code, captured.err


def write(tmp_path: Path, content: bytes | str) -> Path:
    path = tmp_path / "Pulumi.mistake.yaml"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (GCP_DEV.encode("utf-16"), "saved as UTF-16 text"),
        (GCP_DEV.encode("utf-16-le"), "saved as UTF-16 text"),
        (GCP_DEV.encode("utf-16-be"), "saved as UTF-16 text"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00junk", "binary data"),
        ("config:\n  gpufleet:cloud: gcp\n".encode("latin-1") + b"# caf\xe9\n", "not UTF-8 text"),
        ("config:\n  gpufleet:cloud: gcp\n  1: 2\n", "config keys must be `namespace:key` strings"),
        ("config: [a, b]\n", "`config:` must be a mapping"),
        ("- config\n", "a stack file is a YAML mapping"),
        ("config:\n  gpufleet:cloud: [\n", "not valid YAML"),
    ],
    ids=["utf16-bom", "utf16le", "utf16be", "binary", "latin1", "int-key", "list", "seq", "yaml"],
)
def test_unreadable_files_exit_2_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes | str, expected: str
) -> None:
    path = write(tmp_path, content)
    code, err = fit_exit(capsys, path)
    assert code == 2
    assert f"cannot read {path}" in err
    assert expected in err
    assert "Traceback" not in err and "Error:" not in err.replace("error:", "")


def test_a_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeff" + GCP_DEV)
    assert load_stack(str(path)).gpufleet["cloud"] == "gcp"


def test_duplicate_keys_name_both_lines_every_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The second gpuPools block would silently drop the first; maxNodes 4 would become 40.
    content = GCP_DEV.replace("      maxNodes: 4\n", "      maxNodes: 4\n      maxNodes: 40\n", 1)
    content += "  gpufleet:gpuPools: []\n"
    lines = content.splitlines()
    first_pools = lines.index("  gpufleet:gpuPools:") + 1
    max_nodes = lines.index("      maxNodes: 4") + 1
    code, err = fit_exit(capsys, write(tmp_path, content))
    assert code == 2
    assert (
        f"key 'gpufleet:gpuPools' appears twice in one mapping (lines {first_pools} and "
        f"{len(lines)})" in err
    )
    assert (
        f"key 'maxNodes' appears twice in one mapping (lines {max_nodes} and {max_nodes + 1})"
        in (err)
    )


def test_dates_and_odd_keys_of_other_namespaces_are_left_alone(tmp_path: Path) -> None:
    content = GCP_DEV + "  other:since: 2026-01-01\n  other:map: {1: 2, 2026-01-02: [yes]}\n"
    stack = load_stack(str(write(tmp_path, content)))
    assert stack.config["other:since"] == "2026-01-01"  # text, as Pulumi keeps it
    assert stack.gpufleet["cloud"] == "gcp"
    # The program runs with them (plan hands every key to Pulumi's config, as `pulumi up` does).
    assert main(["plan", str(stack.path)]) == 0


def test_a_date_in_our_config_is_kept_as_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    content = GCP_DEV.replace(
        '    kubernetesVersion: "1.35"\n', "    kubernetesVersion: 2026-01-01\n"
    )
    code, err = fit_exit(capsys, write(tmp_path, content))
    assert code == 2
    assert "cluster.kubernetesVersion" in err and "'2026-01-01'" in err
    assert "datetime" not in err


def test_a_file_without_config_says_where_settings_go(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err = fit_exit(capsys, write(tmp_path, "gpufleet:cloud: gcp\n"))
    assert code == 2
    assert "has no `config:` mapping" in err and "gpufleet:cloud: gcp" in err
    assert "None" not in err


def test_keys_without_the_gpufleet_prefix_say_did_you_mean(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    content = GCP_DEV.replace("  gpufleet:", "  ")
    code, err = fit_exit(capsys, write(tmp_path, content))
    assert code == 2
    for key in ("cloud", "cluster", "gpuPools"):
        assert (
            f"{key}: a stack file's config keys are `namespace:key`; did you mean gpufleet:{key}?"
            in (err)
        )
    assert "the file sets no gpufleet:* key" in err
    assert "(got None)" not in err


def test_a_namespace_typo_is_an_error_for_commands_that_do_not_run_the_program(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    content = GCP_DEV.replace("  gpufleet:gpuPools:", "  gpuflet:gpuPools:")
    code, err = fit_exit(capsys, write(tmp_path, content))
    assert code == 2
    assert "gpuflet:gpuPools: unknown namespace 'gpuflet'; did you mean gpufleet:gpuPools?" in err


def test_a_missing_stack_names_the_shipped_ones(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["fit", "no-such-stack", str(FIT_FIXTURES / "gke-gpu-pod.yaml")])
    err = capsys.readouterr().err
    assert code == 2
    assert "no stack config at" in err and "gcp-dev" in err
