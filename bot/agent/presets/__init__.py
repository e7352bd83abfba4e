"""Coding-agent CLIs as presets of the ``command`` agent (``agent.preset`` in the settings).

A preset turns the stage's ``AgentTask`` into one prompt (``prompt``), starts the CLI in its
documented non-interactive mode inside the sandbox (``clis``), and turns what the CLI prints
or writes back into the stage's ``AgentReply`` with the spend it reported (``replies``). The
stage then checks that reply like any agent's: claims against the checkout, the reproduction
on the base, the patch by the repository's checks.
"""

from bot.agent.presets.clis import PRESETS, Preset, Ran
from bot.agent.presets.prompt import prompt
from bot.agent.presets.replies import reply_in, usage

__all__ = ["PRESETS", "Preset", "Ran", "prompt", "reply_in", "usage"]
