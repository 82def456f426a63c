"""Where a catalog table comes from: every table of the catalog names one (or more) of these."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Source:
    """A page a table was read from: its title, address, the day it was read, how it was reached."""

    title: str
    """The page's title."""
    url: str
    """The page's address (cloud.google.com/...)."""
    read: date
    """The day the page was read."""
    via: str = ""
    """Where the copy was read in the search corpus (a repository path or file id), or ""."""
    note: str = ""
    """What the page does not say, or what was not found in the search corpus."""
