"""One module per `kreplay` verb (or per verb family sharing a subcommand, like `rollout`),
named after the verb (`set image` goes in `set.py`; a Python keyword takes a trailing
underscore, `import_.py`). Each exposes `register(subparsers, parents)` and its handler
`cmd_<verb>(args) -> int` and is listed once in `replay.cli.VERBS`. A verb may import
`replay.cli.common`, the printers and anything below the CLI, but no other verb: what two verbs
share goes in `common` or below the CLI.
"""
