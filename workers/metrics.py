"""The workers' own metrics: jobs run by outcome, and jobs the reconciler's sweep enqueued
again. Defined here, beside the jobs that count them; /metrics (service/observability.py)
renders them with the service's own, from every process in multiprocess mode.

A process that ended leaves its files in the multiprocess folder (PROMETHEUS_MULTIPROC_DIR):
prometheus-client keeps one set per pid and `mark_process_dead` removes only the live gauges.
RQ forks a work horse per job, so every job used to leave three files behind and /metrics read
them all at every scrape. `archive_process` folds a dead process's samples into one archive
file per metric type (`counter_archive.db`, ...: counters and histograms added, gauges by
their mode) and deletes its files; the worker calls it for each horse it has reaped
(workers/supervisor.py). The folder then holds the live processes' files and the archives,
whatever the number of jobs served. Archiving and scraping take `archive_lock` (exclusive to
archive, shared to scrape), so a scrape never sees a process twice or not at all."""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
from typing import Iterator, Optional

from prometheus_client import Counter

JOBS_DONE = Counter("speculation_jobs_total", "Jobs run by the workers", ["kind", "outcome"])
RECONCILER_REPAIRS = Counter("speculation_reconciler_repairs_total", "Jobs the reconciler enqueued again")

ARCHIVE = "archive"
_LOCK_FILE = "archive.lock"      # not *.db: the collector reads only those
_ADDED = ("counter", "histogram", "summary")
_GAUGE_MERGE = {"sum": lambda old, new: old + new, "max": max, "min": min}


def multiprocess_dir() -> Optional[str]:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


@contextlib.contextmanager
def archive_lock(directory: str, shared: bool) -> Iterator[None]:
    """Held exclusively while a process's files are folded into the archives, shared while a
    scrape reads the folder."""
    fd = os.open(os.path.join(directory, _LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)   # closing releases the lock


def archive_process(pid: int, directory: Optional[str] = None) -> int:
    """Fold the samples of process `pid`, which has ended, into the archive files and delete
    its files; the number of files folded (0 outside multiprocess mode). Counters, histograms
    and summaries are added; `sum`, `max` and `min` gauges merged by their mode,
    `mostrecent` kept if newer; live gauges (a dead process counts for nothing) and `all`
    gauges (labelled by pid) dropped."""
    from prometheus_client.mmap_dict import MmapedDict

    directory = directory or multiprocess_dir()
    if not directory or not os.path.isdir(directory):
        return 0
    folded = 0
    with archive_lock(directory, shared=False):
        for path in glob.glob(os.path.join(directory, f"*_{int(pid)}.db")):
            parts = os.path.basename(path)[:-3].split("_")
            if parts[-1] != str(pid):
                continue
            typ = parts[0]
            if typ in _ADDED and len(parts) == 2:
                target, merge = f"{typ}_{ARCHIVE}.db", "add"
            elif typ == "gauge" and len(parts) == 3 and (parts[1] in _GAUGE_MERGE or parts[1] == "mostrecent"):
                target, merge = f"gauge_{parts[1]}_{ARCHIVE}.db", parts[1]
            else:   # live gauges, `all` gauges: nothing of a dead process to keep
                os.remove(path)
                continue
            try:
                samples = list(MmapedDict.read_all_values_from_file(path))
            except (OSError, RuntimeError):   # cut short by a kill while it grew: what it had is lost
                samples = []
            archive = MmapedDict(os.path.join(directory, target))
            try:
                for key, value, timestamp, _ in samples:
                    old, old_ts = archive.read_value(key)
                    if merge == "add":
                        archive.write_value(key, old + value, 0.0)
                    elif merge == "mostrecent":
                        if timestamp >= old_ts:
                            archive.write_value(key, value, timestamp)
                    else:
                        fresh = old_ts == 0.0 and old == 0.0
                        archive.write_value(key, value if fresh else _GAUGE_MERGE[merge](old, value), timestamp or 1.0)
            finally:
                archive.close()
            os.remove(path)
            folded += 1
    return folded
