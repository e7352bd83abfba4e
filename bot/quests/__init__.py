"""Which quest an event is about, who may act on it, and which policy steps it: the one place
every concern asks (``quest_of``), bound to the quest's own repository and pull request."""
