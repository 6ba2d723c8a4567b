"""A file-backed keyring backend for tests, selectable with PYTHON_KEYRING_BACKEND.

`PYTHON_KEYRING_BACKEND=cli.fake_keyring.FileKeyring` (with `tests/` on
PYTHONPATH) and `ITO_TEST_KEYRING_FILE=/tmp/.../keyring.json` make a CLI
subprocess store its token in a throw-away JSON file, so login → whoami →
logout can be checked across processes without touching a real keyring.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

ENV = "ITO_TEST_KEYRING_FILE"
CLASS_PATH = "cli.fake_keyring.FileKeyring"


class FileKeyring(KeyringBackend):
    """Stores passwords as JSON `{service: {account: password}}` in $ITO_TEST_KEYRING_FILE."""

    priority = 1.0

    @property
    def path(self) -> Path:
        return Path(os.environ[ENV])

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        return data if isinstance(data, dict) else {}

    def _save(self, data: dict[str, dict[str, str]]) -> None:
        self.path.write_text(json.dumps(data))

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(service, {}).get(username)

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data.setdefault(service, {})[username] = password
        self._save(data)

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        if username not in data.get(service, {}):
            raise PasswordDeleteError("no such password")
        del data[service][username]
        self._save(data)
