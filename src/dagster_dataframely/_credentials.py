"""Keep credentials written into a URL out of every message, metadata value and log line.

A URL such as `s3://KEY:SECRET@bucket/q` carries its credentials in the authority, and every
place that shows the URL (a materialization's `dataframely/quarantine_address`, an error note,
botocore's own "Invalid bucket name" message) would show them too. s3fs does not even read
them: credentials for an object store come from the environment or `storage_options`. So the
package refuses such a URL wherever it is given one (`refuse_credentials`), and strips any it
could not refuse before showing a location (`without_credentials`).

Parsing by the book is not enough: a password may hold `/`, `?`, `#` or `@` (half of all AWS
secret keys hold a `/`), and then the authority a URL parser finds ends inside the password.
Both functions treat anything that could be a user or password as one.
"""

from __future__ import annotations

import re

from .errors import CredentialsInUrlError

# `scheme://`, as RFC 3986 spells a scheme.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")

# What ends an authority for a URL parser: the first `/`, `?` or `#` after `scheme://`.
_AUTHORITY_END = re.compile(r"[/?#]")


def carries_credentials(location: str) -> bool:
    """Whether `location` is a URL whose authority may hold a user name or password.

    True when the authority holds an `@` (`s3://KEY:SECRET@bucket`), and when it holds a `:`
    followed by anything but a port number: that is a password in which a `/`, `?` or `#`
    cut the authority short (`s3://KEY:ab/cd@bucket`).
    """
    authority = _authority(location)
    if authority is None:
        return False
    if "@" in authority:
        return True
    if authority.startswith("[") and "]" in authority:  # an IPv6 host: `[::1]:9000`
        authority = authority[authority.index("]") + 1 :]
    _, colon, port = authority.rpartition(":")
    return bool(colon) and not port.isdigit()


def refuse_credentials(location: str, given_as: str) -> None:
    """Raise `CredentialsInUrlError` if `location` carries credentials, without echoing them.

    Parameters
    ----------
    location
        The URL or path as the user gave it.
    given_as
        Where the user gave it, for the message: "the environment variable ...", "the
        base_dir of ...".

    Raises
    ------
    CredentialsInUrlError
        The URL's authority holds a user name or password.
    """
    if carries_credentials(location):
        match = _SCHEME.match(location)
        scheme = match.group(1) if match else ""
        raise CredentialsInUrlError(given_as, scheme)


def without_credentials(location: str) -> str:
    """Return `location` with any user name or password removed from its authority.

    When the authority ends inside a password (it holds a `:` and no port), the password may
    hold `@` as well, so everything up to the last `@` of the whole location goes: a path
    holding an `@` is then cut short, but no part of the password is ever shown. A location
    that carries no credentials is returned unchanged.
    """
    authority = _authority(location)
    if authority is None or not carries_credentials(location):
        return location
    scheme_end = location.index("://") + 3
    rest = location[scheme_end:]
    if "@" in authority:
        return location[:scheme_end] + rest[authority.rindex("@") + 1 :]
    _, at, after = rest.rpartition("@")
    return location[:scheme_end] + (after if at else "")


def _authority(location: str) -> str | None:
    match = _SCHEME.match(location)
    if match is None:
        return None
    rest = location[match.end() :]
    end = _AUTHORITY_END.search(rest)
    return rest if end is None else rest[: end.start()]
