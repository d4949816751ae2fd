"""The resource builder: every way a kubectl command line names objects, turned into one list.

Mirrors k8s.io/cli-runtime/pkg/resource's Builder: `TYPE` (every object of the type, or those a
`-l` selector picks), `TYPE NAME...`, `TYPE1,TYPE2 NAME` (each type with each name),
`TYPE/NAME...`, and `-f FILE` (files, directories with `-R`, `-` for stdin, multi-document YAML,
`List`s) all become `Info`s before any verb acts, with kubectl's own error messages for the
forms it refuses. A verb asks for what it needs (`allow_empty_selector` for get's "every
object", `require_names` for delete's refusal of a bare type), then visits the infos.

Kinds the engine does not model but kubectl users expect to `get` (`events`, `namespaces`,
`endpoints`) are derived here from the cluster and its log (see `derived`), and `all` expands
to kubectl's category.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from replay.cli.common import UsageError, UserError

if TYPE_CHECKING:
    from engine.api.state import Cluster
    from engine.store import EventStore

MISSING_RESOURCE = (
    "You must provide one or more resources by argument or filename.\n"
    "Example resource specifications include:\n"
    "   '-f rsrc.yaml'\n"
    "   '--filename=rsrc.json'\n"
    "   '<resource> <name>'\n"
    "   '<resource>'"
)

# kubectl's "all" category (k8s.io/kubectl's legacy category expander), in its order; kinds the
# store cannot hold are skipped
ALL_CATEGORY = ("Pod", "ReplicationController", "Service", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet", "HorizontalPodAutoscaler", "CronJob", "Job")

# kinds `get` derives when the store holds none of their own (see replay.cli.derived)
DERIVED_ALIASES = {
    "event": "Event",
    "events": "Event",
    "ev": "Event",
    "namespace": "Namespace",
    "namespaces": "Namespace",
    "ns": "Namespace",
    "endpoints": "Endpoints",
    "ep": "Endpoints",
}


@dataclass(frozen=True)
class Info:
    """One object a command line named: found in the cluster, read from a file, or missing."""

    kind: str
    namespace: str
    name: str
    obj: Any = None  # a KubeObject, or a manifest dict for kinds the engine does not model
    source: str = ""  # "FILE:LINE" for objects read from -f
    path: str = ""  # the file an object read from -f came from
    locate: Any = None  # field path -> its line in that file (safeload.Document.line_of)


@dataclass
class Request:
    """The arguments and flags that select objects, as a verb's parser read them."""

    args: Sequence[str] = ()
    filenames: Sequence[str] = ()
    recursive: bool = False
    selector: str = ""
    select_all: bool = False
    all_namespaces: bool = False
    namespace: str = "default"
    namespace_given: bool = False

    @classmethod
    def of(cls, args: argparse.Namespace, positional: Sequence[str]) -> Request:
        return cls(
            args=list(positional),
            filenames=list(getattr(args, "filename", None) or []),
            recursive=bool(getattr(args, "recursive", False)),
            selector=getattr(args, "selector", "") or "",
            select_all=bool(getattr(args, "all", False)),
            all_namespaces=bool(getattr(args, "all_namespaces", False)),
            namespace=args.namespace,
            namespace_given=bool(getattr(args, "namespace_given", False)),
        )


@dataclass
class Selection:
    """What the arguments asked for, before looking anything up."""

    types: list[str] = field(default_factory=list)  # canonical kinds, for TYPE [NAME...]
    names: list[str] = field(default_factory=list)
    tuples: list[tuple[str, str]] = field(default_factory=list)  # (kind, name) for TYPE/NAME
    documents: list[FileDocument] = field(default_factory=list)  # documents read from -f
    single_item: bool = False  # one object was named: -o json prints it, not a List


@dataclass
class Result:
    infos: list[Info]
    errors: list[str]  # kubectl's "Error from server (NotFound): ..." lines, in order
    selection: Selection


def resolve_type(text: str, custom: dict[str, str] | None = None) -> list[str]:
    """One TYPE argument to canonical kinds: `ds`, `deployments.apps`, `all`, `events`."""
    from replay.kinds import UnknownKind, resolve, resolve_in_history

    key = text.strip().lower()
    if key == "all":
        kinds = []
        for kind in ALL_CATEGORY:
            try:
                kinds.append(resolve(kind))
            except UnknownKind:
                continue
        return kinds
    try:
        return [resolve(text, custom)]
    except UnknownKind as exc:
        for suffix in (".v1", ".events.k8s.io", ".v1.events.k8s.io"):
            key = key.removesuffix(suffix)
        if key in DERIVED_ALIASES:
            return [DERIVED_ALIASES[key]]
        try:
            return [resolve_in_history(text.strip())]  # a custom resource's Kind, as manifests spell it
        except UnknownKind:
            raise UserError(f"error: {exc}") from None


def _split_types(text: str, custom: dict[str, str] | None = None) -> list[str]:
    """SplitResourceArgument: `pods,svc` -> kinds, duplicates dropped, order kept."""
    kinds: list[str] = []
    for part in text.split(","):
        if not part:
            continue
        for kind in resolve_type(part, custom):
            if kind not in kinds:
                kinds.append(kind)
    return kinds


def parse(request: Request, *, verb: str, custom: dict[str, str] | None = None) -> Selection:
    """The argument forms, as ResourceTypeOrNameArgs and FilenameParam accept them."""
    selection = Selection()
    args = [a for a in request.args]
    if request.filenames:
        if args:
            raise UsageError("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well", verb=verb)
        selection.documents = read_documents(request.filenames, request.recursive)
        selection.single_item = len(selection.documents) == 1
        return selection
    # normalizeMultipleResourcesArgs: `a,b NAME...` is `a/NAME b/NAME ...`
    if len(args) >= 2 and len([p for p in args[0].split(",") if p]) > 1 and "/" not in args[0]:
        args = [f"{t}/{n}" for t in args[0].split(",") if t for n in args[1:]]
    slashed = sum(1 for a in args if "/" in a)
    if slashed and slashed != len(args):
        raise UsageError(
            "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form "
            "(e.g. 'kreplay get resource/<resource_name>' instead of 'kreplay get resource resource/<resource_name>'",
            verb=verb,
        )
    if slashed:
        for arg in args:
            parts = arg.split("/")
            if len(parts) != 2:
                raise UsageError("arguments in resource/name form may not have more than one slash", verb=verb)
            type_, name = parts
            if not type_ or not name or len([p for p in type_.split(",") if p]) != 1:
                raise UsageError("arguments in resource/name form must have a single resource and name", verb=verb)
            for kind in resolve_type(type_, custom):
                selection.tuples.append((kind, name))
        selection.single_item = len(selection.tuples) == 1
        return selection
    if args:
        selection.types = _split_types(args[0], custom)
        selection.names = list(args[1:])
        selection.single_item = len(selection.names) == 1 and len(selection.types) == 1
    return selection


def build(
    request: Request,
    source: Source | None,
    *,
    verb: str,
    allow_empty_selector: bool = False,
    require_names: bool = False,
) -> Result:
    """Look up what `request` names. Missing objects become kubectl's NotFound lines in
    `errors` (the verb decides whether to go on, as kubectl's ContinueOnError does)."""
    selection = parse(request, verb=verb, custom=source.custom_names() if source is not None else None)
    infos: list[Info] = []
    errors: list[str] = []
    if request.filenames:
        for doc in selection.documents:
            kind, namespace, name = identify(doc.body, doc, request)
            infos.append(Info(kind, namespace, name, doc.body, doc.source, doc.path, doc.locate))
        return Result(infos, errors, selection)
    selecting = bool(request.selector) or request.select_all
    assert source is not None, "only -f documents can be built without a cluster"
    if selection.tuples:
        if selecting:
            raise UsageError("selectors and the all flag cannot be used when passing resource/name arguments", verb=verb)
        for kind, name in selection.tuples:
            info = source.get(kind, request.namespace, name)
            if info is None:
                errors.append(not_found(kind, name))
            else:
                infos.append(info)
        return Result(infos, errors, selection)
    if not selection.types:
        if selecting:
            raise UsageError("at least one resource must be specified to use a selector", verb=verb)
        raise UsageError(MISSING_RESOURCE, verb=verb)
    if selection.names:
        if request.selector:
            raise UsageError("name cannot be provided when a selector is specified", verb=verb)
        if request.select_all:
            raise UsageError("setting 'all' parameter but found a non empty selector. ", verb=verb)
        for kind in selection.types:
            for name in selection.names:
                info = source.get(kind, request.namespace, name)
                if info is None:
                    errors.append(not_found(kind, name))
                else:
                    infos.append(info)
        return Result(infos, errors, selection)
    if not selecting and not allow_empty_selector:
        if require_names:
            raise UsageError("resource(s) were provided, but no name was specified", verb=verb)
    matcher = _selector(request.selector)
    namespace = None if request.all_namespaces else request.namespace
    for kind in selection.types:
        for info in source.list(kind, namespace):
            if matcher is None or matcher.matches(_labels(info.obj)):
                infos.append(info)
    return Result(infos, errors, selection)


def _selector(text: str) -> Any:
    if not text:
        return None
    from engine.api.selectors import SelectorError
    from engine.api.selectors import parse as parse_selector

    try:
        return parse_selector(text)
    except SelectorError as exc:
        raise UserError(f"error: unable to parse requirement: {exc}") from None


def _labels(obj: Any) -> dict[str, str]:
    if isinstance(obj, dict):
        return dict((obj.get("metadata") or {}).get("labels") or {})
    return dict(obj.metadata.labels)


def plural(kind: str) -> str:
    from engine.api.resources import plural_of

    return plural_of(kind)


def not_found(kind: str, name: str) -> str:
    return f'Error from server (NotFound): {plural(kind)} "{name}" not found'


def identify(doc: dict[str, Any], origin: FileDocument, request: Request) -> tuple[str, str, str]:
    """Kind, namespace and name of a document from -f, with kubectl's namespace rules: the
    document's namespace wins; -n fills it in; both given and different is an error."""
    from engine.api.objects import CLUSTER_SCOPED

    kind_text = doc.get("kind")
    meta = doc.get("metadata") or {}
    from engine.api.objects import KINDS, ObjectDecodeError, decode_object, type_meta_error

    missing = type_meta_error(doc)
    if missing is not None:  # kubectl's client-side validation refuses it before any request
        raise UserError("error: " + origin.error(missing.field, missing.message))
    assert isinstance(kind_text, str)

    if kind_text not in KINDS:
        # a manifest names its Kind exactly: let decoding say what is wrong, as apply would
        try:
            decode_object(doc)
        except ObjectDecodeError as exc:
            raise UserError("error: " + origin.error(exc.field, exc.message)) from None
    kind = kind_text
    name = meta.get("name") or ""
    if kind in CLUSTER_SCOPED:
        return kind, "", name
    namespace = meta.get("namespace") or ""
    if namespace and request.namespace_given and namespace != request.namespace:
        raise UserError(
            f"error: the namespace from the provided object \"{namespace}\" does not match the namespace \"{request.namespace}\". "
            "You must pass '--namespace=" + namespace + "' to perform this operation."
        )
    return kind, namespace or request.namespace, name


# --- reading -f ----------------------------------------------------------------------------------

_EXTENSIONS = (".json", ".yaml", ".yml")


def _expand(paths: Sequence[str], recursive: bool) -> list[str]:
    files: list[str] = []
    for path in paths:
        if path == "-":
            files.append(path)
            continue
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    if name.endswith(_EXTENSIONS):
                        files.append(os.path.join(root, name))
                if not recursive:
                    break
            continue
        if not os.path.exists(path):
            raise UserError(f'error: the path "{path}" does not exist')
        files.append(path)
    return files


@dataclass(frozen=True)
class FileDocument:
    """One object read from -f, with where it is: errors name FILE:LINE: field."""

    body: dict[str, Any]
    path: str  # the file as given (`-` for stdin)
    line: int
    prefix: str = ""  # `items[N]` for an object inside a List
    lines: Any = None  # field path -> line (the file's safeload.Document.line_of)

    @property
    def source(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.prefix}" if self.prefix else where

    def locate(self, field_path: str) -> int:
        full = ".".join(p for p in (self.prefix, field_path) if p)
        return self.lines(full) if self.lines is not None else self.line

    def error(self, field_path: str, message: str) -> str:
        from replay.safeload import located

        full = ".".join(p for p in (self.prefix, field_path) if p)
        return located(self.path, self.locate(field_path), full, message)


def read_documents(paths: Sequence[str], recursive: bool = False) -> list[FileDocument]:
    """The objects in -f arguments: files, directories (`-R` to recurse), `-` for stdin, read
    by replay.documents (several documents per file, concatenated JSON, `List`s expanded, gzip,
    within replay.safeload's limits), each with its file and line for errors."""
    from replay import documents
    from replay.safeload import InputError

    found: list[FileDocument] = []
    for path in _expand(paths, recursive):
        try:
            for entry in documents.entries(path):
                found.append(FileDocument(entry.object, path, entry.line, entry.item, entry.lines))
        except InputError as exc:
            raise UserError(f"error: {exc}") from None
    return found


# --- where objects come from ----------------------------------------------------------------------


def _shown(obj: Any) -> Any:
    """What the printers get: a typed object, or the manifest of an object of a kind the engine
    does not model (an OpaqueObject), which they show as they show every manifest."""
    from engine.api.objects import OpaqueObject, to_manifest

    return to_manifest(obj) if type(obj) is OpaqueObject else obj


class Source:
    """The cluster (and, for derived kinds, its log) as the builder looks things up in it."""

    def __init__(self, cluster: Cluster, store: EventStore | None = None) -> None:
        self.cluster = cluster
        self.store = store
        self._derived: dict[str, list[Info]] = {}

    def _stored_kind(self, kind: str) -> bool:
        return kind in self.cluster.objects

    def custom_names(self) -> dict[str, str]:
        """kubectl's names for the custom kinds in the store (replay.kinds.custom_names)."""
        from replay.kinds import custom_names

        return custom_names(self.cluster.objects, self.cluster.list("CustomResourceDefinition"))

    def get(self, kind: str, namespace: str, name: str) -> Info | None:
        from engine.api.objects import CLUSTER_SCOPED

        ns = "" if kind in CLUSTER_SCOPED or kind == "Namespace" or self.cluster.cluster_scoped(kind) else namespace
        if self._stored_kind(kind):
            obj = self.cluster.get(kind, ns, name)
            if obj is not None:
                return Info(kind, ns, name, _shown(obj))
            if kind not in DERIVED_KINDS:
                return None
        for info in self._derive(kind):
            if info.namespace == ns and info.name == name:
                return info
        return None

    def list(self, kind: str, namespace: str | None) -> list[Info]:
        from engine.api.objects import CLUSTER_SCOPED

        if kind in CLUSTER_SCOPED or kind == "Namespace" or self.cluster.cluster_scoped(kind):
            namespace = None
        infos: list[Info] = []
        if self._stored_kind(kind):
            infos = [Info(kind, o.metadata.namespace, o.metadata.name, _shown(o)) for o in self.cluster.list(kind, namespace)]
        if kind in DERIVED_KINDS:
            have = {(i.namespace, i.name) for i in infos}
            for info in self._derive(kind):
                if (info.namespace, info.name) in have:
                    continue
                if namespace is None or kind == "Namespace" or info.namespace == namespace:
                    infos.append(info)
            infos.sort(key=lambda i: (i.namespace, i.name))
        return infos

    def _derive(self, kind: str) -> list[Info]:
        if kind not in self._derived:
            from replay import derived

            self._derived[kind] = DERIVED_KINDS[kind](derived, self)
        return self._derived[kind]


DERIVED_KINDS: dict[str, Callable[[Any, Source], list[Info]]] = {
    "Event": lambda d, s: [Info("Event", e["metadata"]["namespace"], e["metadata"]["name"], e) for e in d.events(s.cluster, s.store)],
    "Namespace": lambda d, s: [Info("Namespace", "", n["metadata"]["name"], n) for n in d.namespaces(s.cluster)],
    "Endpoints": lambda d, s: [Info("Endpoints", e["metadata"]["namespace"], e["metadata"]["name"], e) for e in d.endpoints(s.cluster)],
}


def group_by_kind(infos: Iterable[Info]) -> list[tuple[str, list[Info]]]:
    """Consecutive infos of one kind together, in order: one table each, as kubectl prints."""
    groups: list[tuple[str, list[Info]]] = []
    for info in infos:
        if groups and groups[-1][0] == info.kind:
            groups[-1][1].append(info)
        else:
            groups.append((info.kind, [info]))
    return groups


def decode(info: Info) -> Any:
    """The typed object of a document read from -f, in the namespace the builder resolved."""
    from engine.api.objects import CLUSTER_SCOPED, ObjectDecodeError, decode_object
    from replay.safeload import located

    doc = dict(info.obj)
    if info.kind not in CLUSTER_SCOPED:
        doc["metadata"] = {**(doc.get("metadata") or {}), "namespace": info.namespace}
    try:
        return decode_object(doc)
    except ObjectDecodeError as exc:
        line = info.locate(exc.field) if info.locate is not None else 0
        raise UserError("error: " + located(info.path or info.source, line, exc.field, exc.message)) from None
