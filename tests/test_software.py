"""The software record of a build: complete, byte-stable, and differences are named."""

from __future__ import annotations

import json

from analysis.software import installed_software, software_differences


def test_installed_software_names_the_packages_tex_and_os() -> None:
    sw = installed_software()
    for name in ("snakemake", "pandas", "statsmodels", "hydra-core", "torch"):
        assert name in sw["packages"], name
    assert sw["python"].startswith("3.11")
    assert sw["os"]
    assert "torch" in sw["outside_lock"]
    assert len(sw["outside_lock"]["torch"]["record_sha256"]) == 64
    if sw["tex"] is not None:
        assert "TeX" in sw["tex"]


def test_installed_software_is_byte_stable() -> None:
    a = json.dumps(installed_software(), sort_keys=True)
    b = json.dumps(installed_software(), sort_keys=True)
    assert a == b


def test_differences_name_each_changed_package_and_build() -> None:
    built = {
        "python": "3.11.7",
        "packages": {"pandas": "3.1.1", "scipy": "1.16.0"},
        "outside_lock": {"torch": {"version": "2.13.0+cpu", "record_sha256": "a" * 64}},
    }
    now = {
        "python": "3.11.7",
        "packages": {"pandas": "3.1.2", "scipy": "1.16.0", "extra": "1"},
        "outside_lock": {"torch": {"version": "2.13.0+cpu", "record_sha256": "b" * 64}},
    }
    diff = software_differences(built, now)
    assert any("pandas" in d and "3.1.1" in d and "3.1.2" in d for d in diff)
    assert any(d.startswith("package extra") for d in diff)
    assert any("torch" in d and "different build" in d for d in diff)
    assert not any("scipy" in d for d in diff)
    assert software_differences(built, built) == []


def _write_env(root, dataset: str, software: dict) -> None:
    path = root / "results" / dataset / "environment.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(software), encoding="utf-8")


def test_verify_warns_when_the_verifying_software_differs(tmp_path) -> None:
    from analysis.paper.verify import software_warnings

    built = installed_software()
    built["packages"] = {**built["packages"], "pandas": "0.0.1"}
    _write_env(tmp_path, "d", built)
    warnings = software_warnings("d", tmp_path)
    assert len(warnings) == 1 and "pandas" in warnings[0] and "0.0.1" in warnings[0]
    assert "missing" in software_warnings("other", tmp_path)[0]


def test_trace_names_the_software_and_the_appendix_lists_it(tmp_path) -> None:
    from analysis.paper.provenance import render_software_tex
    from analysis.paper.trace import software_summary

    sw = installed_software()
    _write_env(tmp_path, "d", sw)
    summary = software_summary("d", tmp_path)
    assert summary["file"] == "results/d/environment.json"
    assert summary["python"] == sw["python"] and summary["n_packages"] == len(sw["packages"])
    assert "torch" in summary["outside_lock"]
    tex = render_software_tex(sw)
    assert "Software that built these numbers" in tex
    assert f"statsmodels {sw['packages']['statsmodels']}" in tex
    assert "hydra-core" in tex and "_" not in tex.replace(r"\_", "")
