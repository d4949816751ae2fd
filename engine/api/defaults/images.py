"""Image references: the tag a container's image names, for `SetDefaults_Container`'s
imagePullPolicy. Mirrors `parsers.ParseImageName` (`pkg/util/parsers`) over the grammar of
`github.com/distribution/reference`.
"""

from __future__ import annotations

import re

_ALNUM = r"[a-z0-9]+"
_PATH_COMPONENT = rf"{_ALNUM}(?:(?:[._]|__|-+){_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_REFERENCE = re.compile(
    rf"(?P<name>(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?"
)


def image_tag(image: str) -> str:
    """The tag the kubelet would pull: "latest" when none is given; "" for a digest-only or
    unparseable reference (SetDefaults_Container then picks IfNotPresent)."""
    if re.fullmatch(r"[a-f0-9]{64}", image):
        return ""
    first, slash, rest = image.partition("/")
    has_domain = slash and (
        any(c in first for c in ".:") or first == "localhost" or first.lower() != first
    )
    remainder = rest if has_domain else image
    if remainder.lower() != remainder:
        return ""  # "repository name must be lowercase"
    match = _REFERENCE.fullmatch(image)
    if match is None or len(match["name"]) > 255:
        return ""
    if match["tag"]:
        return match["tag"]
    return "" if match["digest"] else "latest"
