"""The tests' keyrings: `MemoryKeyring` in the test's process, `FileKeyring` across processes.

Both behave as keyring's backends do (`keyring.backend.KeyringBackend`): `get_password`
gives None for an absent entry, `delete_password` raises `PasswordDeleteError` for one
(so a test sees what a real keyring would make the code under test handle).

`PYTHON_KEYRING_BACKEND=tests.support.keyring.FileKeyring` (`CLASS_PATH`) and
`ITO_TEST_KEYRING_FILE=/tmp/.../keyring.json` (`ENV`) make a CLI subprocess keep its token
in a throw-away JSON file, so login → whoami → logout can be checked across processes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

ENV = "ITO_TEST_KEYRING_FILE"
CLASS_PATH = "tests.support.keyring.FileKeyring"


class MemoryKeyring(KeyringBackend):
    """A keyring in a dict: what the login flow stores can be read back from `store`."""

    priority = 1  # over keyring's classproperty: below any real backend, above the fail one

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # keyring's __init__ is unannotated
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.store:
            raise PasswordDeleteError("no such password")
        del self.store[(service, username)]


class FileKeyring(KeyringBackend):
    """Passwords as JSON `{service: {account: password}}` in the file $ITO_TEST_KEYRING_FILE."""

    priority = 1  # over keyring's classproperty: below any real backend, above the fail one

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
