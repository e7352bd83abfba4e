"""The worker process: intake of deliveries, triage and related quests, the effect runner's
adapters, and the projection onto GitHub — assembled in one place (``assembly.py``)."""
