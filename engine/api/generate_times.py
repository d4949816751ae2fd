"""Generate engine/api/gotypes/times.json: where the built-in kinds the engine keeps opaque hold a
`metav1.Time` (stored in whole seconds) or a `metav1.MicroTime` (stored to the microsecond), per
Kubernetes release, read from upstream's Go types.

    python -m engine.api.generate_times API_GIT APIMACHINERY_GIT > engine/api/gotypes/times.json

API_GIT and APIMACHINERY_GIT are git directories of github.com/kubernetes/api and
github.com/kubernetes/apimachinery, as for engine/api/generate_gotypes.py (whose Go declaration
parser this reuses); each release of engine.api.gotypes.KUBERNETES_VERSIONS is read at its
newest final tag. Run offline, by hand, never at test time; the output is data only.

For every kind of engine.api.catalog.BUILTIN the engine does not model, at each version the
catalog lists, the package of kubernetes/api whose `register.go` names that group and version is
read (every hand-written .go file of it, and of the packages its types reach); the kind's struct
is walked from the top, field by field in JSON names (`json:",inline"` embeddings merged, `[]`
for a list's items, `{}` for a map's values), and every path that ends at `metav1.Time` or
`metav1.MicroTime` is listed. The object's own `metadata` is left out: every object's metadata
(a custom resource's too) is the API server's ObjectMeta, handled apart (engine/api/times.py).
CustomResourceDefinition and APIService live outside kubernetes/api (apiextensions-apiserver,
kube-aggregator) and are not listed.

Output: {"sources": {release: {repo: tag}}, "kinds": {"batch/v1 Job": [[path, "time" | "micro",
[releases]], ...]}}: each path with the releases whose types have it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from engine.api import catalog
from engine.api.generate_gotypes import declarations, release_tag
from engine.api.gotypes import KUBERNETES_VERSIONS

META = "k8s.io/apimachinery/pkg/apis/meta/v1"
TIME, MICRO_TIME = "metav1.Time", "metav1.MicroTime"
# the files of apimachinery's meta/v1 that declare the types objects embed
META_FILES = ("types.go", "time.go", "micro_time.go")
_SKIP = re.compile(r"(^zz_generated|^generated\.|_test\.go$|_swagger_doc_generated\.go$|^doc\.go$|^register\.go$)")
_GROUP = re.compile(r'^const\s+GroupName\s*=\s*"([^"]*)"', re.M)


def _git(gitdir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True, text=True).stdout


def _package_id(path: str) -> str:
    """An import path as a package id the parser's `pkgid.Name` can hold."""
    return "metav1" if path == META else re.sub(r"[^a-z0-9]", "_", path.lower())


class Release:
    """The Go types of kubernetes/api and apimachinery's meta/v1 at one release's tag, read per
    package on first use."""

    def __init__(self, api: str, apimachinery: str, release: str) -> None:
        self.api, self.apimachinery = api, apimachinery
        self.tags = {"api": release_tag(api, release)[0], "apimachinery": release_tag(apimachinery, release)[0]}
        self.files = _git(api, "ls-tree", "-r", "--name-only", self.tags["api"]).split()
        # (group, version) -> package directory, from each package's register.go
        self.packages: dict[tuple[str, str], str] = {}
        for name in self.files:
            if name.endswith("/register.go") and name.count("/") == 2:
                found = _GROUP.search(_git(api, "show", f"{self.tags['api']}:{name}"))
                if found:
                    directory = name.rsplit("/", 1)[0]
                    self.packages[(found.group(1), directory.rsplit("/", 1)[1])] = directory
        # import path -> package id, for every package of kubernetes/api and meta/v1
        dirs = {name.rsplit("/", 1)[0] for name in self.files if name.endswith(".go")}
        self.paths = {f"k8s.io/api/{d}": _package_id(f"k8s.io/api/{d}") for d in dirs} | {META: "metav1"}
        self.declared: dict[str, dict] = {}
        self.loaded: set[str] = set()

    def load(self, path: str) -> None:
        if path in self.loaded:
            return
        self.loaded.add(path)
        pkg = self.paths[path]
        if path == META:
            sources = [(self.apimachinery, f"{self.tags['apimachinery']}:pkg/apis/meta/v1/{f}") for f in META_FILES]
        else:
            directory = path.removeprefix("k8s.io/api/")
            names = [n for n in self.files if n.rsplit("/", 1)[0] == directory and n.endswith(".go") and not _SKIP.search(n.rsplit("/", 1)[1])]
            sources = [(self.api, f"{self.tags['api']}:{n}") for n in sorted(names)]
        for gitdir, spec in sources:
            shown = subprocess.run(["git", "--git-dir", gitdir, "show", spec], capture_output=True, text=True)
            if shown.returncode != 0:
                continue  # micro_time.go is not in every release
            for name, decl in declarations(shown.stdout, pkg, self.paths).items():
                self.declared.setdefault(f"{pkg}.{name}", decl)

    def declaration(self, name: str) -> dict | None:
        pkg = name.split(".", 1)[0]
        for path, pid in self.paths.items():
            if pid == pkg:
                self.load(path)
                break
        return self.declared.get(name)

    def times(self, group: str, version: str, kind: str) -> list[tuple[list[str], str]] | None:
        """The (JSON path, "time" | "micro") of every metav1.Time and MicroTime in the kind's
        object outside its own metadata; None if the release has no such kind at that version."""
        directory = self.packages.get((group, version))
        if directory is None:
            return None
        root = f"{_package_id('k8s.io/api/' + directory)}.{kind}"
        if self.declaration(root) is None:
            return None
        found: list[tuple[list[str], str]] = []
        self._walk(root, [], found, ())
        return [(path, code) for path, code in found if path[0] != "metadata"]

    def _walk(self, type_: str, path: list[str], found: list[tuple[list[str], str]], seen: tuple[str, ...]) -> None:
        type_ = type_.lstrip("*")
        if type_.startswith("[]"):
            self._walk(type_[2:], [*path, "[]"], found, seen)
            return
        if type_.startswith("map["):
            self._walk(type_[type_.index("]") + 1 :], [*path, "{}"], found, seen)
            return
        if type_ in (TIME, MICRO_TIME):
            found.append((path, "time" if type_ == TIME else "micro"))
            return
        if "." not in type_ or type_ in seen:
            return  # a Go builtin, or a type that holds itself (walked once)
        decl = self.declaration(type_)
        if decl is None:
            return  # a type from outside kubernetes/api and meta/v1 (resource.Quantity, ...): no time
        if "underlying" in decl:
            self._walk(decl["underlying"], path, found, (*seen, type_))
            return
        for _, field_type, json_name in decl.get("fields", []):
            if json_name == "-":
                continue
            self._walk(field_type, path if json_name == "" else [*path, json_name], found, (*seen, type_))


def generate(api: str, apimachinery: str) -> dict:
    from engine.api.objects import KINDS

    sources: dict[str, dict[str, str]] = {}
    kinds: dict[str, dict[tuple[tuple[str, ...], str], list[str]]] = {}
    for release in KUBERNETES_VERSIONS:
        types = Release(api, apimachinery, release)
        sources[release] = {f"github.com/kubernetes/{repo}": tag for repo, tag in sorted(types.tags.items())}
        for builtin in catalog.BUILTIN:
            if builtin.kind in KINDS:
                continue
            for version in builtin.versions:
                found = types.times(builtin.group, version, builtin.kind)
                if not found:
                    continue
                api_version = f"{builtin.group}/{version}" if builtin.group else version
                entry = kinds.setdefault(f"{api_version} {builtin.kind}", {})
                for path, code in found:
                    entry.setdefault((tuple(path), code), []).append(release)
    return {
        "sources": sources,
        "kinds": {
            key: [[list(path), code, releases] for (path, code), releases in sorted(entry.items())]
            for key, entry in sorted(kinds.items())
        },
    }


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit(__doc__)
    data = generate(argv[0], argv[1])
    text = json.dumps(data, indent=0, separators=(",", ":"))
    sys.stdout.write(re.sub(r"\n(?=[\]\"\d])", "", text) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
