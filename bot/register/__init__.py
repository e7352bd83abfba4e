"""``python -m bot register``: make questbot's GitHub App from ``app.yml`` in one command.

A small local page (``page``) posts the manifest to GitHub; GitHub sends the browser back to
the page's callback with a code, which is exchanged for the App's credentials
(``bot.github.manifest``) and saved (``credentials``): the private key in a file only its owner
can read, the App's id, slug, webhook secret and the key's path in ``.env``, which
``bot.settings.process`` reads under the environment. ``options`` checks the command's
settings, every problem at once.
"""
