"""Reading outside text that may be hostile: JSON lines and YAML documents, within limits.

Everything a user hands us (a history line, a manifest file) is read here first, so a file
cannot hang the process, exhaust its memory or end in a traceback:

- `MAX_DOCUMENT_BYTES`: one JSON line, or one YAML document with its aliases expanded, holds at
  most 3 MiB, kube-apiserver's limit on one request body (a 500-byte YAML bomb that expands to
  gigabytes stops at the alias that crosses the limit, before anything is built);
- `MAX_DEPTH`: objects and lists nest at most 100 levels (the deepest path of a real manifest is
  a dozen; Python's own recursion would give out near 1,000);
- a recursive YAML anchor (`x: &a [*a]`) is refused;
- a key given twice in one object is refused by name, as the API server's strict field
  validation does (`duplicate field "op"`), instead of the last one silently winning;
- the text must be UTF-8 (a leading byte order mark is accepted and dropped); NaN, Infinity and
  numbers too large for a float are refused, as Go's encoding/json refuses them.

Errors are `InputError`s that print as `FILE:LINE: field: message` (the one style every input
error uses); the field is a Kubernetes field path (`spec.template.spec.containers[0].image`).
YAML is read with PyYAML's safe loader (libyaml's when it is there), timestamps left as the
strings they are in JSON.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

MAX_DOCUMENT_BYTES = 3 * 1024 * 1024  # kube-apiserver's MaxRequestBodyBytes
MAX_DEPTH = 100
_BOM = "\ufeff"


class InputError(Exception):
    """A file, line or document that is refused: prints as `FILE:LINE: field: message`."""

    def __init__(self, line: int, field: str, message: str, source: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.field = field
        self.message = message
        self.source = source

    def __str__(self) -> str:
        return located(self.source, self.line, self.field, self.message)


def located(source: str, line: int, field: str, message: str) -> str:
    """The one error style: `FILE:LINE: field: message`, leaving out what is not known."""
    where = ":".join(part for part in (source, str(line) if line else "") if part)
    parts = [where] if where else []
    if field:
        parts.append(field)
    parts.append(message)
    return ": ".join(parts)


def child(path: str, key: Any) -> str:
    """A field path one level down: `spec` + `replicas`, `containers` + 0 -> `containers[0]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _too_deep() -> str:
    return f"nested more than {MAX_DEPTH} levels deep (the limit on input; see the README's Limits on input)"


def _shown(path: str) -> str:
    """A path too long to print whole (a 5,000-level nesting) keeps its head and its depth."""
    parts = _split_path(path)
    if len(parts) <= 8:
        return path
    head = ""
    for part in parts[:6]:
        head = child(head, part)
    return f"{head}...({len(parts)} levels)"


def decode_text(data: bytes, source: str = "") -> str:
    """Bytes as UTF-8 text (a leading BOM dropped); the line of the first bad byte otherwise."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        raise InputError(line, "", f"not UTF-8: byte 0x{data[exc.start]:02x} at column {column}", source) from None
    return text.removeprefix(_BOM)


# --- JSON --------------------------------------------------------------------------------------


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


class _WithDuplicate(dict):  # type: ignore[type-arg]
    """An object that had `key` twice (only built when looking for where that was)."""

    key = ""


def _strict_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return out


def _marking_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        marked = _WithDuplicate(pairs)
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                marked.key = key
                break
            seen.add(key)
        return marked
    return out


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is out of range")
    return value


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_STRICT = json.JSONDecoder(object_pairs_hook=_strict_pairs, parse_float=_finite, parse_constant=_constant)
_MARKING = json.JSONDecoder(object_pairs_hook=_marking_pairs, parse_float=_finite, parse_constant=_constant)
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"\s*:?|[\[\]{},]')


def _json_depth_path(text: str) -> str | None:
    """The path of the first value nested deeper than MAX_DEPTH, or None: a scan of strings
    and brackets only, so it never recurses however deep the text goes."""
    found = json_too_deep(text)
    return found[0] if found is not None else None


def json_too_deep(text: str) -> tuple[str, int] | None:
    """The path (from its top-level value) and text offset of the first value nested deeper
    than MAX_DEPTH, or None; `text` may hold several JSON values one after the other."""
    stack: list[list[Any]] = []  # [is_object, key or index]
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token in ("{", "["):
            if len(stack) >= MAX_DEPTH:
                path = ""
                for frame in stack:
                    path = child(path, frame[1])
                return path, m.start()
            stack.append([token == "{", 0 if token == "[" else ""])
        elif token in ("}", "]"):
            if stack:
                stack.pop()
        elif token == ",":
            if stack and not stack[-1][0]:
                stack[-1][1] += 1
        elif token.endswith(":") and stack and stack[-1][0]:
            try:
                stack[-1][1] = json.loads(token[:-1].rstrip())
            except ValueError:
                stack[-1][1] = "?"
    return None


def _find_duplicate(value: Any, path: str = "") -> tuple[str, str]:
    todo: list[tuple[Any, str]] = [(value, path)]
    while todo:
        item, at = todo.pop()
        if isinstance(item, _WithDuplicate):
            return at, item.key
        if isinstance(item, dict):
            todo.extend((v, child(at, k)) for k, v in reversed(list(item.items())))
        elif isinstance(item, list):
            todo.extend((v, child(at, i)) for i, v in reversed(list(enumerate(item))))
    return path, ""


def load_json(text: str, line: int = 0, source: str = "") -> Any:
    """One JSON text (a history line) within the limits; raises InputError naming the field."""
    if len(text) > MAX_DOCUMENT_BYTES and len(text.encode("utf-8")) > MAX_DOCUMENT_BYTES:
        raise InputError(line, "", f"{_size(len(text.encode('utf-8')))} on one line: one operation may hold at most {_size(MAX_DOCUMENT_BYTES)}, kube-apiserver's limit on one request", source)
    if text.count("{") + text.count("[") > MAX_DEPTH:
        deep = _json_depth_path(text)
        if deep is not None:
            raise InputError(line, _shown(deep), _too_deep(), source)
    try:
        value = _STRICT.decode(text)
    except _Duplicate:
        at, key = _find_duplicate(_MARKING.decode(text))
        raise InputError(line, child(at, key), f'duplicate field "{key}"', source) from None
    except json.JSONDecodeError as exc:
        raise InputError(line, "", f"not a JSON object on one line: {exc.msg} (column {exc.colno})", source) from None
    except ValueError as exc:
        raise InputError(line, "", f"not valid JSON: {exc}", source) from None
    except RecursionError:
        raise InputError(line, "", _too_deep(), source) from None
    if "\\u" in text.lower():  # an escape may name a lone surrogate, which is not a character
        at = _lone_surrogate(value)
        if at is not None:
            raise InputError(line, at, "a \\u escape names a lone UTF-16 surrogate, not a character: the text is not valid UTF-8", source)
    return value


def _lone_surrogate(value: Any) -> str | None:
    todo: list[tuple[Any, str]] = [(value, "")]
    while todo:
        item, at = todo.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return at
        elif isinstance(item, dict):
            for k, v in item.items():
                if not isinstance(k, str) or _lone_surrogate(k) is None:
                    todo.append((v, child(at, k)))
                else:
                    return child(at, "?")
        elif isinstance(item, list):
            todo.extend((v, child(at, i)) for i, v in enumerate(item))
    return None


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MiB".replace(".0 MiB", " MiB")
    if n >= 1024:
        return f"{n / 1024:.1f} KiB".replace(".0 KiB", " KiB")
    return f"{n} bytes"


def load_json_documents(text: str, source: str = "") -> list[Document]:
    """JSON values one after another, whitespace between them (what `kubectl get -w -o json`
    prints: pretty-printed objects, not lines), each within the limits, as Documents so errors
    can name a field's line. A value may be larger than one object's limit (a List): the
    reader of its items checks them one by one."""
    documents: list[Document] = []
    position = counted = 0
    line = 1
    while True:
        while position < len(text) and text[position] in " \t\r\n":
            position += 1
        if position >= len(text):
            return documents
        line += text.count("\n", counted, position)  # counted once: a stream of many objects stays linear
        counted = position

        def too_deep(start: int = position, line: int = line) -> InputError:
            # where: a scan of strings and brackets from this value on (only when refusing)
            found = json_too_deep(text[start:])
            if found is None:
                return InputError(line, "", _too_deep(), source)
            return InputError(line + text.count("\n", start, start + found[1]), _shown(found[0]), _too_deep(), source)

        try:
            value, end = _STRICT.raw_decode(text, position)
        except _Duplicate:
            value, end = _MARKING.raw_decode(text, position)
            at, key = _find_duplicate(value)
            field = child(at, key)
            raise InputError(_duplicate_line(text[position:end], line, at, key) or line, field, f'duplicate field "{key}"', source) from None
        except json.JSONDecodeError as exc:
            raise InputError(exc.lineno, "", f"not valid JSON: {exc.msg} (column {exc.colno})", source) from None
        except ValueError as exc:
            raise InputError(line, "", f"not valid JSON: {exc}", source) from None
        except RecursionError:
            raise too_deep() from None
        if _depth_exceeds(value):
            raise too_deep()
        body = text[position:end]
        if "\\u" in body.lower():
            at_field = _lone_surrogate(value)
            if at_field is not None:
                raise InputError(line, at_field, "a \\u escape names a lone UTF-16 surrogate, not a character: the text is not valid UTF-8", source)
        documents.append(Document(value, line, len(documents) + 1, source, body, line))
        position = end


def _depth_exceeds(value: Any) -> bool:
    """Whether a decoded value nests deeper than MAX_DEPTH (a walk without recursion)."""
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, dict):
            todo.extend((v, depth + 1) for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list):
            todo.extend((v, depth + 1) for v in item if isinstance(v, dict | list))
    return False


def _duplicate_line(text: str, first_line: int, parent: str, key: str) -> int:
    """The line of the second `key` in the object at `parent` (the one that is refused)."""
    import yaml

    base, _ = _loaders()
    try:
        node = yaml.compose(text, Loader=base)
    except (yaml.YAMLError, RecursionError):
        return 0
    for part in _split_path(parent):
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return 0
    if not isinstance(node, yaml.MappingNode):
        return 0
    keys = [k for k, _ in node.value if isinstance(k, yaml.ScalarNode) and k.value == key]
    return keys[1].start_mark.line + first_line if len(keys) > 1 else 0


def size_text(n: int) -> str:
    """A size as the limits' messages print it: `3 MiB`, `1.5 KiB`, `12 bytes`."""
    return _size(n)


# --- YAML --------------------------------------------------------------------------------------


@dataclass
class Document:
    """One YAML document of a file: its data and where it is, to name lines in errors."""

    data: Any
    line: int  # 1-based line where the document's content starts
    index: int  # 1-based position in the file
    source: str
    text: str  # the document's own text, kept to find a field's line when one is refused
    first_line: int  # the line `text` starts at
    item_lines: list[int] = field(default_factory=list)  # a List's items' lines, found in one pass

    def line_of(self, path: str) -> int:
        """The line of the field at `path` (`spec.template.spec.containers[0].image`), or of
        the nearest enclosing field found; the document's line if none is."""
        return _line_of(self.text, self.first_line, path) or self.line

    def error(self, path: str, message: str) -> InputError:
        return InputError(self.line_of(path), path, message, self.source)


def _loader_classes() -> tuple[type, type]:
    import yaml

    base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader

    class Loader(base):  # type: ignore[misc, valid-type]
        """The safe loader without timestamps: a date stays the string it is in JSON."""

    Loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    return base, Loader


_LOADERS: tuple[type, type] | None = None


def _loaders() -> tuple[type, type]:
    global _LOADERS
    if _LOADERS is None:
        _LOADERS = _loader_classes()
    return _LOADERS


class _Frame:
    __slots__ = ("anchor", "mapping", "key", "keys", "size", "expect_key", "index")

    def __init__(self, anchor: str | None, mapping: bool) -> None:
        self.anchor = anchor
        self.mapping = mapping
        self.key: Any = 0 if not mapping else ""
        self.keys: set[str] = set()
        self.size = 2
        self.expect_key = True
        self.index = -1


def _yaml_error(exc: Exception, source: str, text: str = "") -> InputError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else 0
    position = getattr(exc, "position", None)  # a ReaderError: a character YAML does not allow
    if not line and isinstance(position, int) and text:
        line = text.count("\n", 0, position) + 1
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    if getattr(exc, "reason", None) and isinstance(getattr(exc, "character", None), str):
        problem = f"unacceptable character #x{ord(exc.character):04x}: {exc.reason}"  # type: ignore[attr-defined]
    context = getattr(exc, "context", None)
    text = f"{context}: {problem}" if context and problem else problem
    return InputError(line, "", f"not valid YAML: {text}", source)


class _ScannerNestingLimit(Exception):
    """libyaml refused a nesting depth before the walk reached MAX_DEPTH."""


def _check_events(text: str, source: str, max_bytes: int = MAX_DOCUMENT_BYTES) -> list[tuple[int, int, int, int, list[int]]]:
    """Walk the YAML events once, before anything is built: nesting depth, expanded size with
    aliases counted, recursive anchors and duplicate keys. Returns each document's
    (content line, first line, start offset, end offset, item lines) so it can be located later."""
    import yaml

    base, _ = _loaders()
    try:
        return list(_walk_events(text, source, max_bytes, base))
    except _ScannerNestingLimit:
        # libyaml (bundled in PyYAML's wheels since 6.0.4) stops at 1,000 levels, and in a flow
        # collection its scanner reads ahead along the line (a `[` may start a key) before the
        # walk has seen 100 levels; the pure-Python scanner has no such limit, so the walk
        # reaches MAX_DEPTH there and names the field
        return list(_walk_events(text, source, max_bytes, yaml.SafeLoader))


def _walk_events(text: str, source: str, max_bytes: int, base: type) -> Iterator[tuple[int, int, int, int, list[int]]]:
    import yaml

    anchors: dict[str, int] = {}
    stack: list[_Frame] = []
    doc_start = (0, 0)
    content_line = 0
    total = 0
    item_start = 0  # `total` when the current element of a List's items began
    item_lines: list[int] = []  # the line of each element of a top-level `items` sequence

    def path() -> str:
        out = ""
        for frame in stack:
            if frame.mapping:
                out = child(out, frame.key)
            else:
                out = child(out, frame.index)
        return out

    def in_items() -> bool:
        """Inside an element of a top-level `items` sequence: a List's object."""
        return len(stack) >= 2 and stack[0].mapping and stack[0].key == "items" and not stack[1].mapping

    def add(size: int, line: int) -> None:
        nonlocal total
        total += size
        if total <= MAX_DOCUMENT_BYTES:
            return
        if max_bytes == MAX_DOCUMENT_BYTES or not in_items() or total - item_start > MAX_DOCUMENT_BYTES:
            raise InputError(line, _shown(path()), f"this document expands to more than {_size(MAX_DOCUMENT_BYTES)} with its aliases counted: one object may hold at most {_size(MAX_DOCUMENT_BYTES)}, kube-apiserver's limit on one request", source)
        if total > max_bytes:
            raise InputError(line, _shown(path()), f"this List expands to more than {_size(max_bytes)} with its aliases counted, more than the whole file holds: YAML aliases may not multiply a file", source)

    def enter_value(frame: _Frame, scalar: Any, line: int) -> bool:
        """Advance the parent to the next key or value; True when this node is a key."""
        if not frame.mapping:
            frame.index += 1
            return False
        if frame.expect_key:
            frame.expect_key = False
            key = scalar if isinstance(scalar, str) else "?"
            if isinstance(scalar, str) and key != "<<":
                if key in frame.keys:
                    frame.key = key
                    raise InputError(line, path(), f'duplicate field "{key}": a key may appear once in a mapping', source)
                frame.keys.add(key)
            frame.key = key
            return True
        frame.expect_key = True
        return False

    scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
    mapping_start, sequence_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    try:
        loader = base(text)
        try:
            while True:
                event = loader.get_event()
                if event is None:
                    break
                kind = type(event)
                if kind is scalar_event or kind is alias_event or kind is mapping_start or kind is sequence_start:
                    line = event.start_mark.line + 1
                    if not stack and not content_line:
                        content_line = line
                    is_key = enter_value(stack[-1], getattr(event, "value", None), line) if stack else False
                    if len(stack) == 2 and in_items():
                        item_start = total
                        item_lines.append(line)
                    if kind is alias_event:
                        if any(f.anchor == event.anchor for f in stack):
                            raise InputError(line, path(), f"recursive YAML anchor &{event.anchor}: an alias may not refer to a node that contains it", source)
                        size = anchors.get(event.anchor, 0)
                        add(size, line)
                        if stack:
                            stack[-1].size += size
                    elif kind is scalar_event:
                        size = len(event.value) + 2
                        total += size
                        if total > MAX_DOCUMENT_BYTES:
                            add(0, line)
                        if stack:
                            stack[-1].size += size
                        if event.anchor:
                            anchors[event.anchor] = size
                    else:
                        if is_key:
                            stack[-1].key = "?"
                        if len(stack) >= MAX_DEPTH:
                            raise InputError(line, _shown(path()), _too_deep(), source)
                        stack.append(_Frame(event.anchor, kind is mapping_start))
                        add(2, line)
                elif kind in ends:
                    frame = stack.pop()
                    if frame.anchor:
                        anchors[frame.anchor] = frame.size
                    if stack:
                        stack[-1].size += frame.size
                elif kind is yaml.DocumentStartEvent:
                    total, anchors, content_line, item_lines = 0, {}, 0, []
                    mark = event.start_mark
                    doc_start = (mark.line + 1, mark.index)
                elif kind is yaml.DocumentEndEvent:
                    end = event.end_mark.index if event.end_mark is not None else len(text)
                    yield content_line or doc_start[0], doc_start[0], doc_start[1], end, item_lines
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        if base is not yaml.SafeLoader and "exceeded maximum nesting depth" in str(exc):
            raise _ScannerNestingLimit from None
        raise _yaml_error(exc, source, text) from None


def load_yaml_documents(data: bytes | str, source: str = "", max_bytes: int = MAX_DOCUMENT_BYTES) -> list[Document]:
    """Every document of a YAML file (empty ones left out), each within the limits.

    `max_bytes` bounds one document with its aliases expanded: one object's limit by default;
    a reader of Lists (a whole cluster in one document) passes the file's own size, so aliases
    still cannot make a document larger than the text it came from."""
    import yaml

    text = decode_text(data, source) if isinstance(data, bytes) else data.removeprefix(_BOM)
    spans = _check_events(text, source, max(max_bytes, MAX_DOCUMENT_BYTES))
    _, loader_class = _loaders()
    try:
        values = [_string_keys(v) for v in yaml.load_all(text, Loader=loader_class)]
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source, text) from None
    except RecursionError:
        raise InputError(0, "", _too_deep(), source) from None
    documents = []
    for index, ((line, first_line, start, end, items), value) in enumerate(zip(spans, values, strict=False), start=1):
        if value is None:
            continue
        documents.append(Document(value, line, index, source, text[start:end], first_line, items))
    return documents


def _key_text(key: Any) -> Any:
    # sigs.k8s.io/yaml's YAMLToJSON writes a non-string key as text: true, 1, null
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, int | float):
        return str(key)
    return key


def _string_keys(value: Any) -> Any:
    """A document with every mapping key a string, as kubectl turns YAML into JSON."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            if any(not isinstance(k, str) for k in item):
                converted = {_key_text(k): v for k, v in item.items()}
                item.clear()
                item.update(converted)
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return value


def _line_of(text: str, first_line: int, path: str) -> int:
    """The line of the deepest node on `path` found in this document's text."""
    import yaml

    base, _ = _loaders()
    try:
        node = yaml.compose(text, Loader=base)
    except (yaml.YAMLError, RecursionError):
        return 0
    found = node.start_mark.line + first_line if node is not None else 0
    for part in _split_path(path):
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            match = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
            key = next((k for k, _ in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
            if match is None or key is None:
                break
            found, node = key.start_mark.line + first_line, match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            found = node.start_mark.line + first_line
        else:
            break
    return found


_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _split_path(path: str) -> list[str | int]:
    return [int(index) if index else name for name, index in _PATH_PART.findall(path)]
