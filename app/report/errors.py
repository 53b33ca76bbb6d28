"""Errors the report builder raises; each names the file, case or input and the problem."""

from __future__ import annotations


class ReportError(ValueError):
    """A report cannot be made or checked: unknown format, missing case, unreadable manifest, no Qt GUI."""
