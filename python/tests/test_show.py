"""`show()` through the real app: the arrays, triplets and labels go in through a session file,
and what the app holds when its window closes comes back. Needs a display: runs under a
virtual one (Xvfb) when it is installed, and is skipped otherwise."""

import os
import shutil
import subprocess
import time

import numpy as np
import pytest

import nmf_playground as npg


@pytest.fixture
def display():
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb): show() needs a display")
    number = 90 + os.getpid() % 100
    server = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", "1280x900x24"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{number}"
    yield
    if old is None:
        del os.environ["DISPLAY"]
    else:
        os.environ["DISPLAY"] = old
    server.terminate()
    server.wait()


def test_show_round_trips_the_side_information_through_the_app(display, cli, blobs, monkeypatch):
    monkeypatch.setenv("NMF_PLAYGROUND_BIN", cli)
    X, y = blobs
    T = np.array([[0, 1, 25], [2, 3, 30], [40, 41, 5]])
    L = np.full(60, -1)
    L[[0, 25, 45]] = [0, 1, 2]
    T2, L2 = npg.show(X, y, triplets=T, labels=L, app_args=["--close-when-loaded"])
    assert np.array_equal(T2, T)
    assert np.array_equal(L2, L)
    # Nothing given: nothing comes back.
    T3, L3 = npg.show(X, app_args=["--close-when-loaded"])
    assert T3.shape == (0, 3) and np.array_equal(L3, np.full(60, -1))
    # As a stack of 2×3 pictures (a 3-D .npy to the app), the side information still goes
    # through.
    T4, L4 = npg.show(X, triplets=T, images=(2, 3), app_args=["--close-when-loaded"])
    assert np.array_equal(T4, T)


def test_show_refuses_an_image_shape_that_does_not_fit_the_features(blobs):
    X, _ = blobs
    with pytest.raises(ValueError, match=r"images=\(4, 4\): 4×4 pixels, but X has 6"):
        npg.show(X, images=(4, 4))
