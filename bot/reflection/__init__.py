"""Reflection waves: after a run of bad endings new quests wait until a reflection passes its
review — questbot's own, written and reviewed by its model, or a maintainer's ``/reflect``."""
