"""Store URLs: `sqlite:PATH`, `memory:[NAME]`, `postgresql://user[:password]@host[:port]/db[?schema=S]`.

Nothing from a URL is ever pasted into SQL or a connection string: the PostgreSQL schema must be
a plain lower-case identifier (PostgreSQL's rules for unquoted names, at most 63 bytes, not
`pg_`-prefixed) and is still quoted with `psycopg.sql.Identifier` wherever it is used; host,
user, password and database go to the driver as separate keyword arguments. A SQLite path is a
file name, opened through a `file:` URI we build ourselves (percent-quoted), so a path cannot
smuggle URI parameters such as `mode=memory` in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlparse

from engine.store.errors import StoreError

DEFAULT_URL = "sqlite:kreplay.db"
DEFAULT_CONNECT_TIMEOUT = 5  # seconds: an unreachable server fails fast, not after 30 s

# PostgreSQL's unquoted identifiers, folded to lower case; `$` is allowed after the first letter
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_$]*")
_MAX_IDENTIFIER_BYTES = 63  # NAMEDATALEN - 1
_MEMORY_NAME = re.compile(r"[A-Za-z0-9_.-]*")
_PG_PARAMS = {"schema", "connect_timeout", "sslmode"}
_SSLMODES = {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}


@dataclass(frozen=True)
class StoreURL:
    text: str = field(repr=False)  # may hold a password: messages use `display`
    scheme: str  # "sqlite", "memory" or "postgresql"
    path: str = ""  # sqlite
    name: str = ""  # memory: the shared in-process store's name ("" = private to one EventStore)
    host: str = ""
    port: int = 5432
    dbname: str = ""
    user: str = ""
    password: str = field(default="", repr=False)
    schema: str = "public"
    connect_timeout: int = DEFAULT_CONNECT_TIMEOUT
    sslmode: str = ""

    @property
    def display(self) -> str:
        """The URL as messages show it: never the password."""
        if self.scheme != "postgresql":
            return self.text
        user = f"{self.user}@" if self.user else ""
        schema = f"?schema={self.schema}" if self.schema != "public" else ""
        return f"postgresql://{user}{self.host}:{self.port}/{self.dbname}{schema}"


def check_schema(schema: str) -> str:
    """A PostgreSQL schema name we accept: lower-case letters, digits, `_` and `$`."""
    if not _IDENTIFIER.fullmatch(schema) or len(schema.encode()) > _MAX_IDENTIFIER_BYTES:
        raise StoreError(
            f"error: invalid schema {schema!r}: use lower-case letters, digits and _ "
            f"(starting with a letter or _), at most {_MAX_IDENTIFIER_BYTES} characters"
        )
    if schema.startswith("pg_") or schema == "information_schema":
        raise StoreError(f"error: invalid schema {schema!r}: names starting with pg_ are PostgreSQL's own")
    return schema


def parse_url(url: str) -> StoreURL:
    if url.startswith("sqlite:"):
        path = url[len("sqlite:") :]
        if path.startswith("//"):
            path = path[2:]
        if not path:
            raise StoreError("error: sqlite: needs a file path, e.g. sqlite:kreplay.db")
        if "\x00" in path:
            raise StoreError("error: sqlite: the file path contains a NUL byte")
        return StoreURL(url, "sqlite", path=path)
    if url.startswith("memory:"):
        name = url[len("memory:") :]
        if not _MEMORY_NAME.fullmatch(name):
            raise StoreError(f"error: memory store names use letters, digits, '.', '_' and '-': {name!r}")
        return StoreURL(url, "memory", name=name)
    if url.startswith(("postgresql://", "postgres://")):
        return _parse_postgres(url)
    raise StoreError(
        f"error: unknown store {url!r}: expected sqlite:PATH, memory: or postgresql://user@host:port/db"
    )


def _parse_postgres(url: str) -> StoreURL:
    try:
        parsed = urlparse(url)
        port = parsed.port or 5432
    except ValueError as exc:
        text = str(exc)
        raise StoreError(f"error: invalid PostgreSQL URL: {text[:1].lower()}{text[1:]}") from None
    try:
        query = parse_qs(parsed.query, keep_blank_values=True, strict_parsing=bool(parsed.query))
    except ValueError:
        raise StoreError(f"error: invalid PostgreSQL URL query {parsed.query!r}: expected ?schema=NAME") from None
    unknown = sorted(set(query) - _PG_PARAMS)
    if unknown:
        raise StoreError(
            f"error: unknown PostgreSQL URL parameter {unknown[0]!r}: expected one of {', '.join(sorted(_PG_PARAMS))}"
        )
    for key, values in query.items():
        if len(values) != 1:
            raise StoreError(f"error: PostgreSQL URL parameter {key!r} is given {len(values)} times")
    schema = check_schema(query["schema"][0]) if "schema" in query else "public"
    timeout = DEFAULT_CONNECT_TIMEOUT
    if "connect_timeout" in query:
        text = query["connect_timeout"][0]
        if not text.isdigit() or not 1 <= int(text) <= 600:
            raise StoreError(f"error: connect_timeout must be whole seconds from 1 to 600, got {text!r}")
        timeout = int(text)
    sslmode = query.get("sslmode", [""])[0]
    if sslmode and sslmode not in _SSLMODES:
        raise StoreError(f"error: sslmode must be one of {', '.join(sorted(_SSLMODES))}, got {sslmode!r}")
    dbname = unquote((parsed.path or "/").lstrip("/")) or "postgres"
    if "/" in dbname:
        raise StoreError(f"error: invalid database name {dbname!r} in the PostgreSQL URL")
    for part, value in (("host", parsed.hostname or ""), ("database", dbname), ("user", parsed.username or "")):
        if "\x00" in value:
            raise StoreError(f"error: the PostgreSQL URL's {part} contains a NUL byte")
    return StoreURL(
        url,
        "postgresql",
        host=parsed.hostname or "127.0.0.1",
        port=port,
        dbname=dbname,
        user=unquote(parsed.username or "postgres"),
        password=unquote(parsed.password or ""),
        schema=schema,
        connect_timeout=timeout,
        sslmode=sslmode,
    )
