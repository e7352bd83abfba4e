"""What operators see of questbot: structured logs and Prometheus metrics."""
