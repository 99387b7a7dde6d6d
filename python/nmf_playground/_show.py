"""``show()``: the desktop app on arrays, returning what the user clicked."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np

from . import _core

_BINARY = "nmf-playground"


def find_app(build: bool = True) -> str:
    """The app's binary: ``$NMF_PLAYGROUND_BIN``, ``nmf-playground`` on the PATH, or the
    release build of the checkout this package was installed from (built with cargo when
    missing and ``build`` is true)."""
    env = os.environ.get("NMF_PLAYGROUND_BIN")
    if env:
        return env
    on_path = shutil.which(_BINARY)
    if on_path:
        return on_path
    for root in pathlib.Path(__file__).resolve().parents:
        if (root / "Cargo.toml").exists() and (root / "src" / "gui").is_dir():
            binary = root / "target" / "release" / _BINARY
            if not binary.exists() and build and shutil.which("cargo"):
                subprocess.run(["cargo", "build", "--release", "--bin", _BINARY], cwd=root,
                               check=True)
            if binary.exists():
                return str(binary)
    raise FileNotFoundError(
        "the nmf-playground app was not found: install it (cargo install --path . in the "
        "checkout), put it on the PATH, or set NMF_PLAYGROUND_BIN to its path"
    )


def show(X, y=None, *, triplets=None, labels=None, images=None, n_components=None,
         preprocess="auto", app_args=()):
    """Open the app on X (n_samples, n_features), coloured and scored by y (ground truth, for
    scoring only), with ``triplets`` ((t, 3): i closer to j than to q) and partial ``labels``
    (-1 for unknown) as its side information. Blocks until the window closes and returns
    ``(triplets, labels)`` as the user left them, so a notebook can go on with them::

        T, L = npg.show(X, y)
        npg.RPNMF(n_components=10).fit(X, triplets=T)

    ``labels`` has one entry per sample (-1 where none was given). ``images=(height, width)``
    says each sample is a grayscale picture of that shape (its features in row-major pixel
    order, as ``X.reshape(n, -1)`` makes them): the app then shows the samples and the basis
    as pictures and ``preprocess="auto"`` treats them as images. ``app_args`` are passed to
    the app.
    """
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    if X.ndim != 2:
        raise ValueError(f"X: expected a 2-D array (n_samples, n_features), got shape {X.shape}")
    stored = X
    if images is not None:
        h, w = (int(v) for v in images)
        if h < 1 or w < 1 or h * w != X.shape[1]:
            raise ValueError(f"images=({h}, {w}): {h}×{w} pixels, but X has {X.shape[1]} "
                             f"features per sample")
        stored = X.reshape(X.shape[0], h, w)  # a 3-D .npy is a stack of images to the app
    folder = pathlib.Path(tempfile.mkdtemp(prefix="nmf-playground-show-"))
    try:
        data = folder / "X.npy"
        np.save(data, stored)
        if y is not None:
            y = np.asarray(y)
            if y.shape != (X.shape[0],):
                raise ValueError(f"y: {y.size} labels for {X.shape[0]} samples")
            np.save(folder / "labels.npy", y.astype(np.int64))
        k = n_components or (len(np.unique(y)) if y is not None else min(10, *X.shape))
        t = None if triplets is None else np.ascontiguousarray(np.asarray(triplets), np.int64)
        lab = None if labels is None else np.ascontiguousarray(np.asarray(labels), np.int64)
        session = folder / "session.json"
        _core.write_session(str(session), str(data), int(k), t, lab, preprocess)
        done = folder / "clicked.json"
        command = [find_app(), "--session", str(session), "--save-on-exit", str(done),
                   *app_args]
        subprocess.run(command, check=True)
        if not done.exists():
            raise RuntimeError("the app closed without saving its session")
        return _core.read_constraints(str(done))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
