"""A database URL as a dataset may record it: without its password (`postgresql://user:pw@host/db`
-> `postgresql://user@host/db`; the reader gives it again from the environment or ~/.pgpass)."""
from __future__ import annotations

import re

_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*):[^@/]*@")
# a password given as a query parameter (postgresql://host/db?password=...)
_PASSWORD_PARAMETER = re.compile(r"([?&])password=[^&]*(&?)", re.IGNORECASE)


def without_password(url: str) -> str:
    """The URL with any password left out."""
    found = _PASSWORD.sub(r"\1@", url)
    return _PASSWORD_PARAMETER.sub(lambda match: match.group(1) if match.group(2) else "", found).rstrip("?&")


def masked(url: str) -> str:
    """The URL as it may be shown: a password replaced by ***."""
    found = _PASSWORD.sub(r"\1:***@", url)
    return _PASSWORD_PARAMETER.sub(lambda match: f"{match.group(1)}password=***{match.group(2)}", found)
