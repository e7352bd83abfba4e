"""The web process: accept GitHub's webhook deliveries, store them, answer (``app.py``)."""
