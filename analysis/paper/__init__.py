"""The paper from the records: LaTeX macros, tables, claim checks, the audit site
beside the PDF and the short appendix that points to it, compilation per dataset, and
``recenter trace``/``verify``/``numbers-diff``.

The records themselves are ``analysis.provenance``. Rules and the CLI import the modules
directly, so this package re-exports nothing.
"""
