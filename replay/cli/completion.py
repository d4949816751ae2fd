"""Shell completion: `kreplay completion bash|zsh|fish` prints a script; the script asks
`kreplay __complete WORD...` for the candidates of the last (partial) word, as cobra's
`__complete` does: verbs, subcommands, flags, kinds, the values of -o, and the names of
objects in the store (the one lookup that opens it; failures complete nothing)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from replay.cli.common import UsageError, out

# kubectl's names for the kinds kreplay knows, kept here so completing a kind imports nothing
KINDS = (
    "all", "controllerrevisions", "daemonsets", "deployments", "endpoints", "events", "namespaces", "nodes",
    "persistentvolumeclaims", "pods", "replicasets", "services", "statefulsets",
)
OUTPUTS = ("json", "yaml", "name", "wide", "jsonpath=", "jsonpath-file=", "jsonpath-as-json=", "custom-columns=", "custom-columns-file=")
# verbs whose positionals start with a kind
RESOURCE_VERBS = ("get", "describe", "delete", "label", "annotate", "scale", "patch", "set image", "why", "rollout history", "rollout status", "rollout undo", "rollout pause", "rollout resume", "rollout restart")
NODE_VERBS = ("cordon", "uncordon", "drain", "taint")

SCRIPTS = {
    "bash": """# kreplay completion for bash. Load it in this shell:
#   source <(kreplay completion bash)
# or for every shell: kreplay completion bash > /etc/bash_completion.d/kreplay
_kreplay() {
    local cur="${COMP_WORDS[COMP_CWORD]}"
    local IFS=$'\\n'
    COMPREPLY=( $(compgen -W "$(kreplay __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)" -- "$cur") )
}
complete -o default -F _kreplay kreplay
""",
    "zsh": """#compdef kreplay
# kreplay completion for zsh. Load it in this shell:
#   source <(kreplay completion zsh)
# or put it in a directory of $fpath as _kreplay.
_kreplay() {
    local -a candidates
    candidates=("${(@f)$(kreplay __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    compadd -- "${(@)candidates}"
}
if [ "$funcstack[1]" = "_kreplay" ]; then
    _kreplay "$@"
else
    compdef _kreplay kreplay
fi
""",
    "fish": """# kreplay completion for fish. Load it in this shell:
#   kreplay completion fish | source
# or for every shell: kreplay completion fish > ~/.config/fish/completions/kreplay.fish
function __kreplay_complete
    set -l tokens (commandline -opc) (commandline -ct)
    kreplay __complete $tokens[2..-1] 2>/dev/null
end
complete -c kreplay -f -a '(__kreplay_complete)'
""",
}


def script(shell: str) -> str:
    if shell not in SCRIPTS:
        raise UsageError(f"Unsupported shell type \"{shell}\".", verb="completion")
    return SCRIPTS[shell]


def complete(words: Sequence[str], verbs: Mapping[str, Any], families: Mapping[str, Sequence[str]]) -> int:
    """Print the candidates for the last of `words` (the command line after `kreplay`)."""
    from replay.cli.arguments import GLOBAL_FLAGS

    words = list(words) or [""]
    current, before = words[-1], words[:-1]
    global_flags = [n for f in GLOBAL_FLAGS for n in f.names if n.startswith("--")]
    positionals = [w for i, w in enumerate(before) if not w.startswith("-") and not _is_flag_value(before, i)]
    if before and before[-1] in ("-o", "--output"):
        return _print(OUTPUTS, current)
    if before and before[-1] in ("-n", "--namespace"):
        return _print(_names(["namespaces"]), current)
    if not positionals:
        if current.startswith("-"):
            return _print([*global_flags, "--help", "--version"], current)
        return _print(sorted([*verbs, "help", "options"]), current)
    verb = positionals[0]
    family = families.get(verb, ())
    if family and len(positionals) == 1:
        return _print(family, current)
    path = " ".join(positionals[:2]) if family else verb
    args = positionals[2:] if family else positionals[1:]
    if current.startswith("-"):
        return _print(sorted({*_flags_of(verbs, verb, positionals[1] if family else ""), *global_flags}), current)
    if path in RESOURCE_VERBS:
        if not args:
            return _print(KINDS, current)
        if "/" not in args[0]:
            return _print(_names(args[:1]), current)
    if path in NODE_VERBS and not (path == "taint" and len(args) > 1):
        return _print(_names(["nodes"]) if path != "taint" or args else ["nodes"], current)
    if path == "completion" and not args:
        return _print(sorted(SCRIPTS), current)
    return 0


def _is_flag_value(words: Sequence[str], i: int) -> bool:
    return i > 0 and words[i - 1] in ("-n", "--namespace", "--store", "-o", "--output", "-l", "--selector", "-f", "--filename", "--context", "--cluster", "--user", "--kubeconfig", "--replicas", "-p", "--patch", "--type", "--cascade", "--sort-by", "-L", "--label-columns", "--at", "--since", "--by", "--revision", "--to-revision", "--settle", "--lines")


def _print(candidates: Sequence[str], current: str) -> int:
    for candidate in candidates:
        if candidate.startswith(current):
            out(candidate)
    return 0


def _flags_of(verbs: Mapping[str, Any], verb: str, sub: str) -> list[str]:
    entry = verbs.get(verb)
    if entry is None:
        return []
    try:
        from replay.cli.arguments import _load

        command = _load(verb, entry.module, sub)
    except (ImportError, UsageError):
        return []
    return [s for a in command.parser._actions for s in a.option_strings if s.startswith("--")]


def _names(kind_args: Sequence[str]) -> list[str]:
    """Names of objects of a kind in the store (all namespaces), for TYPE NAME completion."""
    import os

    try:
        from replay.cli import resources
        from replay.cli.common import load_cluster, open_store

        kinds = resources.resolve_type(kind_args[0])
        args = type("Args", (), {"store": os.environ.get("KREPLAY_STORE")})()
        with open_store(args) as store:  # type: ignore[arg-type]
            cluster = load_cluster(store)
            source = resources.Source(cluster, store)
            return sorted({i.name for k in kinds for i in source.list(k, None)})
    except Exception:  # completion must never fail loudly
        return []
