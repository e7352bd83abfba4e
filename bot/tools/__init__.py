"""Offline tools over the pure core: replay, journal authoring, the lifecycle docs."""
