"""Which variables are questbot's settings, and a misspelt one named with a did-you-mean (a
part of ``bot.settings.process``).

pydantic-settings ignores a variable no field reads, so ``QUESTBOT_MODLE=gpt-4.1`` used to run
questbot without a model and without a word. Every ``QUESTBOT_*`` variable the process sees
(in the environment or in ``.env``) that no setting reads is named at start, with the nearest
setting's name when one is close; so is any name in ``.env`` close to a setting's (the file is
questbot's own: ``GITHUB_APP_IDD`` there is a typo). Warnings, not errors: the variable may be
meant for a newer questbot.

The variables of questbot's development tools (the test stack, the chaos run, the scripts'
download cache) share the prefix and are no settings: ``DEVELOPMENT`` names them.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from pathlib import Path

PREFIX = "QUESTBOT_"
DEVELOPMENT = ("QUESTBOT_CACHE", "QUESTBOT_CHAOS_", "QUESTBOT_FUZZ_", "QUESTBOT_PROPERTY_",
               "QUESTBOT_PLAYGROUND", "QUESTBOT_TEST_")
"""Read by ``scripts/`` and ``testing/`` (never by ``bot/``): not warned about."""
COMMANDS_READ = frozenset({"GITHUB_URL"})
"""Read by a command, not by the processes: ``register``'s GitHub Enterprise host."""


def reads(*names: str, where: str = "the environment over ./.env") -> str:
    """A command's ``--help`` epilog: the settings it reads, by name, and from where."""
    return f"Settings it reads, from {where}: {', '.join(names)}."


def unknown_settings(values: Mapping[str, str], origins: Mapping[str, Path],
                     known: Collection[str]) -> list[str]:
    """A sentence for each variable in ``values`` that looks meant for questbot and that no
    setting in ``known`` reads: ``QUESTBOT_*`` ones, and those from a file (``origins``) close
    to a setting's name."""
    found: list[str] = []
    for name in sorted(values):
        if name in known or name in COMMANDS_READ or name.startswith(DEVELOPMENT):
            continue
        near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        if not name.startswith(PREFIX) and not (name in origins and near):
            continue
        where = f" (in {origins[name]})" if name in origins else ""
        found.append(f"{name}{where} is not a setting questbot reads; "
                     + (f"did you mean {near[0]}?" if near else
                        "the README's table under \"Setting up\" lists every setting"))
    return found
