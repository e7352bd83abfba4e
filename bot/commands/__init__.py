"""What people say to questbot: commands in comments and the check run's buttons — read from
webhooks, authorized in the quest's repository, applied, and answered once in people's words."""
