"""The GitHub adapter: webhook signatures, slash commands, repository settings, App auth.

Everything here is either pure (``signature``, ``commands``, ``settings``) or a thin adapter
over gidgethub (``auth``). Nothing in this package decides what a quest does; it turns what
GitHub sends into data the core can step on, and the core's effects into GitHub calls.
"""
