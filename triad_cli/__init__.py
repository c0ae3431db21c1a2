"""The `triad` command: the dispatcher above every part of the project (`triad_cli.main`).

Each part registers its own subcommands next to its code (`triad_dataset.commands`, `ark_dataset.commands`,
`model_adapters.commands`, `model_adapters.captioners.commands`, `spaces_app.commands`); the commands that work on
either benchmark's folder (`triad validate`, `triad publish`) live here, in `triad_cli.folders`, so no part imports
another part above it (scripts/import_graph.py).
"""
