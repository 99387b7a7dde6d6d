"""A long fit runs without the GIL and stops on Ctrl+C."""

import _thread
import threading
import time

import numpy as np
import pytest

import nmf_playground as npg


def test_ctrl_c_stops_a_long_fit():
    rng = np.random.default_rng(0)
    X = rng.random((3000, 400))
    est = npg.NMF(n_components=20, max_iter=100000, tol=0.0, n_threads=1)
    timer = threading.Timer(0.5, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        est.fit(X)
    assert time.monotonic() - start < 5.0


def test_other_threads_run_during_a_fit():
    rng = np.random.default_rng(0)
    X = rng.random((2000, 300))
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    npg.NMF(n_components=10, max_iter=150, tol=0.0, n_threads=1).fit(X)
    stop.set()
    t.join()
    assert len(ticks) > 10, "the GIL was held during the fit"
