"""Generate engine/api/gotypes/v1_NN.json: the Go type layout of `v1.PodTemplateSpec` at one
Kubernetes release, which `controller.ComputeHash` renders with go-spew (see
engine/api/gotypes/spew.py).

    python -m engine.api.generate_gotypes API_GIT APIMACHINERY_GIT 1.33 > engine/api/gotypes/v1_33.json

API_GIT and APIMACHINERY_GIT are git directories (bare or not) of github.com/kubernetes/api and
github.com/kubernetes/apimachinery, the published copies of the kubernetes/kubernetes staging
trees `staging/src/k8s.io/api` and `staging/src/k8s.io/apimachinery`; the release's newest
`v0.NN.P` tag (v0.33.13 for 1.33; `kubernetes-1.NN.P` before 1.17) is read from both with `git show`. Run offline, by hand,
never at test time; the output is data only.

For every struct reachable from core/v1 PodTemplateSpec the output lists its fields in Go
declaration order (exported or not: go-spew prints them all) with each field's Go type and JSON
name (an embedded field's is its type's name unless its tag says `json:",inline"`: then ""); for every named non-struct type, its underlying type. Types are written as Go writes them
with a package id instead of an import path (`[]corev1.Container`, `*metav1.Time`,
`map[corev1.ResourceName]resource.Quantity`); `packages` maps each id to the package name
reflect prints (`corev1` and `metav1` are both `v1`). The types from outside these two
repositories that the layout reaches (time.Time, inf.Dec, big.Int) are written in below, as
Go 1.9+ and gopkg.in/inf.v0 declare them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

from engine.api.gotypes.spew import GO_INTS

# package id -> (repository, path in it, package name); the files each package's types come from
PACKAGES = {
    "corev1": ("api", "core/v1", "v1", ["types.go"]),
    "metav1": (
        "apimachinery",
        "pkg/apis/meta/v1",
        "v1",
        ["types.go", "time.go", "micro_time.go", "fieldsv1_byte.go"],
    ),
    "resource": ("apimachinery", "pkg/api/resource", "resource", ["quantity.go", "amount.go"]),
    "intstr": ("apimachinery", "pkg/util/intstr", "intstr", ["intstr.go"]),
    "types": ("apimachinery", "pkg/types", "types", ["uid.go"]),
}
IMPORT_PATHS = {
    "k8s.io/api/core/v1": "corev1",
    "k8s.io/apimachinery/pkg/apis/meta/v1": "metav1",
    "k8s.io/apimachinery/pkg/api/resource": "resource",
    "k8s.io/apimachinery/pkg/util/intstr": "intstr",
    "k8s.io/apimachinery/pkg/types": "types",
    "time": "time",
    "gopkg.in/inf.v0": "inf",
    "math/big": "big",
}
# types declared outside kubernetes/api and kubernetes/apimachinery
EXTERNAL: dict[str, dict] = {
    "time.Time": {
        "fields": [
            ["wall", "uint64", "wall"],
            ["ext", "int64", "ext"],
            ["loc", "*time.Location", "loc"],
        ]
    },
    "time.Location": {"opaque": True},  # only ever nil here: a zero or UTC time
    "inf.Dec": {"fields": [["unscaled", "big.Int", "unscaled"], ["scale", "inf.Scale", "scale"]]},
    "inf.Scale": {"underlying": "int32"},
    "big.Int": {"fields": [["neg", "bool", "neg"], ["abs", "big.nat", "abs"]]},
    "big.nat": {"underlying": "[]big.Word"},
    "big.Word": {"underlying": "uint"},
}
EXTERNAL_PACKAGES = {"time": "time", "inf": "inf", "big": "big"}
# Go's predeclared types: the integer kinds spew renders as numbers, and the rest
BUILTINS = GO_INTS | {"bool", "string", "float32", "float64", "byte", "rune", "complex64", "complex128"}
ROOT = "corev1.PodTemplateSpec"


def strip_comments(src: str) -> str:
    """Go source without comments (strings, raw strings and runes kept intact)."""
    out: list[str] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif c in "\"'`":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if (src[j] == "\\" and c != "`") else 1
            out.append(src[i : j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching(src: str, start: int, open_: str = "{", close: str = "}") -> int:
    """Index of the bracket closing the one at `start` (brackets inside tags and strings skipped)."""
    depth, i = 0, start
    while i < len(src):
        c = src[i]
        if c in '"`':
            i = src.index(c, i + 1) + 1
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced brackets")


def imports(src: str) -> dict[str, str]:
    """alias -> import path of a Go file."""
    found: dict[str, str] = {}
    for m in re.finditer(r"^import\s*(\((.*?)\)|(.*?)$)", src, re.S | re.M):
        body = m.group(2) if m.group(2) is not None else m.group(3)
        for line in body.splitlines():
            parts = line.split()
            if not parts:
                continue
            path = parts[-1].strip('"')
            alias = parts[0] if len(parts) == 2 else path.rsplit("/", 1)[-1]
            if alias == "inf.v0" or path == "gopkg.in/inf.v0":
                alias = "inf" if len(parts) == 1 else alias
            found[alias] = path
    return found


def qualify(expr: str, pkg: str, aliases: dict[str, str], paths: dict[str, str] = IMPORT_PATHS) -> str:
    """A Go type expression with each named type written as `pkgid.Name` (`paths`: import path
    -> package id)."""

    def name(m: re.Match[str]) -> str:
        word = m.group(0)
        if "." in word:
            alias, _, rest = word.partition(".")
            path = aliases.get(alias)
            if path not in paths:  # fails later if a type of PodTemplateSpec reaches it
                return f"unknown-{alias}.{rest}"
            return f"{paths[path]}.{rest}"
        if word in BUILTINS or word == "map":
            return {"byte": "uint8", "rune": "int32"}.get(word, word)
        return f"{pkg}.{word}"

    return re.sub(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?", name, expr.replace(" ", ""))


def json_name(tag: str, field: str) -> str:
    m = re.search(r'json:"([^"]*)"', tag)
    if not m:
        return field
    name = m.group(1).split(",")[0]
    if name == "" and ",inline" in m.group(1):
        return ""
    return name or field


def declarations(src: str, pkg: str, paths: dict[str, str] = IMPORT_PATHS) -> dict[str, dict]:
    """The type declarations of one Go file: struct fields or underlying types."""
    src = strip_comments(src)
    aliases = imports(src)
    found: dict[str, dict] = {}
    bodies: list[str] = []
    for m in re.finditer(r"^type\s*\(", src, re.M):
        end = matching(src, m.end() - 1, "(", ")")
        bodies.append(src[m.end() : end])
    bodies.append(src)
    for body in bodies:
        for m in re.finditer(
            r"^(?:type\s+|\t)([A-Za-z_]\w*)\s+(=\s*)?(struct\s*\{|[^\n{]+)$", body, re.M
        ):
            if body is src and not m.group(0).startswith("type"):
                continue
            name, rest = m.group(1), m.group(3).strip()
            if name in found or rest.startswith("interface"):
                continue
            if rest.startswith("struct"):
                start = body.index("{", m.start(3))
                end = matching(body, start)
                found[name] = {"fields": struct_fields(body[start + 1 : end], pkg, aliases, paths)}
            elif not rest.startswith("func"):
                found[name] = {"underlying": qualify(rest.split("`")[0].strip(), pkg, aliases, paths)}
    return found


def struct_fields(body: str, pkg: str, aliases: dict[str, str], paths: dict[str, str] = IMPORT_PATHS) -> list[list[str]]:
    fields: list[list[str]] = []
    for raw in body.splitlines():
        line = raw.strip()
        if not line:
            continue
        tag = ""
        if "`" in line:
            line, tag = line[: line.index("`")].strip(), line[line.index("`") :]
        if "{" in line:
            return [["?", f"unsupported inline struct: {raw.strip()}", ""]]
        m = re.match(r"^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s+(\S.*)$", line)
        if m and not m.group(1).startswith("*"):
            for field in re.split(r"\s*,\s*", m.group(1)):
                fields.append([field, qualify(m.group(2), pkg, aliases, paths), json_name(tag, field)])
        else:  # embedded: `metav1.TypeMeta`, `*inf.Dec`, `Format`
            type_ = qualify(line, pkg, aliases, paths)
            field = line.lstrip("*").rsplit(".", 1)[-1]
            fields.append([field, type_, json_name(tag, field)])
    return fields


def named_types(expr: str) -> list[str]:
    return re.findall(r"[a-z0-9]+\.[A-Za-z_]\w*", expr)


def release_tag(gitdir: str, release: str) -> tuple[str, str]:
    """The newest final tag of a release (`1.33` -> `v0.33.13`) in a published repository, and
    its commit."""
    minor = release.split(".")[1]
    # releases before 1.17 were tagged kubernetes-1.N.P in the published repositories
    prefix = f"v0.{minor}." if int(minor) >= 17 else f"kubernetes-1.{minor}."
    listed = subprocess.run(
        ["git", "--git-dir", gitdir, "tag", "--list", f"{prefix}*"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    final = [t for t in listed if re.fullmatch(re.escape(prefix) + r"\d+", t)]
    if not final:
        raise SystemExit(f"{gitdir}: no tag {prefix}N")
    tag = max(final, key=lambda t: int(t.rsplit(".", 1)[1]))
    commit = subprocess.run(
        ["git", "--git-dir", gitdir, "rev-list", "-n1", tag],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return tag, commit


def generate(repos: dict[str, str], release: str) -> dict:
    tags = {repo: release_tag(gitdir, release) for repo, gitdir in repos.items()}
    declared: dict[str, dict] = dict(EXTERNAL)
    for pkg, (repo, path, _, files) in PACKAGES.items():
        tag = tags[repo][0]
        for file in files:
            shown = subprocess.run(
                ["git", "--git-dir", repos[repo], "show", f"{tag}:{path}/{file}"],
                capture_output=True,
                text=True,
            )
            if shown.returncode != 0:
                continue  # micro_time.go and fieldsv1_byte.go (1.36: the default build's FieldsV1) are not in every release
            for name, decl in declarations(shown.stdout, pkg).items():
                declared.setdefault(f"{pkg}.{name}", decl)
    types: dict[str, dict] = {}
    todo = [ROOT]
    while todo:
        name = todo.pop()
        if name in types:
            continue
        if name not in declared:
            raise SystemExit(
                f"type {name} is reachable from {ROOT} but not declared in the files read"
            )
        decl = declared[name]
        types[name] = decl
        for field in decl.get("fields", []):
            todo.extend(named_types(field[1]))
        todo.extend(named_types(decl.get("underlying", "")))
    packages = {pkg: spec[2] for pkg, spec in PACKAGES.items()} | EXTERNAL_PACKAGES
    return {
        "release": release,
        "sources": {
            f"github.com/kubernetes/{repo}": {"tag": tag, "commit": commit}
            for repo, (tag, commit) in sorted(tags.items())
        },
        "root": ROOT,
        "packages": packages,
        "types": dict(sorted(types.items())),
    }


def main(argv: list[str]) -> None:
    if len(argv) != 3:
        raise SystemExit(__doc__)
    api, apimachinery, release = argv
    data = generate({"api": api, "apimachinery": apimachinery}, release)
    text = json.dumps(data, indent=0, separators=(",", ":"))
    sys.stdout.write(re.sub(r"\n(?=[\]\"\d])", "", text) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
