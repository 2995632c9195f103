"""Number records, LaTeX macros, provenance appendix and claim checks for the paper."""
