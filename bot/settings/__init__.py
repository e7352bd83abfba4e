"""Every setting questbot reads, in two parts named apart, at the bottom of the house:

- ``bot.settings.process`` — **the process's settings**: the environment laid over ``.env``
  (``GITHUB_*``, ``REDIS_URL``, ``PORT``, ``QUESTBOT_*``), read once when a process starts and
  checked whole (``load_config``). The operator's; never a repository's.
- ``bot.settings.repository`` — **a repository's settings**: its ``.github/questbot.yml``, its
  schema, its JSON Schema and its problems in a maintainer's words. The maintainers'; read
  per repository, per event.

Both are plain values and checks: this room imports nothing of questbot's but the core's
policy and the error tree, so every other room may read settings (``tests/test_architecture.py``
holds it at floor 2). The values a setting holds (``SandboxPolicy``, ``Wire``, ``Prices``) are
defined here and used by the rooms that act on them.
"""
