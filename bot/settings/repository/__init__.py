"""A repository's settings: ``.github/questbot.yml`` — the schema, and its problems in words a
maintainer can act on (a part of ``bot.settings``)."""
