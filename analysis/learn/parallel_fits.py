"""Independent fits of a cross-validation on a rule's threads, results in task order.

The folds of a cross-validation (and a reward model's variants within a fold) are fits that
do not depend on one another. A fit spends its time in BLAS and in scikit-learn's compiled
loss, both of which release the GIL, so threads run them side by side and share the feature
matrix (processes would each copy it: gigabytes at 100 times the study). BLAS and OpenMP run
single-threaded inside every fit, whatever the thread count, so the rule's cores are not
oversubscribed and a fit's arithmetic never depends on how many threads the rule was given.
Each result lands at its task's position: the same bytes with one thread or many.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from threadpoolctl import threadpool_limits

T = TypeVar("T")


def _single_threaded(task: Callable[[], T]) -> T:
    """``task()`` with OpenMP at one thread: its thread count is the calling thread's own, so
    a new thread starts at the process default whatever the main thread set."""
    with threadpool_limits(limits=1, user_api="openmp"):
        return task()


def run_fits(tasks: Sequence[Callable[[], T]], threads: int = 1) -> list[T]:
    """Each task's result, in the order of ``tasks``, computed on up to ``threads`` threads."""
    with threadpool_limits(limits=1):  # BLAS's thread count is process-wide: set it once here
        if threads <= 1 or len(tasks) <= 1:
            return [task() for task in tasks]
        with ThreadPoolExecutor(max_workers=min(threads, len(tasks))) as pool:
            return list(pool.map(_single_threaded, tasks))
