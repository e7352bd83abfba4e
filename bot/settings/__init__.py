"""``.github/questbot.yml``: the schema, and its problems in words a maintainer can act on."""
