"""Failing checks and labelled issues: read from webhooks and made into quests — one red CI
run, one quest, however many times GitHub tells it."""
