"""Independent fits on threads: results in task order, BLAS single-threaded inside."""

from __future__ import annotations

import time

from threadpoolctl import threadpool_info

from analysis.learn.parallel_fits import run_fits


def test_results_keep_the_task_order_whatever_finishes_first() -> None:
    def task(i: int) -> int:
        time.sleep(0.02 * (4 - i))  # the first task finishes last
        return i

    tasks = [lambda i=i: task(i) for i in range(4)]
    assert run_fits(tasks, threads=2) == run_fits(tasks, threads=1) == [0, 1, 2, 3]


def test_blas_and_openmp_run_one_thread_inside_every_fit() -> None:
    def pools() -> set[int]:
        return {pool["num_threads"] for pool in threadpool_info()}

    assert run_fits([pools, pools], threads=2) == [{1}, {1}]
    assert run_fits([pools], threads=1) == [{1}]
