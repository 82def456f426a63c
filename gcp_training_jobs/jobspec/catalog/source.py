"""Where a catalog table comes from: every table of the catalog names one (or more) of these."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Source:
    """A public page a table was read from: its title, https address and the day it was read; for a file of a
    public repository, the repository and commit too."""

    title: str
    """The page's title."""
    url: str
    """The page's https address, which anyone can open."""
    read: date
    """The day the page was read."""
    note: str = ""
    """What the page says that the table rests on, how it was checked, and what it does not say."""
    repository: str = ""
    """owner/name of the public repository the file is in, or "" for a web page."""
    commit: str = ""
    """The commit of `repository` the file was read at (40 hex digits), or ""."""
