"""Reading a command line as kubectl does: global flags before or after the verb, flags among
positionals, pflag booleans, `--record`'s change-cause, help and completion, and a start-up that
imports no engine code for `--help`, `--version` and `completion`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from replay.cli import VERBS, main
from replay.cli.arguments import _FAMILIES, change_cause, split
from replay.cli.common import UsageError
from tests.conftest import debian_tool


def families(verb: str) -> tuple[str, ...]:
    return _FAMILIES.get(verb, ())


@pytest.mark.parametrize(
    ("argv", "verb", "sub", "tokens"),
    [
        pytest.param(["-n", "kube-system", "get", "ds"], "get", "", ["-n", "kube-system", "ds"], id="namespace-before-the-verb-moves-after-it"),
        pytest.param(["--namespace=kube-system", "get", "ds"], "get", "", ["--namespace=kube-system", "ds"], id="long-flag-with-equals"),
        pytest.param(["-nkube-system", "get"], "get", "", ["-nkube-system"], id="short-flag-with-attached-value"),
        pytest.param(["--store", "memory:", "-A", "get", "pods"], "get", "", ["--store", "memory:", "-A", "pods"], id="store-and-all-namespaces-before-the-verb"),
        pytest.param(["get", "ds", "-n", "kube-system", "fluentd"], "get", "", ["ds", "-n", "kube-system", "fluentd"], id="flags-after-the-verb-stay-where-they-are"),
        pytest.param(["rollout", "history", "daemonset", "x", "-n", "kube-system"], "rollout", "history", ["daemonset", "x", "-n", "kube-system"], id="family-verb-finds-its-subcommand"),
        pytest.param(["-n", "kube-system", "rollout", "status", "ds/x"], "rollout", "status", ["-n", "kube-system", "ds/x"], id="global-flag-before-a-family-verb"),
        pytest.param(["--context", "prod", "get", "pods"], "get", "", ["--context", "prod", "pods"], id="kubectl-no-op-globals-are-accepted"),
    ],
)
def test_split_finds_the_verb_and_moves_global_flags(argv: list[str], verb: str, sub: str, tokens: list[str]) -> None:
    parts = split(argv, families)
    assert (parts.verb, parts.sub, parts.tokens) == (verb, sub, tokens)


def test_an_unknown_flag_before_the_verb_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown flag: --bogus"):
        split(["--bogus", "get"], families)


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        pytest.param(["gte"], 2, 'unknown command "gte" for "kreplay"\n\nDid you mean this?\n\tget', id="a-typo-suggests-the-verb"),
        pytest.param(["get", "--bogus"], 2, "error: unknown flag: --bogus\nSee 'kreplay get --help' for usage.", id="unknown-flag-names-the-verb-help"),
        pytest.param(["get", "-Z"], 2, "error: unknown shorthand flag: 'Z' in -Z", id="unknown-shorthand-flag"),
        pytest.param(["get"], 2, "error: Required resource not specified.", id="get-without-a-type"),
        pytest.param(["rollout", "bogus"], 2, 'unknown command "bogus" for "kreplay rollout"', id="unknown-subcommand"),
        pytest.param(["scale", "deploy/x"], 2, 'required flag(s) "replicas" not set', id="scale-needs-replicas"),
        pytest.param(["scale", "deploy/x", "--replicas=-1"], 2, "COUNT must be greater than or equal to 0", id="negative-replicas"),
        pytest.param(["scale", "deploy/x", "--replicas=2147483648"], 2, "int32", id="replicas-beyond-int32"),
        pytest.param(["set", "image", "deploy/x"], 2, "at least one image update is required", id="set-image-needs-an-image"),
        pytest.param(["label", "pods", "x"], 2, "at least one label update is required", id="label-needs-a-change"),
        pytest.param(["label", "pods", "a=b", "x"], 2, "all resources must be specified before label changes: x", id="label-pairs-after-resources"),
        pytest.param(["taint", "nodes", "n1"], 2, "at least one taint update is required", id="taint-needs-a-taint"),
        pytest.param(["delete", "pods", "x", "--cascade=sideways"], 2, 'invalid cascade value (sideways). Must be "background", "foreground", or "orphan".', id="bad-cascade"),
        pytest.param(["get", "pods", "--no-headers=maybe"], 2, 'invalid argument "maybe" for "--no-headers" flag', id="a-boolean-flag-takes-true-or-false-only"),
        pytest.param(["completion", "tcsh"], 2, 'Unsupported shell type "tcsh".', id="unsupported-shell"),
        pytest.param(["advance"], 2, "give either a DURATION", id="advance-needs-a-duration"),
    ],
)
def test_usage_errors_in_kubectls_words_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], code: int, text: str) -> None:
    got, _, err = kreplay(capsys, *args, "--store", "memory:")
    assert (got, text in err, "Traceback" in err) == (code, True, False), err


def test_root_help_lists_every_verb_under_kubectls_groups(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = kreplay(capsys, "--help")
    assert code == 0
    assert "Basic Commands (Intermediate):\n  get             Display one or many resources\n" in out
    for verb in VERBS:
        assert f"  {verb.name:<15} {verb.summary}\n" in out
    assert out.rstrip().endswith('Use "kreplay options" for a list of global command-line options (applies to all commands).')
    assert kreplay(capsys)[1] == out  # no arguments at all: the same help, exit 0


@pytest.mark.parametrize("verb", [v.name for v in VERBS if v.name not in _FAMILIES] + [f"{f} {s}" for f, subs in _FAMILIES.items() for s in subs])
def test_every_verb_has_help_with_examples_options_and_usage(capsys: pytest.CaptureFixture[str], verb: str) -> None:
    code, out, _ = kreplay(capsys, *verb.split(), "--help")
    assert code == 0
    assert "\nExamples:\n  # " in out and f"kreplay {verb}" in out.split("Examples:")[1]
    assert f"\nUsage:\n  kreplay {verb}" in out


def test_help_options_are_laid_out_as_kubectls(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = kreplay(capsys, "get", "--help")
    assert "    -A, --all-namespaces=false:\n\tIf present, list the requested object(s) across all namespaces." in out
    assert "    --sort-by='':\n\tIf non-empty, sort list types" in out
    assert "--store" not in out.split("Options:")[1]  # globals are listed by `kreplay options`
    _, options, _ = kreplay(capsys, "options")
    assert "    -n, --namespace='':\n" in options and "    --store=''" in options


def test_families_without_a_subcommand_list_them(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = kreplay(capsys, "rollout")
    assert code == 0 and "Available Commands:\n  history       View rollout history\n" in out


def test_version_forms(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = kreplay(capsys, "--version")
    assert code == 0 and out.startswith("kreplay ") and out.count("\n") == 1
    code, out, _ = kreplay(capsys, "version", "-o", "json")
    info = json.loads(out)["kreplayVersion"]
    assert code == 0 and info["gitVersion"].startswith("v") and info["historyFormat"] == "1.1"
    assert kreplay(capsys, "version")[1].startswith("kreplay Version: v")


def parse(tokens: list[str], verb: str = "set image") -> str:
    from replay.cli.arguments import _load

    command = _load(verb.split()[0], verb.split()[0], verb.split()[1] if " " in verb else "")
    return change_cause(command.parser, verb.split(), tokens)


@pytest.mark.parametrize(
    ("verb", "tokens", "want"),
    [
        pytest.param(
            "set image",
            ["ds/fluentd-elasticsearch", "fluentd-elasticsearch=k8s.gcr.io/fluentd-elasticsearch:v2.2.0", "--record", "-n=kube-system"],
            "kreplay set image ds/fluentd-elasticsearch fluentd-elasticsearch=k8s.gcr.io/fluentd-elasticsearch:v2.2.0 --record=true --namespace=kube-system",
            id="the-seed-daemonset-command-as-kubectl-records-it",
        ),
        pytest.param("apply", ["-f", "web-app.yaml", "--record=true"], "kreplay apply --filename=web-app.yaml --record=true", id="the-seed-apply-short-flag-becomes-its-long-name"),
        pytest.param("apply", ["-f", "a.yaml", "-f", "b.yaml", "--record"], "kreplay apply --filename=a.yaml --filename=b.yaml --record=true", id="repeated-flags-in-order"),
        pytest.param("scale", ["deploy/x", "--replicas", "3", "--store", "postgresql://u:secret@h/db", "--record"], "kreplay scale deploy/x --replicas=3 --record=true", id="the-store-url-is-never-recorded"),
    ],
)
def test_change_cause_as_parseCommandArguments(verb: str, tokens: list[str], want: str) -> None:
    assert parse(tokens, verb) == want


def test_help_version_and_completion_import_no_engine_code() -> None:
    """Start-up: these must not pay for engine, msgspec or the store (figures in `make bench`)."""
    code = (
        "import sys, io, contextlib\n"
        "from replay.cli import main\n"
        "for argv in (['--help'], ['--version'], ['completion', 'bash'], ['get', '--help'], ['rollout', 'history', '--help']):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main(argv) == 0, argv\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('engine', 'msgspec', 'projections', 'eventsourcing', 'yaml')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        pytest.param(["ge"], ["get"], id="verbs"),
        pytest.param(["rollout", "h"], ["history"], id="subcommands"),
        pytest.param(["get", "daemon"], ["daemonsets"], id="kinds"),
        pytest.param(["get", "pods", "-o", "j"], ["json", "jsonpath=", "jsonpath-file=", "jsonpath-as-json="], id="output-formats"),
        pytest.param(["get", "pods", "--sort"], ["--sort-by"], id="verb-flags"),
        pytest.param(["completion", ""], ["bash", "fish", "zsh"], id="shells"),
    ],
)
def test_completion_candidates(capsys: pytest.CaptureFixture[str], words: list[str], expected: list[str]) -> None:
    code, out, _ = kreplay(capsys, "__complete", *words)
    assert code == 0 and out.split() == expected


def test_completion_names_objects_in_the_store(capsys: pytest.CaptureFixture[str], tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    store = f"sqlite:{tmp_path / 'k.db'}"
    history = Path(__file__).resolve().parent.parent / "examples" / "web-app-deployment.jsonl"
    assert kreplay(capsys, "replay", str(history), "--lines", "1-4", "--store", store)[0] == 0
    monkeypatch.setenv("KREPLAY_STORE", store)
    assert kreplay(capsys, "__complete", "get", "deploy", "w")[1] == "web-app\n"
    assert kreplay(capsys, "__complete", "cordon", "")[1] == "node-1\nnode-2\n"


def test_the_bash_script_completes_through_kreplay(tmp_path) -> None:
    """Source the script in a real bash and ask it to complete `kreplay ge`."""
    script = subprocess.run([sys.executable, "-m", "replay.cli", "completion", "bash"], capture_output=True, text=True, check=True).stdout
    shim = tmp_path / "kreplay"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m replay.cli \"$@\"\n")
    shim.chmod(0o755)
    test = script + '\nCOMP_WORDS=(kreplay ge); COMP_CWORD=1; _kreplay; echo "${COMPREPLY[@]}"\n'
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "KREPLAY_STORE": "memory:"}
    result = subprocess.run([debian_tool("bash"), "-c", test], capture_output=True, text=True, env=env, check=True)
    assert result.stdout.split() == ["get"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_the_other_scripts_parse_in_their_shell(shell: str) -> None:
    binary = debian_tool(shell)
    script = subprocess.run([sys.executable, "-m", "replay.cli", "completion", shell], capture_output=True, text=True, check=True).stdout
    flag = "-n" if shell == "zsh" else "--no-execute"
    assert subprocess.run([binary, flag], input=script, capture_output=True, text=True).returncode == 0
