"""Reading a command line as kubectl does, and printing help as kubectl prints it.

cobra lets global flags (`-n`, `--namespace`, `--context`, ...) appear before the verb and any
flag appear anywhere among a verb's arguments. argparse alone cannot: a name after a flag is
"unrecognized" and nothing may precede the subcommand. So the command line goes through three
steps here:
1. `split` walks the tokens before the verb, knowing only the global flags and their arity,
   finds the verb (and, for `rollout`/`set`, its subcommand) and moves those flags after it;
2. the verb's own parser, which also carries the global flags, reads the rest with argparse's
   `parse_intermixed_args` (flags and positionals in any order), after `--flag=true|false` on
   boolean flags has been turned into what argparse understands;
3. `change_cause` rebuilds the command line kubectl's `--record` would store.

Nothing here imports engine code: `--help`, `--version` and `completion` stay fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from replay.cli.common import Parents, Parser, UsageError, out

PROGRAM = "kreplay"
GLOBAL_HELP_LINE = f'Use "{PROGRAM} options" for a list of global command-line options (applies to all commands).'


class GlobalFlag(NamedTuple):
    names: tuple[str, ...]
    dest: str
    takes_value: bool
    default: Any
    help: str


def _store_help() -> str:
    return (
        "The event store: sqlite:PATH, memory: or postgresql://user@host:port/db[?schema=NAME] "
        "(default: $KREPLAY_STORE, else sqlite:kreplay.db)."
    )


# kubectl's global flags that mean something here, and those accepted as harmless no-ops so that
# a kubectl command line pasted as it is still runs (there is one simulated cluster, no server).
GLOBAL_FLAGS = (
    GlobalFlag(("-n", "--namespace"), "namespace", True, None, "If present, the namespace scope for this CLI request"),
    GlobalFlag(("--store",), "store", True, None, _store_help()),
    GlobalFlag(("--context",), "context", True, "", "Ignored: kreplay has one simulated cluster (accepted so kubectl command lines run as written)"),
    GlobalFlag(("--cluster",), "cluster", True, "", "Ignored, as --context"),
    GlobalFlag(("--user",), "user", True, "", "Ignored, as --context"),
    GlobalFlag(("--kubeconfig",), "kubeconfig", True, "", "Ignored, as --context"),
    GlobalFlag(("--request-timeout",), "request_timeout", True, "0", "Ignored: nothing here waits on a server"),
    GlobalFlag(("-v", "--v"), "verbosity", True, "0", "Ignored: number for the log level verbosity"),
)
_GLOBAL_BY_NAME = {name: flag for flag in GLOBAL_FLAGS for name in flag.names}
# -A is not global in kubectl, but `kreplay -A get pods` is too natural to refuse: moved like one
_MOVABLE_SWITCHES = ("-A", "--all-namespaces")


class Split:
    """What `split` found: the verb, the subcommand of a family verb (`rollout history`), and
    everything else, global flags first."""

    def __init__(self) -> None:
        self.verb = ""
        self.sub = ""
        self.tokens: list[str] = []
        self.help = False
        self.version = False


def _flag_name(token: str) -> str:
    if token.startswith("--"):
        return token.split("=", 1)[0]
    return token[:2]


def _takes_attached_value(token: str) -> bool:
    """`--namespace=x`, `-n=x`, `-nx`: the value is in the token itself."""
    if token.startswith("--"):
        return "=" in token
    return len(token) > 2


def split(argv: Sequence[str], families: Callable[[str], Sequence[str]]) -> Split:
    """Find the verb (and subcommand) among `argv`; move the global flags before it after it."""
    result = Split()
    moved: list[str] = []
    rest: list[str] = []
    i = 0
    tokens = list(argv)
    while i < len(tokens):
        token = tokens[i]
        if result.verb and (not families(result.verb) or result.sub):
            rest = tokens[i:]
            break
        if token == "--":
            rest = tokens[i:]
            break
        if token in ("-h", "--help"):
            result.help = True
            i += 1
            continue
        if token == "--version" and not result.verb:
            result.version = True
            i += 1
            continue
        if token.startswith("-") and token != "-":
            name = _flag_name(token)
            flag = _GLOBAL_BY_NAME.get(name)
            if flag is not None:
                if flag.takes_value and not _takes_attached_value(token):
                    if i + 1 >= len(tokens):
                        raise UsageError(f"flag needs an argument: {token!r} in {token}", verb=result.verb)
                    moved += [token, tokens[i + 1]]
                    i += 2
                else:
                    moved.append(token)
                    i += 1
                continue
            if name in _MOVABLE_SWITCHES and "=" not in token:
                moved.append(token)
                i += 1
                continue
            if not result.verb:
                raise UsageError(f"unknown flag: {token}" if token.startswith("--") else f"unknown shorthand flag: {token[1]!r} in {token}")
            # a verb's own flag before its subcommand (`rollout --revision 2 history`): keep it
            rest.append(token)
            i += 1
            continue
        if not result.verb:
            result.verb = token
        else:
            result.sub = token
        i += 1
    result.tokens = moved + rest
    return result


# --- the verb's parser ---------------------------------------------------------------------------


class NoOptDefault(argparse.Action):
    """A pflag flag with a NoOptDefVal: bare `--dry-run` means `const`, `--dry-run=server` sets
    the value; it never eats the next token (`delete --dry-run pod web` deletes pod web)."""

    def __init__(self, option_strings: Sequence[str], dest: str, default: Any = None, const: Any = None, help: str | None = None, metavar: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, const=const, help=help, metavar=metavar)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, self.const)

    def convert(self, name: str, value: str) -> Any:
        return value


class BoolFlag(NoOptDefault):
    """A pflag boolean: `--record`, `--record=true`, `--record=false`."""

    def __init__(self, option_strings: Sequence[str], dest: str, default: bool = False, help: str | None = None) -> None:
        super().__init__(option_strings, dest, default=default, const=True, help=help)

    def convert(self, name: str, value: str) -> Any:
        lowered = value.lower()
        if lowered not in _TRUE + _FALSE:
            raise UsageError(f'invalid argument "{value}" for "{name}" flag: strconv.ParseBool: parsing "{value}": invalid syntax')
        return lowered in _TRUE


_TRUE = ("true", "1", "t", "yes")
_FALSE = ("false", "0", "f", "no")


def _explicit_values(parser: Parser, tokens: list[str]) -> tuple[list[str], dict[str, Any]]:
    """`--flag=value` on a flag that takes no separate value (a boolean, `--dry-run`): argparse
    cannot take it, so it is set after parsing."""
    kept: list[str] = []
    overrides: dict[str, Any] = {}
    for i, token in enumerate(tokens):
        if token == "--":
            kept += tokens[i:]
            break
        if token.startswith("-") and "=" in token:
            name, value = token.split("=", 1)
            action = parser._option_string_actions.get(name)
            if isinstance(action, NoOptDefault):
                overrides[action.dest] = action.convert(name, value)
                continue
            if isinstance(action, argparse._StoreTrueAction):
                overrides[action.dest] = BoolFlag.convert(action, name, value)  # type: ignore[arg-type]
                continue
        kept.append(token)
    return kept, overrides


class _Subparsers:
    """What a verb module's `register(subparsers, parents)` receives: `add_parser` builds the
    parser of the command being run and hands back throwaway ones for its siblings, so a family
    module (`rollout`) registers every subcommand the same way whichever one runs."""

    def __init__(self, prog: str, wanted: str) -> None:
        self.prog = prog
        self.wanted = wanted
        self.chosen: Parser | None = None
        self.summaries: dict[str, str] = {}

    def add_parser(self, name: str, *, parents: Sequence[argparse.ArgumentParser] = (), help: str = "", description: str = "", epilog: str = "", usage: str = "", aliases: Sequence[str] = (), **_: Any) -> Parser:
        self.summaries[name] = help
        parser = new_parser(f"{self.prog} {name}" if self.prog else name, description=description or help, epilog=epilog, usage=usage)
        for parent in parents:
            if parent._actions:
                parser._add_container_actions(parent)
        if name == self.wanted or self.wanted in aliases:
            self.chosen = parser
        return parser


def new_parser(prog: str, *, description: str = "", epilog: str = "", usage: str = "") -> Parser:
    # conflict_handler="resolve": a verb's own flag of a global's name wins (serve's --kubeconfig)
    parser = Parser(prog=f"{PROGRAM} {prog}", add_help=False, allow_abbrev=False, description=description, epilog=epilog, usage=usage or None, conflict_handler="resolve")
    group = parser.add_argument_group("global")
    for flag in GLOBAL_FLAGS:
        group.add_argument(*flag.names, dest=flag.dest, default=flag.default, help=flag.help)
    return parser


def _parents() -> Parents:
    # the store and namespace flags are global: every parser has them already, so the option
    # groups verbs name in `parents=[...]` only document intent
    from replay.cli.common import add_write_options

    write = Parser(add_help=False)
    add_write_options(write)
    return Parents(store=Parser(add_help=False), namespace=Parser(add_help=False), write=write)


class Command(NamedTuple):
    verb: str
    sub: str
    parser: Parser
    module: Any
    subcommands: dict[str, str]


def _load(verb: str, module_name: str, sub: str) -> Command:
    module = importlib.import_module(f"replay.cli.verbs.{module_name}")
    family = tuple(getattr(module, "SUBCOMMANDS", {}) or ())
    wanted = sub if family else verb
    shim = _Subparsers("" if not family else verb, wanted)
    module.register(shim, _parents())
    if family:
        shim.summaries = {k: shim.summaries.get(k, "") for k in family}
    if shim.chosen is None:
        # `register` added one parser under another name (a module serving two verbs)
        raise UsageError(f'unknown command "{wanted}" for "{PROGRAM}{" " + verb if family else ""}"')
    return Command(verb, sub, shim.chosen, module, shim.summaries)


def load_all(verbs: Sequence[Any]) -> dict[str, Parser]:
    """The parser of every command, each verb module imported."""
    parsers: dict[str, Parser] = {}
    for verb in _verb_table(verbs).values():
        for sub in _FAMILIES.get(verb.name, ()) or ("",):
            command = _load(verb.name, verb.module, sub)
            parsers[f"{verb.name} {sub}".strip()] = command.parser
    return parsers


# --- running -------------------------------------------------------------------------------------


def _verb_table(verbs: Sequence[Any]) -> dict[str, Any]:
    from replay.cli import OTHER, Verb

    table = {}
    for v in verbs:
        if isinstance(v, str):  # a bare module name: the verb is named after its module
            v = Verb(v, v, OTHER, "")
        table[v.name] = v
    return table


def run(argv: list[str], verbs: Sequence[Any]) -> int:
    table = _verb_table(verbs)

    def families(verb: str) -> Sequence[str]:
        return _FAMILIES.get(verb, ())

    if argv[:1] == ["__complete"]:
        from replay.cli.completion import complete

        return complete(argv[1:], table, _FAMILIES)
    parts = split(argv, families)
    if parts.version:
        out(f"{PROGRAM} {version()}")
        return 0
    if not parts.verb or parts.verb == "help":
        if parts.verb == "help" and parts.sub:
            return run([parts.sub, "--help"], verbs)
        out(root_help(table.values()))
        return 0
    if parts.verb == "options":
        out(options_help())
        return 0
    verb = table.get(parts.verb)
    if verb is None:
        raise UsageError(_unknown_command(parts.verb, list(table)), verb="")
    family = families(verb.name)
    if family and not parts.sub:
        out(family_help(verb))
        return 0
    if family and parts.sub not in family:
        raise UsageError(f'unknown command "{parts.sub}" for "{PROGRAM} {verb.name}"', verb=verb.name)
    command = _load(verb.name, verb.module, parts.sub)
    if parts.help or any(t in ("-h", "--help") for t in parts.tokens if t != "--"):
        out(verb_help(command, verb))
        return 0
    tokens, overrides = _explicit_values(command.parser, parts.tokens)
    args = command.parser.parse_intermixed_args(tokens)
    for dest, value in overrides.items():
        setattr(args, dest, value)
    if args.namespace is None:
        args.namespace = "default"
        args.namespace_given = False
    else:
        args.namespace_given = True
    args.verb_path = [verb.name, *([parts.sub] if parts.sub else [])]
    args.change_cause = change_cause(command.parser, args.verb_path, parts.tokens)
    func = getattr(args, "func", None)
    if func is None:
        raise UsageError(f'"{PROGRAM} {" ".join(args.verb_path)}" has no handler', verb=verb.name)
    return int(func(args))


# verbs whose first positional word picks a subcommand; kept here so that finding the subcommand
# needs no import (the modules list the same names in SUBCOMMANDS)
_FAMILIES: dict[str, tuple[str, ...]] = {
    "rollout": ("history", "pause", "restart", "resume", "status", "undo"),
    "set": ("image",),
}


def _unknown_command(verb: str, known: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(verb, known, n=3, cutoff=0.6)
    hint = "".join(f"\t{c}\n" for c in close)
    text = f'unknown command "{verb}" for "{PROGRAM}"'
    if hint:
        text += f"\n\nDid you mean this?\n{hint.rstrip()}"
    return text


def change_cause(parser: Parser, verb_path: Sequence[str], tokens: Sequence[str]) -> str:
    """What `--record` stores, built as kubectl's parseCommandArguments builds it: the program,
    the positional arguments, then every flag given, in order, as `--long-name=value`. The store
    URL is left out (it is where the history lives, not part of the change, and may hold a
    password)."""
    positionals = list(verb_path)
    flags: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            positionals += tokens[i:]
            break
        if not token.startswith("-") or token == "-":
            positionals.append(token)
            continue
        if token.startswith("--"):
            name, has_value, value = token.partition("=")
        else:
            name, value = token[:2], token[2:].removeprefix("=")
            has_value = "=" if value else ""
        action = parser._option_string_actions.get(name)
        if action is None:
            continue
        long = next((s for s in action.option_strings if s.startswith("--")), name).lstrip("-")
        if action.nargs == 0:
            value = value if has_value else "true"
        elif not has_value:
            if i < len(tokens):
                value = tokens[i]
                i += 1
        if long == "store":
            continue
        flags.append(f" --{long}={value}")
    return PROGRAM + " " + " ".join(positionals) + "".join(flags)


def version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as _version

        return _version("kreplay")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


# --- help, in kubectl's layout --------------------------------------------------------------------


def root_help(verbs: Sequence[Any]) -> str:
    lines = [
        f"{PROGRAM} replays Kubernetes cluster histories through event-sourced controllers,",
        "with kubectl's verbs, flags and output over the simulated cluster.",
        "",
        " Find the history format and the command-line contract in docs/history-format.md.",
        "",
    ]
    groups: dict[str, list[Any]] = {}
    for v in verbs:
        groups.setdefault(v.group, []).append(v)
    for group, members in groups.items():
        lines.append(f"{group}:")
        for v in members:
            lines.append(f"  {v.name:<15} {v.summary}")
        lines.append("")
    lines += [
        "Usage:",
        f"  {PROGRAM} [flags] [options]",
        "",
        f'Use "{PROGRAM} <command> --help" for more information about a given command.',
        GLOBAL_HELP_LINE,
    ]
    return "\n".join(lines)


def family_help(verb: Any) -> str:
    module = importlib.import_module(f"replay.cli.verbs.{verb.module}")
    subs: dict[str, str] = dict(getattr(module, "SUBCOMMANDS", {}))
    lines = [getattr(module, "DESCRIPTION", verb.summary), ""]
    examples = getattr(module, "EXAMPLES", "")
    if examples:
        lines += ["Examples:", examples.rstrip("\n"), ""]
    lines.append("Available Commands:")
    for name in sorted(subs):
        lines.append(f"  {name:<14}{subs[name]}")
    lines += [
        "",
        "Usage:",
        f"  {PROGRAM} {verb.name} SUBCOMMAND [options]",
        "",
        f'Use "{PROGRAM} {verb.name} <command> --help" for more information about a given command.',
        GLOBAL_HELP_LINE,
    ]
    return "\n".join(lines)


def _default_text(action: argparse.Action) -> str:
    if isinstance(action, BoolFlag | argparse._StoreTrueAction):
        return "true" if action.default else "false"
    if isinstance(action, argparse._StoreFalseAction):
        return "true"
    if isinstance(action, argparse._AppendAction):
        return "[]"
    if isinstance(action, argparse._CountAction):
        return str(action.default or 0)
    if action.default is None or action.default == "":
        return "''"
    if isinstance(action.default, bool):
        return "true" if action.default else "false"
    if isinstance(action.default, int | float):
        return str(action.default)
    if isinstance(action.default, list):
        return "[" + ",".join(map(str, action.default)) + "]"
    return f"'{action.default}'"


def _options_block(actions: Sequence[argparse.Action]) -> list[str]:
    lines = []
    flagged = [a for a in actions if a.option_strings and a.help != argparse.SUPPRESS]
    flagged.sort(key=lambda a: next((s for s in a.option_strings if s.startswith("--")), a.option_strings[0]).lstrip("-"))
    for action in flagged:
        shorts = [s for s in action.option_strings if not s.startswith("--")]
        longs = [s for s in action.option_strings if s.startswith("--")]
        names = ", ".join(shorts + longs[:1]) if shorts else longs[0]
        lines.append(f"    {names}={_default_text(action)}:")
        lines.append(f"\t{action.help or ''}")
        lines.append("")
    return lines


def verb_help(command: Command, verb: Any) -> str:
    parser = command.parser
    own = [a for a in parser._actions if a.dest not in {f.dest for f in GLOBAL_FLAGS}]
    lines = [(parser.description or verb.summary).rstrip("\n"), ""]
    if parser.epilog:
        lines += ["Examples:", parser.epilog.rstrip("\n"), ""]
    options = _options_block(own)
    if options:
        lines += ["Options:", *options]
    usage = parser.usage or _usage_line(parser, command)
    lines += ["Usage:", f"  {usage}", "", GLOBAL_HELP_LINE]
    return "\n".join(lines)


def _usage_line(parser: Parser, command: Command) -> str:
    positionals = [a for a in parser._actions if not a.option_strings]
    words = []
    for a in positionals:
        name = (a.metavar or a.dest).upper() if isinstance(a.metavar or a.dest, str) else a.dest.upper()
        if a.nargs in ("*",):
            words.append(f"[{name}...]")
        elif a.nargs == "?":
            words.append(f"[{name}]")
        elif a.nargs == "+":
            words.append(f"{name}...")
        else:
            words.append(name)
    return " ".join([parser.prog, *words, "[options]"])


def options_help() -> str:
    lines = ["The following options can be passed to any command:", ""]
    parser = argparse.ArgumentParser(add_help=False)
    for flag in GLOBAL_FLAGS:
        parser.add_argument(*flag.names, dest=flag.dest, default=flag.default, help=flag.help)
    lines += _options_block(parser._actions)
    return "\n".join(lines).rstrip("\n")


def print_usage_error(exc: UsageError) -> None:
    sys.stderr.write(exc.render())
