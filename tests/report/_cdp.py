"""A tiny Chrome DevTools Protocol client over ``--remote-debugging-pipe``.

Test-only. Chromium reads commands on file descriptor 3 and writes replies and
events on file descriptor 4, each a JSON object terminated by a NUL byte, so
no websocket library and no TCP port are needed.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM_CANDIDATES = (
    "/usr/bin/chromium",
    "chromium",
    "chromium-browser",
    "google-chrome",
)


def find_chromium() -> str | None:
    """Return the path of a Chromium executable, or None."""
    for name in CHROMIUM_CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserUnavailable(RuntimeError):
    """Chromium is installed but cannot start here (an environment problem)."""


def _high_fd(fd: int) -> int:
    """Move ``fd`` to a close-on-exec descriptor numbered 10 or more."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    """A headless Chromium driven over the DevTools pipe."""

    def __init__(self, executable: str, timeout: float = 30.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="vareval-chromium-")
        # Keep the child's ends above fd 10 so that placing them on 3 and 4
        # cannot clobber one with the other.
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        to_child_r, from_child_w = (_high_fd(to_child_r), _high_fd(from_child_w))

        def _fds():  # runs in the child: commands on fd 3, replies on fd 4
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        args = [
            executable,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            "--mute-audio",
            f"--user-data-dir={self._profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self._proc = subprocess.Popen(
            args,
            preexec_fn=_fds,  # places the pipe on fds 3 and 4 before exec
            close_fds=False,  # the pipe fds are close-on-exec except 3 and 4
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    # -- transport -------------------------------------------------------
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from Chromium over the DevTools pipe")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None):
        """Send one command and return its result; events seen meanwhile are kept."""
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, *methods: str, timeout: float | None = None) -> dict:
        """Wait for an event named one of ``methods`` not returned before."""
        for event in self.events:
            if event.get("method") in methods and not event.get("_seen"):
                event["_seen"] = True
                return event
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            event = self._read_message(deadline)
            self.events.append(event)
            if event.get("method") in methods:
                event["_seen"] = True
                return event

    def drain(self, seconds: float) -> None:
        """Collect events for ``seconds`` more (late console messages, requests)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._read_message(deadline))
        except TimeoutError:
            pass

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:  # noqa: BLE001 - best effort; the process is ended below
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)
        shutil.rmtree(self._profile, ignore_errors=True)


def inspect_page(
    path: Path,
    screenshot: Path | None = None,
    width: int = 1200,
    max_height: int = 4000,
) -> dict:
    """Open a local HTML file in headless Chromium and report what happened.

    Returns a dict with ``console_errors`` (console messages of level error or
    warning, uncaught exceptions and log entries of level error), ``requests``
    (every URL the page asked for, including the document itself),
    ``dialogs`` (alert/confirm/prompt opened by scripts), ``text`` (the body's
    innerText) and ``title``.
    """
    executable = find_chromium()
    if executable is None:
        raise FileNotFoundError("chromium not found")
    browser = Browser(executable)
    try:
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})[
                "targetId"
            ]
        except (RuntimeError, TimeoutError, OSError) as exc:
            raise BrowserUnavailable(f"{executable} did not start: {exc}") from exc
        session = browser.send(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session=session)
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        url = Path(path).resolve().as_uri()
        browser.send("Page.navigate", {"url": url}, session=session)
        # A script that opens a dialog (alert) blocks the load: dismiss and go on.
        while (
            browser.wait_for("Page.loadEventFired", "Page.javascriptDialogOpening")[
                "method"
            ]
            != "Page.loadEventFired"
        ):
            browser.send(
                "Page.handleJavaScriptDialog", {"accept": True}, session=session
            )
        browser.drain(0.5)
        text = browser.send(
            "Runtime.evaluate",
            {"expression": "document.body.innerText", "returnByValue": True},
            session=session,
        )["result"]["value"]
        title = browser.send(
            "Runtime.evaluate",
            {"expression": "document.title", "returnByValue": True},
            session=session,
        )["result"]["value"]
        if screenshot is not None:
            metrics = browser.send("Page.getLayoutMetrics", session=session)
            height = int(metrics["cssContentSize"]["height"])
            shot = browser.send(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "captureBeyondViewport": True,
                    "clip": {
                        "x": 0,
                        "y": 0,
                        "width": width,
                        "height": min(height, max_height),
                        "scale": 1,
                    },
                },
                session=session,
            )
            Path(screenshot).write_bytes(base64.b64decode(shot["data"]))
        events = list(browser.events)
    finally:
        browser.close()

    errors, requests, dialogs = [], [], []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in (
            "error",
            "warning",
            "assert",
        ):
            errors.append(
                " ".join(
                    str(a.get("value", a.get("description")))
                    for a in params.get("args", [])
                )
            )
        elif method == "Runtime.exceptionThrown":
            errors.append(params["exceptionDetails"].get("text", "exception"))
        elif method == "Log.entryAdded" and params["entry"].get("level") in (
            "error",
            "warning",
        ):
            errors.append(params["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            requests.append(params["request"]["url"])
        elif method == "Page.javascriptDialogOpening":
            dialogs.append(params.get("message", ""))
    return {
        "console_errors": errors,
        "requests": requests,
        "dialogs": dialogs,
        "text": text,
        "title": title,
        "url": url,
    }
