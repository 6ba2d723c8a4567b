"""auth: keyring by normalised URL, ITO_TOKEN override, loud refusal of unusable keyrings."""

from __future__ import annotations

from pathlib import Path

import keyring
import pytest
from keyring.backends import chainer, fail, null
from keyring.errors import KeyringLocked
from keyrings.alt.file import PlaintextKeyring
from pydantic import SecretStr

from ito_tui import auth
from tests.support.keyring import MemoryKeyring

pytestmark = pytest.mark.keyring
URL = "http://127.0.0.1:8741"


def test_store_get_delete_round_trip(memory_keyring: MemoryKeyring) -> None:
    auth.store_token(URL + "/", SecretStr("s3cret"))
    assert memory_keyring.store == {("ito-tui", URL): "s3cret"}
    token = auth.get_token(URL)
    assert isinstance(token, SecretStr) and token.get_secret_value() == "s3cret"
    assert "s3cret" not in repr(token) and "s3cret" not in str(token)
    assert auth.delete_token(URL) is True
    assert auth.get_token(URL) is None
    assert auth.delete_token(URL) is False


@pytest.mark.parametrize(
    ("url", "account"),
    [
        ("HTTPS://Ito.Example.COM:443/", "https://ito.example.com"),
        ("https://ito.example.com/v1", "https://ito.example.com"),
        ("http://127.0.0.1:80", "http://127.0.0.1"),
        ("http://localhost:8741/base/", "http://localhost:8741/base"),
        ("http://[::1]:8741", "http://[::1]:8741"),
        ("https://user:pw@host.example?x=1#f", "https://host.example"),
    ],
)
def test_account_is_the_normalised_url(url: str, account: str) -> None:
    assert auth.account_for(url) == account


def test_tokens_are_per_backend(memory_keyring: MemoryKeyring) -> None:
    auth.store_token("https://a.example", SecretStr("tok-a"))
    auth.store_token("https://b.example", SecretStr("tok-b"))
    assert auth.get_token("https://A.example/").get_secret_value() == "tok-a"  # type: ignore[union-attr]
    assert auth.get_token("https://b.example").get_secret_value() == "tok-b"  # type: ignore[union-attr]


def test_ito_token_overrides_the_keyring(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth.store_token(URL, SecretStr("from-keyring"))
    monkeypatch.setenv("ITO_TOKEN", " from-env \n")
    assert auth.get_token(URL).get_secret_value() == "from-env"  # type: ignore[union-attr]
    monkeypatch.setenv("ITO_TOKEN", "")
    assert auth.get_token(URL).get_secret_value() == "from-keyring"  # type: ignore[union-attr]


def test_ito_token_works_without_any_keyring(
    use_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyring.set_keyring(fail.Keyring())
    monkeypatch.setenv("ITO_TOKEN", "envtok")
    assert auth.get_token(URL).get_secret_value() == "envtok"  # type: ignore[union-attr]


@pytest.mark.parametrize("backend", [fail.Keyring, null.Keyring], ids=["fail", "null"])
def test_unusable_backends_raise_a_message_with_cause_and_remedies(
    use_keyring: None, backend: type[keyring.backend.KeyringBackend]
) -> None:
    keyring.set_keyring(backend())
    for call in (
        lambda: auth.get_token(URL),
        lambda: auth.store_token(URL, SecretStr("s3cret")),
        lambda: auth.delete_token(URL),
    ):
        with pytest.raises(auth.KeyringUnavailable) as info:
            call()
        message = str(info.value)
        assert backend.__module__ in message  # the cause
        for remedy in ("Secret Service", "gnome-keyring", "keyrings.alt", "ITO_TOKEN"):
            assert remedy in message
        assert "s3cret" not in message


def test_a_chainer_with_nothing_to_chain_is_unusable(
    use_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [])
    keyring.set_keyring(chainer.ChainerBackend())
    with pytest.raises(auth.KeyringUnavailable, match="chainer"):
        auth.get_token(URL)


def test_plaintext_keyring_is_refused_unless_chosen(
    use_keyring: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    kr = PlaintextKeyring()
    kr.file_path = str(tmp_path / "keyring_pass.cfg")
    keyring.set_keyring(kr)
    monkeypatch.setattr(keyring.core, "load_config", lambda: None)
    with pytest.raises(auth.KeyringUnavailable, match="plaintext"):
        auth.store_token(URL, SecretStr("s3cret"))
    assert not (tmp_path / "keyring_pass.cfg").exists()  # nothing written in clear
    # Chosen on purpose: the operator's call.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    auth.store_token(URL, SecretStr("s3cret"))
    assert auth.get_token(URL).get_secret_value() == "s3cret"  # type: ignore[union-attr]


def test_backend_errors_become_keyring_unavailable(use_keyring: None) -> None:
    class Locked(MemoryKeyring):
        def get_password(self, service: str, username: str) -> str | None:
            raise KeyringLocked("the collection is locked")

    keyring.set_keyring(Locked())
    with pytest.raises(auth.KeyringUnavailable, match="KeyringLocked"):
        auth.get_token(URL)


@pytest.mark.parametrize("bad", ["", "   ", "two words", "line\nbreak", "esc\x1b"])
def test_store_rejects_malformed_tokens(memory_keyring: MemoryKeyring, bad: str) -> None:
    with pytest.raises(ValueError, match="one line"):
        auth.store_token(URL, SecretStr(bad))
    assert memory_keyring.store == {}


def test_token_source_reads_once_until_forgotten(memory_keyring: MemoryKeyring) -> None:
    auth.store_token(URL, SecretStr("first"))
    source = auth.token_source(URL)
    assert source().get_secret_value() == "first"  # type: ignore[union-attr]
    memory_keyring.store[("ito-tui", URL)] = "second"
    assert source().get_secret_value() == "first"  # type: ignore[union-attr]
    source.forget()
    assert source().get_secret_value() == "second"  # type: ignore[union-attr]
    assert "second" not in repr(source)
