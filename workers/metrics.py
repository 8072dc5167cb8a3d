"""The workers' own metrics: jobs run by outcome, and jobs the reconciler's sweep enqueued
again. Defined here, beside the jobs that count them; /metrics (service/observability.py)
renders them with the service's own, from every process in multiprocess mode."""

from __future__ import annotations

from prometheus_client import Counter

JOBS_DONE = Counter("speculation_jobs_total", "Jobs run by the workers", ["kind", "outcome"])
RECONCILER_REPAIRS = Counter("speculation_reconciler_repairs_total", "Jobs the reconciler enqueued again")
