"""Compile the paper with latexmk (pdflatex + bibtex), offline and byte-stable.

``SOURCE_DATE_EPOCH`` with ``FORCE_SOURCE_DATE=1`` fixes every date pdfTeX writes (creation
date, ``\\today``, the trailer id), so two builds from the same sources give the same bytes.
latexmk works in a folder of its own (``workdir``, by default ``latex/`` beside the PDF; the
paper rule declares it as an output), which is emptied first so no stale ``.aux`` leaks in; the
PDF is then moved to its place and its ``.aux`` copied beside it (the audit site reads it).
Nothing else is removed: the build folder holds other rules' outputs (the audit site), and no
path derived from config can make the clean-up reach them.
Each dataset has its own generated sources (``paper/generated/<dataset>/``) and build folder
(``paper/build/<dataset>/``), so a real-data build never overwrites the bundled one: the one
hand-written ``main.tex`` finds the dataset's generated files through ``\\GeneratedDir``, which
latexmk defines before reading it (``-usepretex``).
On failure the error says which LaTeX error stopped the build and where the full log is.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from pathlib import Path


class LatexError(RuntimeError):
    """latexmk failed; the message carries LaTeX's first errors and the log's path."""


def latex_errors(log_text: str, limit: int = 5) -> list[str]:
    """The first ``! ...`` errors of a LaTeX log, each with the source line that follows."""
    out = []
    lines = log_text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("!") or re.match(r"^[^:\s]+\.tex:\d+: ", line):
            context = " ".join(x.strip() for x in lines[i : i + 3] if x.strip())
            out.append(context)
            if len(out) >= limit:
                break
    return out


_OVERFULL = re.compile(r"^Overfull \\[hv]box \((?P<pt>[\d.]+)pt too (?:wide|high)\).*$", re.M)
_FLOAT = re.compile(r"^.*Float too large for page.*$", re.M)
_TEX_FILE = re.compile(r"\(([^()\s]+\.tex)")


def layout_defects(log_text: str, tolerance_pt: float = 1.0) -> list[str]:
    """The log lines of a page layout defect: every "Float too large" (a float cut off at the
    page foot, its last rows unseen) and every overfull box wider or higher than
    ``tolerance_pt`` (text running into the margin). Sub-point overflows are invisible."""
    opened = [(m.start(), m.group(1)) for m in _TEX_FILE.finditer(log_text)]

    def where(pos: int) -> str:
        # the .tex file LaTeX opened last before the message (a hint; closings are not tracked)
        last = next((name for start, name in reversed(opened) if start < pos), "main.tex")
        return f"[after {last}] "

    defects = list(_FLOAT.finditer(log_text))
    defects += [m for m in _OVERFULL.finditer(log_text) if float(m["pt"]) > tolerance_pt]
    return [where(m.start()) + m.group(0).strip() for m in sorted(defects, key=lambda m: m.start())]


def compile_paper(
    main_tex: Path | str,
    out_pdf: Path | str,
    *,
    generated: Path | str,
    source_date_epoch: int,
    log: logging.Logger | None = None,
    timeout: int = 600,
    workdir: Path | str | None = None,
) -> Path:
    """Build ``main_tex`` into ``out_pdf`` with latexmk, working in ``workdir``.

    ``generated`` is the folder of the dataset's generated sources; ``main.tex`` and its
    sections ``\\input{\\GeneratedDir/...}`` from it. latexmk's whole output goes to ``log``
    (the rule's log file in the workflow); its LaTeX log stays in ``workdir`` (default
    ``<PDF folder>/latex``), the only folder this function empties: it refuses one that holds
    the sources, the generated files or the PDF.
    """
    main_tex = Path(main_tex).resolve()
    out_pdf = Path(out_pdf).resolve()
    generated_path = Path(generated).resolve()
    generated_dir = os.path.relpath(generated_path, main_tex.parent).replace(os.sep, "/")
    build = Path(workdir).resolve() if workdir is not None else out_pdf.parent / "latex"
    for kept in (main_tex, generated_path, out_pdf):
        if build == kept or build in kept.parents:
            raise ValueError(f"the LaTeX work folder {build} would hold {kept}: it is emptied")
    if shutil.which("latexmk") is None:
        raise LatexError(
            "latexmk is not installed; install TeX Live (see README: make install-tex)"
        )
    if build.exists():
        shutil.rmtree(build)
    build.mkdir(parents=True)
    out_pdf.parent.mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        SOURCE_DATE_EPOCH=str(int(source_date_epoch)),
        FORCE_SOURCE_DATE="1",
        TZ="UTC",
        LC_ALL="C",
        max_print_line="10000",  # unwrapped log lines: errors quote keys whole
        error_line="254",
        half_error_line="238",
    )
    cmd = [
        "latexmk",
        "-pdf",
        "-pdflatex=pdflatex %O %P",
        f"-usepretex=\\def\\GeneratedDir{{{generated_dir}}}",
        "-bibtex",
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-file-line-error",
        "-cd",
        f"-outdir={os.path.relpath(build, main_tex.parent)}",
        f"-jobname={out_pdf.stem}",
        main_tex.name,
    ]
    proc = subprocess.run(
        cmd, cwd=main_tex.parent, env=env, capture_output=True, text=True, timeout=timeout
    )
    output = f"$ {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}"
    if log is not None:
        log.info("latexmk output:\n%s", output)
    built = build / out_pdf.name
    if proc.returncode != 0 or not built.is_file():
        tex_log = build / f"{out_pdf.stem}.log"
        text = tex_log.read_text(encoding="utf-8", errors="replace") if tex_log.is_file() else ""
        errors = latex_errors(text) or latex_errors(output) or [output[-2000:]]
        raise LatexError(
            f"latexmk failed on {main_tex} (exit {proc.returncode}):\n  "
            + "\n  ".join(errors)
            + f"\nfull LaTeX log: {tex_log}"
        )
    os.replace(built, out_pdf)
    # the labels' numbers and pages, which the audit site links to, beside the PDF
    shutil.copyfile(build / f"{out_pdf.stem}.aux", out_pdf.with_suffix(".aux"))
    return out_pdf
